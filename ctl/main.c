/*
 * main.c: bin/sympoziumctl: one request to sympoziumd's health socket,
 * printed as a table (or raw JSON), once or every --watch SECONDS.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
once(const struct ctl_opts *o)
{
	json_object *reply = NULL;
	struct buf raw, out;
	char err[1024];
	int rc;

	buf_init(&raw);
	buf_init(&out);
	rc = ctl_call(o->socket, &o->req, o->timeout_ms, &reply, &raw, err,
	        sizeof(err));
	if (rc == CTL_EXIT_OK && o->json) {
		fwrite(raw.data, 1, raw.len, stdout);
	} else if (rc == CTL_EXIT_OK) {
		ctl_format(o->req.cmd, reply, &out);
		fwrite(out.data != NULL ? out.data : "", 1, out.len, stdout);
	} else if (rc == CTL_EXIT_ERROR && o->json && raw.len > 0) {
		fwrite(raw.data, 1, raw.len, stdout);
		fprintf(stderr, "sympoziumctl: %s\n", err);
	} else {
		fprintf(stderr, "sympoziumctl: %s\n", err);
	}
	fflush(stdout);
	json_object_put(reply);
	buf_fini(&raw);
	buf_fini(&out);
	return (rc);
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (!stop && nanosleep(&ts, &ts) != 0) { }
}

int
main(int argc, char **argv)
{
	struct ctl_opts o;
	char err[512];
	int rc;

	memset(&o, 0, sizeof(o));
	ctl_default_socket(o.socket, sizeof(o.socket),
	        getenv("SYMPOZIUM_HEALTH_SOCKET"), getenv("TMPDIR"),
	        (unsigned)getuid());
	if (ctl_parse_args(argc, argv, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "sympoziumctl: %s\n", err);
		return (CTL_EXIT_USAGE);
	}
	if (o.help) {
		fputs(ctl_usage(), stdout);
		return (CTL_EXIT_OK);
	}
	signal(SIGPIPE, SIG_IGN);
	if (!o.watch) {
		return (once(&o));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long n = 1;; n++) {
		if (isatty(STDOUT_FILENO) && !o.json) {
			fputs("\033[H\033[2J", stdout);
		}
		rc = once(&o);
		if (stop || (o.count > 0 && n >= o.count)) {
			return (rc);
		}
		sleep_ms(o.interval_ms);
		if (stop) {
			return (rc);
		}
	}
}
