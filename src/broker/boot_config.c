/* boot_config.c - boot from a configuration file (boot_config.h).
 *
 * Design notes:
 * - Everything is checked here, with the line of the offending value, so
 *   that a broker with a bad file refuses to start with one clear
 *   sentence; nothing is bound or connected until the whole file is good.
 * - Unknown keys are errors (a misspelt "lost-timout" must not be
 *   silently ignored on a cluster).
 * - Values destined for broker attributes are turned into strings here;
 *   the broker sets them before its --setattr options, so the command
 *   line wins.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>
#include "toml.h"
#include "liveness.h"
#include "topology.h"
#include "cert.h"
#include "overlay.h"
#include "boot_config.h"

#define DEFAULT_PORT 8050
#define DEFAULT_RUNDIR "/run/canopy"
#define MAX_FANOUT 1024
#define MAX_HOSTS 100000

struct ctx {
    const char *file;
    toml_doc_t *doc;
    char *errbuf;
    size_t errsize;
};

/* "FILE:LINE: FIELD: message" (or without LINE when unknown).  For a
 * missing key, the line of its table is used.
 */
static int cfgerr (struct ctx *c, const char *field, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int cfgerr (struct ctx *c, const char *field, const char *fmt, ...)
{
    char msg[256];
    char table[128];
    va_list ap;
    int line = toml_line (c->doc, field);

    if (line == 0) {
        const char *dot = strrchr (field, '.');
        if (dot && (size_t)(dot - field) < sizeof (table)) {
            memcpy (table, field, dot - field);
            table[dot - field] = '\0';
            line = toml_line (c->doc, table);
        }
    }
    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    if (c->errbuf && c->errsize) {
        if (line > 0)
            snprintf (c->errbuf, c->errsize, "%s:%d: %s: %s", c->file, line, field, msg);
        else
            snprintf (c->errbuf, c->errsize, "%s: %s: %s", c->file, field, msg);
    }
    errno = EINVAL;
    return -1;
}

static bool key_in (const char *key, const char *const *list)
{
    for (int i = 0; list[i]; i++) {
        if (!strcmp (key, list[i]))
            return true;
    }
    return false;
}

/* Reject keys of 'table' (at 'path') not in 'allowed'. */
static int check_keys (struct ctx *c, json_t *table, const char *path,
                       const char *const *allowed)
{
    const char *key;
    json_t *v;
    char field[256];

    json_object_foreach (table, key, v) {
        if (!key_in (key, allowed)) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf (list + strlen (list), sizeof (list) - strlen (list), "%s%s",
                          i ? ", " : "", allowed[i]);
            snprintf (field, sizeof (field), "%s%s%s", path, *path ? "." : "", key);
            return cfgerr (c, field, "unknown key (expected one of: %s)", list);
        }
    }
    return 0;
}

static int get_table (struct ctx *c, json_t *root, const char *name, json_t **out)
{
    json_t *t = json_object_get (root, name);
    if (t && !json_is_object (t))
        return cfgerr (c, name, "must be a table ([%s])", name);
    *out = t;
    return 0;
}

static int get_int (struct ctx *c, json_t *table, const char *path, const char *key,
                    long long min, long long max, long long def, long long *out)
{
    char field[256];
    json_t *v = table ? json_object_get (table, key) : NULL;

    snprintf (field, sizeof (field), "%s.%s", path, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_integer (v) || json_integer_value (v) < min
        || json_integer_value (v) > max)
        return cfgerr (c, field, "must be an integer from %lld to %lld", min, max);
    *out = json_integer_value (v);
    return 0;
}

/* A string; NULL (and 0) if absent and not required. */
static int get_string (struct ctx *c, json_t *table, const char *path, const char *key,
                       bool required, const char **out)
{
    char field[256];
    json_t *v = table ? json_object_get (table, key) : NULL;

    snprintf (field, sizeof (field), "%s.%s", path, key);
    *out = NULL;
    if (!v) {
        if (required)
            return cfgerr (c, field, "is required");
        return 0;
    }
    if (!json_is_string (v) || !*json_string_value (v))
        return cfgerr (c, field, "must be a non-empty string");
    *out = json_string_value (v);
    return 0;
}

