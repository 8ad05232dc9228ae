/* kap_out.h - KAP's JSON document file, opened before the run.
 *
 * kap and kap-crowd open --json FILE before they connect, so a path that
 * cannot be written is reported at once rather than after the run, and a
 * run that then uses every descriptor it may (kap-crowd holds three per
 * participant) still has one to write with.  The document goes to a
 * temporary file beside FILE, renamed over FILE once complete: a run that
 * fails leaves FILE as it was (no empty or half-written document).
 *
 * Not thread-safe; one kap_out_t per file.
 */
#ifndef KAP_OUT_H
#define KAP_OUT_H

#include <stddef.h>
#include <jansson.h>

typedef struct kap_out kap_out_t;

/* Create the temporary file beside 'path'.  Returns the handle, or NULL
 * with errno set and a message naming the path in errbuf (if non-NULL).
 */
kap_out_t *kap_out_open (const char *path, char *errbuf, size_t errlen);

/* Write doc (indented) and move it to the path.  The handle is destroyed
 * whatever happens.  Returns 0, or -1 with errno set and a message in
 * errbuf (the temporary file removed, the path untouched).
 */
int kap_out_commit (kap_out_t *o, const json_t *doc, char *errbuf,
                    size_t errlen);

/* Remove the temporary file and destroy the handle.  NULL is allowed;
 * errno is kept.
 */
void kap_out_abandon (kap_out_t *o);

#endif /* !KAP_OUT_H */
