/*
 * main.c: bin/sympozium-worker.  Started by the supervisor (fork+exec,
 * clean environment) as `sympozium-worker --controller NAME --socket
 * PATH`: dials the session socket, says HELLO, waits for READY, then
 * serves WORK until QUIT.  Never started by hand in production.  Between
 * READY and the first WORK it enters the sandbox (sandbox.h), unless
 * SYMPOZIUM_WORKER_SANDBOX=off (sympoziumd --no-worker-sandbox).
 *
 * What cannot work however often it is tried (bad flags, an unknown
 * controller, a bad sandbox setting, a sandbox the kernel refuses) exits
 * IPC_EXIT_PERMANENT (ipc.h) after saying why, so the supervisor stops the
 * controller instead of restarting it in a loop.
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
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
#define BYE_TIMEOUT_MS   250 /* lets nng deliver the ERROR before exit */

static void
usage(void)
{
	fprintf(stderr,
	        "usage: sympozium-worker --controller NAME --socket "
	        "PATH [--log-format text|json] [-v]\n"
	        "       sympozium-worker --list-controllers\n");
	exit(IPC_EXIT_PERMANENT);
}

/* Exits IPC_EXIT_PERMANENT after saying why: in the log and, when the
 * supervisor's socket answers, in an ERROR on the session (s, or dialed
 * at path). */
static void __attribute__((noreturn, format(printf, 3, 4)))
permanent(struct ipc_sock *s, const char *path, const char *fmt, ...)
{
	char why[512], err[256];
	struct ipc_msg m = { 0 };
	json_object *e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_error("%s (permanent failure: not restarted)", why);
	if (s == NULL && path != NULL) {
		s = ipc_sock_dial(path, 0, DIAL_TIMEOUT_MS, err, sizeof(err));
	}
	if (s != NULL) {
		e = ipc_error_new(why);
		(void)ipc_sock_send(s, IPC_ERROR, 0, e);
		json_object_put(e);
		if (ipc_sock_recv_wait(s, BYE_TIMEOUT_MS, &m, err, sizeof(err))
		        == IPC_SOCK_OK) {
			ipc_msg_fini(&m);
		}
		ipc_sock_close(s);
	}
	exit(IPC_EXIT_PERMANENT);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "controller", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "log-format", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "list-controllers", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	const char *controller = NULL, *path = NULL;
	enum log_format fmt = LOG_FORMAT_TEXT;
	int ch, verbose = 0;
	char title[64], err[256];
	int64_t epoch = 0;
	enum sbx_mode mode;

	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			controller = optarg;
			break;
		case 's':
			path = optarg;
			break;
		case 'f':
			if (log_parse_format(optarg, &fmt) != 0) {
				usage();
			}
			break;
		case 'v':
			verbose++;
			break;
		case 'L':
			rec_list(stdout);
			return (0);
		default:
			usage();
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
		permanent(NULL, path, "%s: want on, off or log", SBX_ENV);
	}
	const struct reconciler *r = rec_find(controller);
	if (r == NULL) {
		permanent(NULL, path, "unknown controller \"%s\"", controller);
	}
	struct ipc_sock *s
	        = ipc_sock_dial(path, 0, DIAL_TIMEOUT_MS, err, sizeof(err));
	if (s == NULL) {
		fatalx("cannot reach the supervisor: %s", err);
	}
	if (wrt_handshake(s, controller, READY_TIMEOUT_MS, &epoch) != 0) {
		ipc_sock_close(s);
		return (1);
	}
	if (sbx_enter(mode, err, sizeof(err)) != 0) {
		permanent(s, NULL, "sandbox: %s", err);
	}
	log_debug("ready, epoch %lld, sandbox %s", (long long)epoch,
	        mode == SBX_ON            ? "on"
	                : mode == SBX_LOG ? "log"
	                                  : "off");
	int rc = wrt_serve(s, r, VIEW_TIMEOUT_MS);
	ipc_sock_close(s);
	return (rc == 0 ? 0 : 1);
}
