/* loadbatch.c - see loadbatch.h
 *
 * Refs have a fixed length (BLOBREF_STRLEN), so a request is an array of
 * BLOBREF_STRLEN + 1 byte lines and the queue an array of fixed-size
 * slots (a ring that doubles when full).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/errprintf.h"
#include "loadbatch.h"

enum { LINE = BLOBREF_STRLEN + 1 };

int loadbatch_foreach (const void *buf, size_t len, loadbatch_ref_f fn, void *arg,
                       canopy_error_t *error)
{
    const char *p = buf;
    char ref[BLOBREF_MAX];
    size_t n;

    if ((len > 0 && !buf) || len == 0 || len % LINE != 0
        || (n = len / LINE) > LOAD_BATCH_MAX) {
        errno = EPROTO;
        return errprintf (error, "content.load-batch takes 1 to %d blobrefs, "
                          "one per line", LOAD_BATCH_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        const char *line = p + i * LINE;
        memcpy (ref, line, BLOBREF_STRLEN);
        ref[BLOBREF_STRLEN] = '\0';
        if (line[BLOBREF_STRLEN] != '\n' || blobref_validate (ref) < 0) {
            errno = EPROTO;
            return errprintf (error, "content.load-batch: line %zu is not a blobref",
                              i + 1);
        }
    }
    for (size_t i = 0; fn && i < n; i++) {
        memcpy (ref, p + i * LINE, BLOBREF_STRLEN);
        ref[BLOBREF_STRLEN] = '\0';
        if (fn (ref, arg) < 0)
            return -1;
    }
    return (int)n;
}

struct loadq {
    char (*slot)[BLOBREF_STRLEN];   /* ring of queued refs */
    size_t cap, head, count;
    int inflight;
};

loadq_t *loadq_create (void)
{
    loadq_t *q = calloc (1, sizeof (*q));
    if (!q)
        errno = ENOMEM;
    return q;
}

void loadq_destroy (loadq_t *q)
{
    if (q) {
        int saved_errno = errno;
        free (q->slot);
        free (q);
        errno = saved_errno;
    }
}

static int grow (loadq_t *q)
{
    size_t cap = q->cap ? q->cap * 2 : 64;
    char (*v)[BLOBREF_STRLEN] = malloc (cap * sizeof (*v));

    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < q->count; i++)
        memcpy (v[i], q->slot[(q->head + i) % q->cap], BLOBREF_STRLEN);
    free (q->slot);
    q->slot = v;
    q->cap = cap;
    q->head = 0;
    return 0;
}

int loadq_push (loadq_t *q, const char *ref)
{
    if (!q || !ref || blobref_validate (ref) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (q->count == q->cap && grow (q) < 0)
        return -1;
    memcpy (q->slot[(q->head + q->count) % q->cap], ref, BLOBREF_STRLEN);
    q->count++;
    return 0;
}

char *loadq_next (loadq_t *q, size_t *len, int *count)
{
    char *buf;
    size_t n;

    errno = 0;
    if (!q || q->count == 0 || q->inflight >= LOAD_WINDOW)
        return NULL;
    n = q->count < LOAD_BATCH_MAX ? q->count : LOAD_BATCH_MAX;
    if (!(buf = malloc (n * LINE + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy (buf + i * LINE, q->slot[(q->head + i) % q->cap], BLOBREF_STRLEN);
        buf[i * LINE + BLOBREF_STRLEN] = '\n';
    }
    buf[n * LINE] = '\0';
    q->head = (q->head + n) % q->cap;
    q->count -= n;
    q->inflight++;
    *len = n * LINE;
    *count = (int)n;
    return buf;
}

int loadq_pop (loadq_t *q, char *ref)
{
    if (!q || !ref || q->count == 0) {
        errno = ENOENT;
        return -1;
    }
    memcpy (ref, q->slot[q->head], BLOBREF_STRLEN);
    ref[BLOBREF_STRLEN] = '\0';
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return 0;
}

void loadq_done (loadq_t *q)
{
    if (q && q->inflight > 0)
        q->inflight--;
}

int loadq_inflight (const loadq_t *q)
{
    return q ? q->inflight : 0;
}

int loadq_waiting (const loadq_t *q)
{
    return q ? (int)q->count : 0;
}
