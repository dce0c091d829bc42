/*
 * main.c: bin/sympozium-worker.  Started by the supervisor (fork+exec,
 * clean environment) as `sympozium-worker --controller NAME --socket
 * PATH`: dials the session socket, says HELLO, waits for READY, then
 * serves WORK until QUIT.  Never started by hand in production.  Between
 * READY and the first WORK it enters the sandbox (sandbox.h), unless
 * SYMPOZIUM_WORKER_SANDBOX=off (sympoziumd --no-worker-sandbox).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/log.h"
#include "ipc/ipc_sock.h"
#include "workers/runtime.h"
#include "workers/sandbox.h"

#define DIAL_TIMEOUT_MS  5000
#define READY_TIMEOUT_MS 5000
#define VIEW_TIMEOUT_MS  10000

static void
usage(void)
{
	fprintf(stderr, "usage: sympozium-worker --controller NAME --socket "
	                "PATH [--log-format text|json] [-v]\n"
	                "       sympozium-worker --list-controllers\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"controller", required_argument, NULL, 'c'},
	        {"socket", required_argument, NULL, 's'},
	        {"log-format", required_argument, NULL, 'f'},
	        {"verbose", no_argument, NULL, 'v'},
	        {"list-controllers", no_argument, NULL, 'L'},
	        {NULL, 0, NULL, 0},
	};
	const char *controller = NULL, *path = NULL;
	enum log_format fmt = LOG_FORMAT_TEXT;
	int ch, verbose = 0;
	char title[64], err[256];
	int64_t epoch = 0;
	enum sbx_mode mode;

	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': controller = optarg; break;
		case 's': path = optarg; break;
		case 'f':
			if (log_parse_format(optarg, &fmt) != 0) {
				usage();
			}
			break;
		case 'v': verbose++; break;
		case 'L': rec_list(stdout); return (0);
		default: usage();
		}
	}
	if (controller == NULL || path == NULL || optind != argc) {
		usage();
	}
	snprintf(title, sizeof(title), "worker[%s]", controller);
	log_init(title, fmt);
	log_setverbose(verbose);
	/* the supervisor's death ends us: no orphaned workers */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sbx_parse_mode(getenv(SBX_ENV), &mode) != 0) {
		fatalx("%s: want on, off or log", SBX_ENV);
	}
	const struct reconciler *r = rec_find(controller);
	if (r == NULL) {
		fatalx("unknown controller \"%s\"", controller);
	}
	struct ipc_sock *s = ipc_sock_dial(path, 0, DIAL_TIMEOUT_MS, err,
	        sizeof(err));
	if (s == NULL) {
		fatalx("cannot reach the supervisor: %s", err);
	}
	if (wrt_handshake(s, controller, READY_TIMEOUT_MS, &epoch) != 0) {
		ipc_sock_close(s);
		return (1);
	}
	if (sbx_enter(mode, err, sizeof(err)) != 0) {
		fatalx("sandbox: %s", err);
	}
	log_debug("ready, epoch %lld, sandbox %s", (long long)epoch,
	        mode == SBX_ON ? "on" : mode == SBX_LOG ? "log" : "off");
	int rc = wrt_serve(s, r, VIEW_TIMEOUT_MS);
	ipc_sock_close(s);
	return (rc == 0 ? 0 : 1);
}
