/* tarball.h - a small POSIX tar (ustar + pax) writer and reader for
 * canopy dump/restore.
 *
 * Writer: regular files, directories and symlinks; names or link targets
 * that do not fit the 100-byte ustar fields get a pax extended header
 * ("path=", "linkpath=").  Output is deterministic for the same input.
 *
 * Reader: ustar and pax ('x' per-entry headers: path, linkpath, size;
 * 'g' global headers are skipped), GNU long names ('L', 'K'), the ustar
 * prefix field.  Checksums are verified.  Entries of other types are
 * returned with type TAR_OTHER (their data skipped).
 *
 * Errors: -1 with errno: EIO (read/write failure: errno from the system
 * call when it set one), EPROTO (not a tar archive, bad checksum,
 * truncated), ENOMEM, EFBIG (an entry too large for this reader).  A
 * description is kept for tar_reader_error/tar_writer_error.
 *
 * Ownership: the caller owns the fd (never closed here).  Entry fields
 * belong to the reader and are valid until the next tar_read_next.
 */
#ifndef CANOPY_CMD_TARBALL_H
#define CANOPY_CMD_TARBALL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef struct tar_writer tar_writer_t;
typedef struct tar_reader tar_reader_t;

enum tar_type { TAR_FILE = 1, TAR_DIR = 2, TAR_SYMLINK = 3, TAR_OTHER = 4 };

struct tar_entry {
    enum tar_type type;
    const char *name;           /* trailing '/' removed */
    const char *linkname;       /* symlinks, else "" */
    const void *data;           /* files: size bytes (NUL-terminated) */
    size_t size;
    time_t mtime;
};

tar_writer_t *tar_writer_create (int fd);
/* Finish the archive (end-of-archive blocks) and free. */
int tar_writer_finish (tar_writer_t *w);
/* Free without finishing (after an error). */
void tar_writer_destroy (tar_writer_t *w);
int tar_write_file (tar_writer_t *w, const char *name, const void *data, size_t len,
                    time_t mtime);
int tar_write_dir (tar_writer_t *w, const char *name, time_t mtime);
int tar_write_symlink (tar_writer_t *w, const char *name, const char *target,
                       time_t mtime);
const char *tar_writer_error (tar_writer_t *w);

tar_reader_t *tar_reader_create (int fd);
void tar_reader_destroy (tar_reader_t *r);
/* Returns 1 with *e filled, 0 at the end of the archive, -1 on error. */
int tar_read_next (tar_reader_t *r, struct tar_entry *e);
const char *tar_reader_error (tar_reader_t *r);

#endif
