/* list.h - intrusive circular doubly-linked list.
 *
 * Embed a struct list_node in each element and keep a struct list_node as
 * the head.  No allocation, O(1) insert and remove.  list_for_each_safe
 * allows removing the current element while iterating.
 */
#ifndef CANOPY_UTIL_LIST_H
#define CANOPY_UTIL_LIST_H

#include <stddef.h>
#include <stdbool.h>

struct list_node {
    struct list_node *next;
    struct list_node *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }

static inline void list_init (struct list_node *head)
{
    head->next = head->prev = head;
}

static inline bool list_empty (const struct list_node *head)
{
    return head->next == head;
}

static inline void list_node_init (struct list_node *n)
{
    n->next = n->prev = n;
}

static inline bool list_node_linked (const struct list_node *n)
{
    return n->next != n;
}

static inline void list__insert (struct list_node *n,
                                 struct list_node *prev,
                                 struct list_node *next)
{
    next->prev = n;
    n->next = next;
    n->prev = prev;
    prev->next = n;
}

static inline void list_add_head (struct list_node *head, struct list_node *n)
{
    list__insert (n, head, head->next);
}

static inline void list_add_tail (struct list_node *head, struct list_node *n)
{
    list__insert (n, head->prev, head);
}

static inline void list_del (struct list_node *n)
{
    n->next->prev = n->prev;
    n->prev->next = n->next;
    n->next = n->prev = n;
}

static inline size_t list_length (const struct list_node *head)
{
    size_t count = 0;
    for (const struct list_node *n = head->next; n != head; n = n->next)
        count++;
    return count;
}

#define list_entry(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof (type, member)))

#define list_first_entry(head, type, member) \
    (list_empty (head) ? NULL : list_entry ((head)->next, type, member))

#define list_for_each(pos, head) \
    for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_safe(pos, tmp, head) \
    for (pos = (head)->next, tmp = pos->next; pos != (head); \
         pos = tmp, tmp = pos->next)

#endif
