/*
 * main.c: bin/kubesim, the local Kubernetes API server.  Parses the
 * command line (kubesim/README.md), generates TLS material when
 * asked, builds the server core and the HTTP front end, prints
 * `listening on URL` as its first stdout line, writes a kubeconfig, and
 * runs until SIGTERM or SIGINT.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "kubesim/kcert.h"
#include "kubesim/kctrl.h"
#include "kubesim/kfault.h"
#include "kubesim/khttp.h"
#include "kubesim/ksrv.h"

struct args {
	struct ksrv_opts so;
	struct khttp_opts ho;
	bool tls;
	const char *kubeconfig;
	enum log_format fmt;
	int verbose;
	struct kfault *faults; /* --fault, --fault-seed */
	unsigned loops;        /* enum kctrl_loop */
};

static void
usage(void)
{
	fprintf(stderr,
	        "usage: kubesim [--listen ADDR:PORT] [--tls] [--token TOKEN]\n"
	        "               [--write-kubeconfig PATH] [--request-log "
	        "PATH]\n"
	        "               [--watch-history N] [--bookmark-interval D]\n"
	        "               [--watch-timeout D] [--too-large-wait D]\n"
	        "               [--controllers LIST] [--log-format text|json] "
	        "[-v]\n"
	        "               [--fault SPEC]... [--fault-seed N]\n");
	exit(2);
}

static int64_t
ms_arg(const char *flag, const char *v)
{
	int64_t ns;

	if (duration_parse(v, &ns) != 0 || ns < 0) {
		fprintf(stderr, "kubesim: %s: invalid duration \"%s\"\n", flag,
		        v);
		exit(2);
	}
	return (ns / 1000000);
}

static void
controllers_arg(struct args *a, const char *v)
{
	if (kctrl_parse(v, &a->loops) != 0) {
		fprintf(stderr,
		        "kubesim: --controllers: invalid list \"%s\"\n", v);
		exit(2);
	}
	a->so.gc = (a->loops & KCTRL_GC) != 0;
}

static void
fault_arg(struct args *a, const char *flag, const char *spec)
{
	char err[256];

	if (kfault_add_spec(a->faults, spec, err, sizeof(err)) != 0) {
		fprintf(stderr, "kubesim: %s %s: %s\n", flag, spec, err);
		exit(2);
	}
}

/* Ends hung requests (they wait for their rule's removal) before
 * khttp_stop joins the connection threads. */
static void
faults_release(struct kfault *f)
{
	struct kreq rq = { .method = "DELETE", .path = "/_kubesim/faults" };
	struct kresp rs;

	kresp_init(&rs);
	kfault_admin(f, &rq, "", &rs);
	kresp_fini(&rs);
}

static void
parse(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "tls", no_argument, NULL, 's' },
		{ "token", required_argument, NULL, 't' },
		{ "write-kubeconfig", required_argument, NULL, 'k' },
		{ "request-log", required_argument, NULL, 'r' },
		{ "watch-history", required_argument, NULL, 'H' },
		{ "bookmark-interval", required_argument, NULL, 'b' },
		{ "watch-timeout", required_argument, NULL, 'w' },
		{ "too-large-wait", required_argument, NULL, 'W' },
		{ "controllers", required_argument, NULL, 'c' },
		{ "log-format", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "fault", required_argument, NULL, 'F' },
		{ "fault-seed", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	long long n;
	char *seed;

	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			a->ho.listen = optarg;
			break;
		case 's':
			a->tls = true;
			break;
		case 't':
			a->ho.token = optarg;
			break;
		case 'k':
			a->kubeconfig = optarg;
			break;
		case 'r':
			a->ho.request_log = optarg;
			break;
		case 'H':
			n = strtoll(optarg, NULL, 10);
			if (n < 1 || n > 10000000) {
				fprintf(stderr,
				        "kubesim: --watch-history: "
				        "want 1..10000000\n");
				exit(2);
			}
			a->so.watch_history = (size_t)n;
			break;
		case 'b':
			a->so.bookmark_ms
			        = ms_arg("--bookmark-interval", optarg);
			break;
		case 'w':
			a->so.watch_timeout_ms
			        = ms_arg("--watch-timeout", optarg);
			break;
		case 'W':
			a->so.too_large_wait_ms
			        = ms_arg("--too-large-wait", optarg);
			break;
		case 'c':
			controllers_arg(a, optarg);
			break;
		case 'f':
			if (log_parse_format(optarg, &a->fmt) != 0) {
				usage();
			}
			break;
		case 'v':
			a->verbose++;
			break;
		case 'F':
			fault_arg(a, "--fault", optarg);
			break;
		case 'S':
			seed = xasprintf("seed=%s", optarg);
			fault_arg(a, "--fault-seed", seed);
			free(seed);
			break;
		default:
			usage();
		}
	}
	if (optind != argc) {
		usage();
	}
}

