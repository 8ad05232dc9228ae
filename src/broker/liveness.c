/* liveness.c - keepalive and silence arithmetic (liveness.h). */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include "liveness.h"

void liveness_config_default (struct liveness_config *cfg)
{
    cfg->period = 2.0;
    cfg->torpid = 10.0;
    cfg->lost = 30.0;
}

int liveness_parse_duration (const char *s, double *seconds)
{
    char *end;
    double v;

    if (!s || !seconds || !*s)
        goto inval;
    errno = 0;
    v = strtod (s, &end);
    if (errno || end == s || !isfinite (v) || v < 0)
        goto inval;
    if (!strcmp (end, "ms"))
        v /= 1000.;
    else if (!strcmp (end, "m"))
        v *= 60.;
    else if (!strcmp (end, "h"))
        v *= 3600.;
    else if (*end && strcmp (end, "s") != 0)
        goto inval;
    *seconds = v;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int liveness_config_check (const struct liveness_config *cfg, char *errbuf,
                           size_t errsize)
{
    const char *why = NULL;

    if (!(cfg->period > 0))
        why = "tbon.keepalive-period must be greater than zero";
    else if (cfg->torpid > 0 && cfg->torpid <= cfg->period)
        why = "tbon.torpid-timeout must be longer than tbon.keepalive-period (or 0)";
    else if (cfg->lost > 0 && cfg->lost <= cfg->period)
        why = "tbon.lost-timeout must be longer than tbon.keepalive-period (or 0)";
    else if (cfg->lost > 0 && cfg->torpid > 0 && cfg->lost < cfg->torpid)
        why = "tbon.lost-timeout must not be shorter than tbon.torpid-timeout";
    if (why) {
        if (errbuf && errsize)
            snprintf (errbuf, errsize, "%s", why);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

double liveness_tick_interval (const struct liveness_config *cfg)
{
    double t = cfg->period / 2;
    if (t < 0.01)
        t = 0.01;
    if (t > 1.0)
        t = 1.0;
    return t;
}

double liveness_stall (double prev_tick, double now, double interval)
{
    double late = now - prev_tick - interval;
    if (prev_tick <= 0 || late <= interval)
        return 0;
    return late;
}

void peer_clock_reset (struct peer_clock *pc, double now)
{
    pc->last_recv = now;
    pc->last_send = now;
    pc->torpid = false;
}

bool peer_clock_heard (struct peer_clock *pc, double now)
{
    bool was = pc->torpid;
    pc->last_recv = now;
    pc->torpid = false;
    return was;
}

void peer_clock_sent (struct peer_clock *pc, double now)
{
    pc->last_send = now;
}

bool liveness_need_keepalive (const struct peer_clock *pc, double now,
                              const struct liveness_config *cfg)
{
    return now - pc->last_send >= cfg->period;
}

enum liveness_verdict liveness_check (struct peer_clock *pc, double now,
                                      const struct liveness_config *cfg)
{
    double silent = now - pc->last_recv;

    if (cfg->lost > 0 && silent >= cfg->lost)
        return LIVENESS_LOST;
    if (cfg->torpid > 0 && silent >= cfg->torpid && !pc->torpid) {
        pc->torpid = true;
        return LIVENESS_TORPID;
    }
    return LIVENESS_OK;
}

double backoff_next (double current, double min, double max)
{
    double next = current <= 0 ? min : current * 2;
    if (next < min)
        next = min;
    if (next > max)
        next = max;
    return next;
}
