/* msg_stream.c - fuzz the stream framing of the client socket
 * (msg_instream_fill/next: 4-byte big-endian length + flat record).
 *
 * The input is written into one end of a socketpair in chunks whose sizes
 * come from the input itself (so frames split at every possible place),
 * and the other end is read with msg_instream_fill() and drained with
 * msg_instream_next(), exactly as the broker's local connector does.
 *
 * Input layout: byte 0 = chunk-size seed, the rest = the byte stream.
 *
 * Invariants: every message yielded re-frames (msg_frame_encode) to exactly
 * the bytes it came from, in order; after EPROTO/EMSGSIZE the stream is
 * abandoned (the connector drops the client) and nothing leaks.
 */
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <canopy/message.h>
#include "src/common/libcanopy/msg_stream.h"
#include "fuzz.h"

/* Drain whole messages; check each re-frames to the next bytes of the
 * stream.  Returns 0 to go on, -1 when the stream must be dropped.
 */
static int drain (struct msg_instream *in, const uint8_t *stream, size_t len,
                  size_t *consumed)
{
    canopy_msg_t *msg;

    while ((msg = msg_instream_next (in))) {
        size_t flen;
        void *frame = msg_frame_encode (msg, &flen);
        FUZZ_CHECK (frame != NULL);
        FUZZ_CHECK (*consumed + flen <= len);
        FUZZ_CHECK (memcmp (frame, stream + *consumed, flen) == 0);
        *consumed += flen;
        free (frame);
        canopy_msg_decref (msg);
    }
    if (errno == EAGAIN) {
        FUZZ_CHECK (!msg_instream_ready (in));
        return 0;
    }
    FUZZ_CHECK (errno == EPROTO || errno == EMSGSIZE || errno == ENOMEM);
    return -1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct msg_instream in;
    int sv[2];
    size_t off = 1, consumed = 0;
    unsigned seed;

    if (size < 1)
        return 0;
    seed = data[0];
    data++;
    size--;
    off = 0;
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return 0;
    msg_instream_init (&in);
    while (off < size) {
        /* chunk of 1..256 bytes, varying with the seed */
        size_t chunk = 1 + ((seed * 131 + off * 7) & 0xff);
        if (chunk > size - off)
            chunk = size - off;
        ssize_t n = write (sv[0], data + off, chunk);
        if (n <= 0)
            break;
        off += n;
        ssize_t r = msg_instream_fill (&in, sv[1]);
        if (r < 0) {
            FUZZ_CHECK (errno == EMSGSIZE || errno == ENOMEM || errno == EAGAIN);
            if (errno != EAGAIN)
                goto done;
        }
        if (drain (&in, data, size, &consumed) < 0)
            goto done;
    }
    /* peer closes: read to EOF */
    close (sv[0]);
    sv[0] = -1;
    for (;;) {
        ssize_t r = msg_instream_fill (&in, sv[1]);
        if (r == 0)
            break;
        if (r < 0) {
            if (errno == EAGAIN)
                break;
            FUZZ_CHECK (errno == EMSGSIZE || errno == ENOMEM);
            goto done;
        }
        if (drain (&in, data, size, &consumed) < 0)
            goto done;
    }
    (void)drain (&in, data, size, &consumed);
done:
    msg_instream_release (&in);
    if (sv[0] >= 0)
        close (sv[0]);
    close (sv[1]);
    return 0;
}