static int set_attr (struct ctx *c, struct boot_config *bc, const char *name,
                     const char *value)
{
    if (json_object_set_new (bc->attrs, name, json_string (value)) < 0) {
        snprintf (c->errbuf, c->errsize, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* A value for an attribute: string, integer, real or boolean. */
static int attr_value (struct ctx *c, const char *field, json_t *v, char *buf, size_t size)
{
    if (json_is_string (v))
        snprintf (buf, size, "%s", json_string_value (v));
    else if (json_is_integer (v))
        snprintf (buf, size, "%lld", (long long)json_integer_value (v));
    else if (json_is_real (v))
        snprintf (buf, size, "%g", json_real_value (v));
    else if (json_is_boolean (v))
        snprintf (buf, size, "%s", json_is_true (v) ? "1" : "0");
    else
        return cfgerr (c, field, "must be a string, a number or a boolean");
    return 0;
}

static int parse_tbon (struct ctx *c, json_t *tbon, struct boot_config *bc,
                       long long *port)
{
    static const char *const allowed[] = {
        "k", "port", "keepalive-period", "torpid-timeout", "lost-timeout",
        "tcp-user-timeout", "maxmsgsize", "sndhwm", "rcvhwm", NULL,
    };
    static const char *const durations[] = {
        "keepalive-period", "torpid-timeout", "lost-timeout", "tcp-user-timeout", NULL,
    };
    static const char *const counts[] = { "maxmsgsize", "sndhwm", "rcvhwm", NULL };
    long long k;
    char field[64], attr[64], buf[64];

    if (tbon && check_keys (c, tbon, "tbon", allowed) < 0)
        return -1;
    if (get_int (c, tbon, "tbon", "k", 1, MAX_FANOUT, 2, &k) < 0
        || get_int (c, tbon, "tbon", "port", 1, 65535, DEFAULT_PORT, port) < 0)
        return -1;
    bc->k = k;
    for (int i = 0; tbon && durations[i]; i++) {
        json_t *v = json_object_get (tbon, durations[i]);
        double d;
        if (!v)
            continue;
        snprintf (field, sizeof (field), "tbon.%s", durations[i]);
        if (attr_value (c, field, v, buf, sizeof (buf)) < 0)
            return -1;
        if (json_is_boolean (v) || liveness_parse_duration (buf, &d) < 0)
            return cfgerr (c, field, "must be a duration such as 2, \"0.5s\" or \"100ms\"");
        snprintf (attr, sizeof (attr), "tbon.%s", durations[i]);
        if (set_attr (c, bc, attr, buf) < 0)
            return -1;
    }
    for (int i = 0; tbon && counts[i]; i++) {
        long long v;
        if (!json_object_get (tbon, counts[i]))
            continue;
        if (get_int (c, tbon, "tbon", counts[i], 0, 1000000000, 0, &v) < 0)
            return -1;
        snprintf (attr, sizeof (attr), "tbon.%s", counts[i]);
        snprintf (buf, sizeof (buf), "%lld", v);
        if (set_attr (c, bc, attr, buf) < 0)
            return -1;
    }
    return 0;
}

static int parse_level (const char *s)
{
    static const char *const names[] = { "emerg", "alert", "crit", "err", "warning",
                                         "notice", "info", "debug", NULL };
    for (int i = 0; names[i]; i++) {
        if (!strcmp (s, names[i]))
            return i;
    }
    if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
        return s[0] - '0';
    return -1;
}

static int parse_broker (struct ctx *c, json_t *broker, struct boot_config *bc)
{
    static const char *const allowed[] = {
        "rundir", "statedir", "log", "log-level", "modules", NULL,
    };
    const char *rundir, *statedir, *log, *modules;
    json_t *level;
    char buf[16];

    if (broker && check_keys (c, broker, "broker", allowed) < 0)
        return -1;
    if (get_string (c, broker, "broker", "rundir", false, &rundir) < 0
        || get_string (c, broker, "broker", "statedir", false, &statedir) < 0
        || get_string (c, broker, "broker", "log", false, &log) < 0
        || get_string (c, broker, "broker", "modules", false, &modules) < 0)
        return -1;
    if (rundir && rundir[0] != '/')
        return cfgerr (c, "broker.rundir", "must be an absolute path");
    if (rundir && strlen (rundir) > 90)
        return cfgerr (c, "broker.rundir", "is too long for a UNIX socket path");
    if (!(bc->rundir = strdup (rundir ? rundir : DEFAULT_RUNDIR))) {
        errno = ENOMEM;
        return -1;
    }
    if (statedir && statedir[0] != '/')
        return cfgerr (c, "broker.statedir", "must be an absolute path");
    if (statedir && bc->rank == 0 && set_attr (c, bc, "statedir", statedir) < 0)
        return -1;
    if (log && strcmp (log, "stderr") != 0 && strcmp (log, "syslog") != 0 && log[0] != '/')
        return cfgerr (c, "broker.log", "must be \"stderr\", \"syslog\" or an absolute "
                       "file path");
    if (log && set_attr (c, bc, "log-output", log) < 0)
        return -1;
    if (broker && (level = json_object_get (broker, "log-level"))) {
        int l = -1;
        if (json_is_integer (level) && json_integer_value (level) >= 0
            && json_integer_value (level) <= 7)
            l = json_integer_value (level);
        else if (json_is_string (level))
            l = parse_level (json_string_value (level));
        if (l < 0)
            return cfgerr (c, "broker.log-level", "must be 0-7 or a syslog level name "
                           "(err, warning, notice, info, debug, ...)");
        snprintf (buf, sizeof (buf), "%d", l);
        if (set_attr (c, bc, "log-stderr-level", buf) < 0)
            return -1;
    }
    if (modules && set_attr (c, bc, "broker.modules", modules) < 0)
        return -1;
    return 0;
}

static int parse_attributes (struct ctx *c, json_t *attrs, struct boot_config *bc)
{
    const char *key;
    json_t *v;
    char field[256], buf[1024];

    json_object_foreach (attrs, key, v) {
        snprintf (field, sizeof (field), "attributes.%s", key);
        if (attr_value (c, field, v, buf, sizeof (buf)) < 0
            || set_attr (c, bc, key, buf) < 0)
            return -1;
    }
    return 0;
}

static void short_name (const char *name, char *buf, size_t size)
{
    size_t n = strcspn (name, ".");
    if (n >= size)
        n = size - 1;
    memcpy (buf, name, n);
    buf[n] = '\0';
}

struct host {
    const char *host;
    const char *addr;
    const char *bind;
    long long port;
};

static int parse_hosts (struct ctx *c, json_t *hosts, long long default_port,
                        struct host **out, size_t *count)
{
    static const char *const allowed[] = { "host", "addr", "port", "bind", NULL };
    struct host *h;
    size_t n;
    char path[64];

    if (!hosts)
        return cfgerr (c, "hosts", "is required: one [[hosts]] table per broker, "
                       "in rank order");
    if (!json_is_array (hosts) || json_array_size (hosts) == 0)
        return cfgerr (c, "hosts", "must be one or more [[hosts]] tables");
    n = json_array_size (hosts);
    if (n > MAX_HOSTS)
        return cfgerr (c, "hosts", "more than %d hosts", MAX_HOSTS);
    if (!(h = calloc (n, sizeof (*h)))) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get (hosts, i);
        snprintf (path, sizeof (path), "hosts[%zu]", i);
        if (!json_is_object (e)) {
            cfgerr (c, path, "must be a table");
            goto error;
        }
        if (check_keys (c, e, path, allowed) < 0
            || get_string (c, e, path, "host", true, &h[i].host) < 0
            || get_string (c, e, path, "addr", false, &h[i].addr) < 0
            || get_string (c, e, path, "bind", false, &h[i].bind) < 0
            || get_int (c, e, path, "port", 1, 65535, default_port, &h[i].port) < 0)
            goto error;
        if (!h[i].addr)
            h[i].addr = h[i].host;
        if (!h[i].bind)
            h[i].bind = "*";
        for (size_t j = 0; j < i; j++) {
            if (!strcmp (h[j].addr, h[i].addr) && h[j].port == h[i].port) {
                char field[80];
                snprintf (field, sizeof (field), "%s.port", path);
                if (!toml_line (c->doc, field))
                    snprintf (field, sizeof (field), "%s", path);
                cfgerr (c, field, "%s:%lld is also used by hosts[%zu]", h[i].addr,
                        h[i].port, j);
                goto error;
            }
        }
    }
    *out = h;
    *count = n;
    return 0;
error:
    free (h);
    return -1;
}

static int find_rank (struct ctx *c, struct host *h, size_t n, const char *hostname,
                      uint32_t *rank)
{
    char want[256], have[256];
    long found = -1;
    int matches = 0;

    /* exact match first, then without the domain */
    for (int pass = 0; pass < 2 && matches == 0; pass++) {
        short_name (hostname, want, sizeof (want));
        for (size_t i = 0; i < n; i++) {
            short_name (h[i].host, have, sizeof (have));
            if (pass == 0 ? !strcmp (h[i].host, hostname) : !strcmp (have, want)) {
                if (matches++ == 0)
                    found = i;
            }
        }
    }
    if (matches == 0) {
        snprintf (c->errbuf, c->errsize, "%s: this host (%s) is not in hosts; "
                  "use --rank to choose an entry", c->file, hostname);
        errno = ENOENT;
        return -1;
    }
    if (matches > 1) {
        snprintf (c->errbuf, c->errsize, "%s: this host (%s) appears %d times in "
                  "hosts; use --rank to choose an entry", c->file, hostname, matches);
        errno = EINVAL;
        return -1;
    }
    *rank = found;
    return 0;
}

void boot_config_destroy (struct boot_config *bc)
{
    if (bc) {
        int saved_errno = errno;
        free (bc->path);
        free (bc->host);
        free (bc->bind_uri);
        free (bc->parent_uri);
        free (bc->rundir);
        free (bc->cert_path);
        json_decref (bc->attrs);
        free (bc);
        errno = saved_errno;
    }
}

static char *tcp_uri (const char *host, long long port)
{
    char *s;
    /* an IPv6 literal needs brackets */
    bool v6 = strchr (host, ':') != NULL && host[0] != '[';
    if (asprintf (&s, v6 ? "tcp://[%s]:%lld" : "tcp://%s:%lld", host, port) < 0)
        return NULL;
    return s;
}

struct boot_config *boot_config_load (const char *path, const char *hostname,
                                      int64_t rank, char *errbuf, size_t errsize)
{
    static const char *const allowed[] = {
        "tbon", "broker", "security", "hosts", "attributes", NULL,
    };
    struct ctx c = { .file = path, .errbuf = errbuf, .errsize = errsize };
    struct toml_error terr;
    struct boot_config *bc = NULL;
    struct host *h = NULL;
    size_t nhosts = 0;
    json_t *root, *tbon = NULL, *broker = NULL, *security = NULL, *attrs = NULL;
    long long port;
    const char *cert;

    if (!(c.doc = toml_parse_file (path, &terr))) {
        int e = errno;
        if (terr.line > 0)
            snprintf (errbuf, errsize, "%s:%d:%d: %s", path, terr.line, terr.col, terr.text);
        else
            snprintf (errbuf, errsize, "%s: %s", path, terr.text);
        errno = e;
        return NULL;
    }
    root = toml_root (c.doc);
    if (!(bc = calloc (1, sizeof (*bc))) || !(bc->path = strdup (path))
        || !(bc->attrs = json_object ())) {
        snprintf (errbuf, errsize, "out of memory");
        errno = ENOMEM;
        goto error;
    }
    if (check_keys (&c, root, "", allowed) < 0
        || get_table (&c, root, "tbon", &tbon) < 0
        || get_table (&c, root, "broker", &broker) < 0
        || get_table (&c, root, "security", &security) < 0
        || get_table (&c, root, "attributes", &attrs) < 0
        || parse_tbon (&c, tbon, bc, &port) < 0
        || parse_hosts (&c, json_object_get (root, "hosts"), port, &h, &nhosts) < 0)
        goto error;
    bc->size = nhosts;
    if (rank >= 0) {
        if ((uint64_t)rank >= nhosts) {
            snprintf (errbuf, errsize, "%s: --rank %lld is not below the number of "
                      "hosts (%zu)", path, (long long)rank, nhosts);
            errno = EINVAL;
            goto error;
        }
        bc->rank = rank;
    }
    else if (find_rank (&c, h, nhosts, hostname, &bc->rank) < 0)
        goto error;
    if (parse_broker (&c, broker, bc) < 0
        || (attrs && parse_attributes (&c, attrs, bc) < 0))
        goto error;
    if (security && check_keys (&c, security, "security",
                                (const char *const[]){ "curve-cert", NULL }) < 0)
        goto error;
    if (get_string (&c, security, "security", "curve-cert", nhosts > 1, &cert) < 0)
        goto error;
    if (cert && cert[0] != '/') {
        cfgerr (&c, "security.curve-cert", "must be an absolute path");
        goto error;
    }
    if (!(bc->host = strdup (h[bc->rank].host))
        || (cert && !(bc->cert_path = strdup (cert))))
        goto nomem;
    if (topology_child_count (bc->rank, bc->size, bc->k) > 0
        && !(bc->bind_uri = tcp_uri (h[bc->rank].bind, h[bc->rank].port)))
        goto nomem;
    if (bc->rank > 0) {
        struct host *p = &h[topology_parent (bc->rank, bc->k)];
        if (!(bc->parent_uri = tcp_uri (p->addr, p->port)))
            goto nomem;
    }
    free (h);
    toml_destroy (c.doc);
    return bc;
nomem:
    snprintf (errbuf, errsize, "out of memory");
    errno = ENOMEM;
error:
    free (h);
    toml_destroy (c.doc);
    boot_config_destroy (bc);
    return NULL;
}

int boot_config_wire (struct boot_config *bc, struct overlay *ov,
                      char *errbuf, size_t errsize)
{
    char err[256];
    char pubkey[41] = "";

    if (bc->cert_path) {
        cert_t *cert = cert_load (bc->cert_path, err, sizeof (err));
        if (!cert) {
            int e = errno;
            snprintf (errbuf, errsize, "%s: security.curve-cert: %s", bc->path, err);
            errno = e;
            return -1;
        }
        snprintf (pubkey, sizeof (pubkey), "%s", cert_public (cert));
        if (overlay_set_cert (ov, cert) < 0) {
            snprintf (errbuf, errsize, "cannot set up CURVE security: %s",
                      strerror (errno));
            return -1;
        }
    }
    if (bc->bind_uri && overlay_bind (ov, bc->bind_uri) < 0) {
        snprintf (errbuf, errsize, "cannot listen on %s (rank %u, host %s): %s",
                  bc->bind_uri, bc->rank, bc->host, strerror (errno));
        return -1;
    }
    if (bc->parent_uri
        && overlay_connect (ov, bc->parent_uri, *pubkey ? pubkey : NULL) < 0) {
        snprintf (errbuf, errsize, "cannot connect to %s: %s", bc->parent_uri,
                  strerror (errno));
        return -1;
    }
    return 0;
}
