/* canopy-event.c - publish events, or print the events that arrive. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <fcntl.h>
#include <unistd.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy event pub [--raw] [--count=N] TOPIC [PAYLOAD]\n"
"       canopy event sub [--count=N] [--seq] [--ready-file=FILE] [TOPIC...]\n"
"\n"
"pub: publish an event (PAYLOAD is JSON unless --raw) and print its\n"
"     sequence number (with --count, publish it N times, one after the\n"
"     other, and print the last).\n"
"sub: print 'TOPIC PAYLOAD' for each event whose topic starts with one of\n"
"     the TOPIC prefixes (default: all events).\n"
"\n"
"  -r, --raw             PAYLOAD is raw bytes, not JSON\n"
"  -c, --count=N         sub: exit after N events; pub: publish N times\n"
"  -s, --seq             print each event's sequence number first\n"
"      --ready-file=FILE create FILE once subscribed\n"
"  -h, --help            show this help\n";

struct sub_ctx {
    long count;
    long seen;
    bool seq;
};

static void event_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct sub_ctx *ctx = arg;
    const char *topic = canopy_msg_get_topic (msg);
    const void *data;
    size_t size;
    uint32_t seq = 0;

    (void)canopy_msg_get_seq (msg, &seq);
    (void)canopy_msg_get_payload (msg, &data, &size);
    if (ctx->seq)
        printf ("%u ", seq);
    printf ("%s", topic ? topic : "?");
    if (size > 0) {
        putchar (' ');
        fwrite (data, 1, size, stdout);
    }
    putchar ('\n');
    fflush (stdout);
    if (ctx->count > 0 && ++ctx->seen >= ctx->count)
        canopy_reactor_stop (canopy_get_reactor (h));
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "raw", no_argument, NULL, 'r' },
        { "count", required_argument, NULL, 'c' },
        { "seq", no_argument, NULL, 's' },
        { "ready-file", required_argument, NULL, 'R' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool raw = false;
    struct sub_ctx ctx = { .count = -1 };
    const char *ready = NULL;
    int c;

    log_init ("canopy-event");
    if (argc < 2)
        cmd_usage (usage_text, 1);
    if (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help"))
        cmd_usage (usage_text, 0);
    const char *sub = argv[1];
    optind = 2;
    while ((c = getopt_long (argc, argv, "rc:sh", longopts, NULL)) != -1) {
        switch (c) {
            case 'r':
                raw = true;
                break;
            case 'c':
                ctx.count = cmd_parse_long (optarg, "count", 1, 1L << 40);
                break;
            case 's':
                ctx.seq = true;
                break;
            case 'R':
                ready = optarg;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    canopy_t *h = cmd_open ();
    if (!strcmp (sub, "pub")) {
        uint32_t seq;
        canopy_future_t *f;
        if (optind != argc - 1 && optind != argc - 2)
            cmd_usage (usage_text, 1);
        if (ctx.seq || ready)
            log_msg_exit ("--seq and --ready-file go with sub");
        const char *topic = argv[optind];
        const char *payload = optind + 1 < argc ? argv[optind + 1] : NULL;
        if (payload && !raw) {
            json_error_t jerr;
            json_t *o = json_loads (payload, JSON_DECODE_ANY, &jerr);
            if (!o)
                log_msg_exit ("payload is not JSON: %s (use --raw)", jerr.text);
            json_decref (o);
        }
        for (long i = 0; i < (ctx.count > 0 ? ctx.count : 1); i++) {
            if (raw)
                f = canopy_event_publish_raw (h, topic, CANOPY_MSGFLAG_RAW, payload,
                                              payload ? strlen (payload) : 0);
            else
                f = canopy_event_publish (h, topic, 0, payload);
            if (!f || canopy_event_publish_get_seq (f, &seq) < 0) {
                const char *s = canopy_future_error_string (f);
                log_msg_exit ("publish %s: %s", topic, s ? s : strerror (errno));
            }
            canopy_future_destroy (f);
        }
        printf ("%u\n", seq);
    }
    else if (!strcmp (sub, "sub")) {
        canopy_msg_handler_t *mh;
        if (raw)
            log_msg_exit ("--raw goes with pub");
        if (optind == argc) {
            if (canopy_event_subscribe (h, "") < 0)
                log_err_exit ("subscribe");
        }
        for (int i = optind; i < argc; i++) {
            if (canopy_event_subscribe (h, argv[i]) < 0)
                log_err_exit ("subscribe %s", argv[i]);
        }
        if (!(mh = canopy_msg_handler_create (h, CANOPY_MATCH_EVENT, event_cb, &ctx)))
            log_err_exit ("message handler");
        canopy_msg_handler_start (mh);
        if (ready) {
            int fd = open (ready, O_CREAT | O_WRONLY, 0644);
            if (fd < 0)
                log_err_exit ("%s", ready);
            close (fd);
        }
        if (canopy_reactor_run (canopy_get_reactor (h), 0) < 0)
            log_msg_exit ("lost the connection to the broker");
        canopy_msg_handler_destroy (mh);
    }
    else {
        log_msg ("unknown subcommand '%s'", sub);
        cmd_usage (usage_text, 1);
    }
    canopy_close (h);
    return 0;
}
