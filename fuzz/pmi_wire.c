/* pmi_wire.c - fuzz pmi_wire_parse(), the PMI-1 "simple" wire protocol
 * parser (lines from MPI tasks, served by canopy run's exec service and
 * by libpmi.so's client side).
 *
 * Invariants: a parsed line has 1..PMI_WIRE_FIELDS_MAX fields with
 * non-empty keys free of '=' and spaces, no duplicate keys, "value" only
 * last; pmi_wire_get finds every field; rejoining the fields with single
 * spaces parses to the same fields; sanitize never overruns its buffer
 * and produces a valid token (or nothing).
 */
#include <string.h>
#include <errno.h>
#include "src/common/libpmi/pmi_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static struct pmi_wire_msg msg, msg2;
    static char line[PMI_WIRE_LINE_MAX * 2 + 8];
    char san[64];
    size_t off = 0;

    /* sanitize any prefix of the input into a small buffer */
    if (size > 0) {
        char *s = malloc (size + 1);
        if (s) {
            memcpy (s, data, size);
            s[size] = '\0';
            pmi_wire_sanitize (san, sizeof (san), s);
            FUZZ_CHECK (strlen (san) < sizeof (san));
            FUZZ_CHECK (san[0] == '\0' || pmi_wire_token_valid (san));
            free (s);
        }
    }
    if (pmi_wire_parse (&msg, (const char *)data, size) < 0) {
        FUZZ_CHECK (errno == EPROTO || errno == EMSGSIZE);
        FUZZ_CHECK (msg.nfields == 0);
        return 0;
    }
    FUZZ_CHECK (size <= PMI_WIRE_LINE_MAX);
    FUZZ_CHECK (msg.nfields >= 1 && msg.nfields <= PMI_WIRE_FIELDS_MAX);
    (void)pmi_wire_cmd (&msg);
    for (int i = 0; i < msg.nfields; i++) {
        const char *k = msg.fields[i].key, *v = msg.fields[i].val;
        int iv;
        FUZZ_CHECK (pmi_wire_token_valid (k));
        FUZZ_CHECK (pmi_wire_value_valid (v));
        FUZZ_CHECK (pmi_wire_get (&msg, k) == v);
        if (!strcmp (k, "value"))
            FUZZ_CHECK (i == msg.nfields - 1);
        else
            FUZZ_CHECK (!strchr (v, ' '));
        if (pmi_wire_get_int (&msg, k, &iv) < 0)
            FUZZ_CHECK (errno == EPROTO);
        size_t kl = strlen (k), vl = strlen (v);
        FUZZ_CHECK (off + kl + vl + 2 < sizeof (line));
        if (i > 0)
            line[off++] = ' ';
        memcpy (line + off, k, kl);
        off += kl;
        line[off++] = '=';
        memcpy (line + off, v, vl);
        off += vl;
    }
    line[off++] = '\n';
    FUZZ_CHECK (pmi_wire_parse (&msg2, line, off) == 0);
    FUZZ_CHECK (msg2.nfields == msg.nfields);
    for (int i = 0; i < msg.nfields; i++) {
        FUZZ_CHECK (!strcmp (msg.fields[i].key, msg2.fields[i].key));
        FUZZ_CHECK (!strcmp (msg.fields[i].val, msg2.fields[i].val));
    }
    return 0;
}