static int
write_kubeconfig(
        const char *path, const char *url, const char *ca, const char *token)
{
	FILE *f = fopen(path, "we");
	char *ca64 = ca != NULL ? b64_encode(ca, strlen(ca)) : NULL;

	if (f == NULL) {
		log_warn("--write-kubeconfig %s", path);
		free(ca64);
		return (-1);
	}
	fprintf(f,
	        "apiVersion: v1\nkind: Config\nclusters:\n- name: kubesim\n"
	        "  cluster:\n    server: %s\n",
	        url);
	if (ca64 != NULL) {
		fprintf(f, "    certificate-authority-data: %s\n", ca64);
	}
	fprintf(f, "users:\n- name: kubesim\n  user:%s\n",
	        token != NULL ? "" : " {}");
	if (token != NULL) {
		fprintf(f, "    token: %s\n", token);
	}
	fprintf(f,
	        "contexts:\n- name: kubesim\n  context:\n    cluster: "
	        "kubesim\n    user: kubesim\n    namespace: default\n"
	        "current-context: kubesim\n");
	free(ca64);
	return (fclose(f) == 0 ? 0 : -1);
}

static void
block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
main(int argc, char **argv)
{
	struct args a = { .so = { .watch_history = 10000,
		                  .bookmark_ms = 60000,
		                  .too_large_wait_ms = 3000,
		                  .gc = true },
		.ho = { .listen = "127.0.0.1:0" },
		.loops = KCTRL_ALL };
	struct kcert tc = { 0 };
	char url[256];
	sigset_t set;
	int sig = 0;

	a.faults = kfault_new();
	parse(argc, argv, &a);
	log_init("kubesim", a.fmt);
	log_setverbose(a.verbose);
	block_signals(&set);
	if (a.tls) {
		if (kcert_generate(&tc, "kubesim-client", NULL) != 0) {
			fatalx("cannot generate TLS material");
		}
		a.ho.cert_pem = tc.server_cert;
		a.ho.key_pem = tc.server_key;
	}
	struct ksrv *ks = ksrv_new(&a.so);
	struct kctrl *ctl = kctrl_start(ks, a.loops);
	struct khttp *h = khttp_start(ks, &a.ho, url, sizeof(url));
	if (h == NULL) {
		kctrl_stop(ctl);
		ksrv_free(ks);
		kfault_free(a.faults);
		kcert_free(&tc);
		return (1);
	}
	khttp_set_filter(h, kfault_filter, a.faults);
	khttp_set_accept(h, kfault_accept, a.faults);
	khttp_admin_register(h, "faults", kfault_admin, a.faults);
	khttp_admin_register(h, "kubelet", kctrl_admin, ctl);
	if (a.kubeconfig != NULL
	        && write_kubeconfig(a.kubeconfig, url,
	                   a.tls ? tc.ca_cert : NULL, a.ho.token)
	                != 0) {
		fatalx("cannot write the kubeconfig");
	}
	printf("listening on %s\n", url);
	fflush(stdout);
	log_info("listening on %s", url);
	sigwait(&set, &sig);
	log_info("signal %d: stopping", sig);
	faults_release(a.faults);
	khttp_stop(h);
	kfault_free(a.faults);
	kctrl_stop(ctl);
	ksrv_free(ks);
	kcert_free(&tc);
	return (0);
}
