/* test/event.c - unit tests for event.c's request building: an event.pub
 * request whose payload the caller writes in place (canopy_event_pub_create)
 * is "topic\0body" with the body where *bufp points, RAW only when asked,
 * and a message sharing its payload from *offp holds the body as the event
 * will carry it, without a copy; bad arguments, an empty or oversized topic
 * and an oversized body fail with no request made.  Sending needs a broker
 * (t/ covers it through the KVS's kvs.prime events).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/canopy.h>

static void test_layout (void **state)
{
    void *buf;
    size_t off;
    const void *data;
    size_t len;
    const char *topic;
    canopy_msg_t *req = canopy_event_pub_create ("kvs.prime", CANOPY_MSGFLAG_RAW,
                                                 5, &buf, &off);

    assert_non_null (req);
    assert_int_equal (off, strlen ("kvs.prime") + 1);
    memcpy (buf, "a\0b\xffz", 5);
    assert_int_equal (canopy_msg_get_topic (req) != NULL, 1);
    assert_string_equal (canopy_msg_get_topic (req), "event.pub");
    assert_true (canopy_msg_has_flag (req, CANOPY_MSGFLAG_RAW));
    assert_int_equal (canopy_msg_get_payload (req, &data, &len), 0);
    assert_int_equal (len, off + 5);
    topic = data;
    assert_string_equal (topic, "kvs.prime");
    assert_ptr_equal ((const char *)data + off, buf);
    assert_memory_equal ((const char *)data + off, "a\0b\xffz", 5);

    /* the body as the event carries it: the same bytes, not a copy */
    canopy_msg_t *ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_non_null (ev);
    assert_int_equal (canopy_msg_share_payload (ev, req, off), 0);
    assert_int_equal (canopy_msg_get_payload (ev, &data, &len), 0);
    assert_int_equal (len, 5);
    assert_ptr_equal (data, buf);
    canopy_msg_decref (req);        /* the event keeps the bytes alive */
    assert_memory_equal (data, "a\0b\xffz", 5);
    canopy_msg_decref (ev);
}

static void test_json_and_empty (void **state)
{
    void *buf;
    size_t off;
    const void *data;
    size_t len;
    canopy_msg_t *req = canopy_event_pub_create ("a.b", 0, 0, &buf, &off);

    assert_non_null (req);
    assert_false (canopy_msg_has_flag (req, CANOPY_MSGFLAG_RAW));
    assert_int_equal (off, 4);
    assert_int_equal (canopy_msg_get_payload (req, &data, &len), 0);
    assert_int_equal (len, 4);
    assert_memory_equal (data, "a.b", 4);
    canopy_msg_decref (req);
}

static void test_invalid (void **state)
{
    void *buf = (void *)1;
    size_t off = 7;
    char topic[CANOPY_MSG_MAX_TOPIC_LEN + 2];

    errno = 0;
    assert_null (canopy_event_pub_create (NULL, 0, 1, &buf, &off));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_event_pub_create ("", 0, 1, &buf, &off));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_event_pub_create ("a", 0x1, 1, &buf, &off));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_event_pub_create ("a", 0, 1, NULL, &off));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_event_pub_create ("a", 0, 1, &buf, NULL));
    assert_int_equal (errno, EINVAL);
    memset (topic, 't', sizeof (topic) - 1);
    topic[sizeof (topic) - 1] = '\0';
    errno = 0;
    assert_null (canopy_event_pub_create (topic, 0, 1, &buf, &off));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_event_pub_create ("a", 0, CANOPY_MSG_SIZE_MAX, &buf, &off));
    assert_int_equal (errno, EMSGSIZE);
    /* outputs untouched on failure */
    assert_ptr_equal (buf, (void *)1);
    assert_int_equal (off, 7);
    errno = 0;
    assert_null (canopy_event_pub_send (NULL, NULL));
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_layout),
        cmocka_unit_test (test_json_and_empty),
        cmocka_unit_test (test_invalid),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
