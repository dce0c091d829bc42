/*
 * sup.c: the supervisor's set-up, its one poll loop and its shutdown.
 * Everything runs on one thread: kapi_multi_poll() waits on the API
 * transfers, the worker sessions and a signalfd (SIGTERM, SIGINT,
 * SIGCHLD) at once, with a timeout from the earliest timer of the
 * informer, the queues, the worker pool and the Lease.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/kapi_conf.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/health.h"
#include "supervisor/http.h"
#include "supervisor/ops.h"
#include "supervisor/otel.h"
#include "supervisor/egress.h"
#include "supervisor/shadow.h"
#include "supervisor/sup.h"

#define MAX_FDS 512

static void
add_kinds(struct sup *s, size_t ci)
{
	const struct ctrl_spec *sp = s->ctls[ci].spec;

	s->ctls[ci].first_kind = s->nkinds;
	s->kinds = xreallocarray(
	        s->kinds, s->nkinds + sp->nwatches, sizeof(*s->kinds));
	s->kind_ctl = xreallocarray(
	        s->kind_ctl, s->nkinds + sp->nwatches, sizeof(*s->kind_ctl));
	s->kind_off = xreallocarray(
	        s->kind_off, s->nkinds + sp->nwatches, sizeof(*s->kind_off));
	for (size_t i = 0; i < sp->nwatches; i++) {
		s->kinds[s->nkinds]
		        = (struct inf_kind) { .name = sp->watches[i].kind,
			          .res = sp->watches[i].res,
			          .selector = sp->watches[i].selector };
		s->kind_off[s->nkinds] = sup_optional_off(s, &sp->watches[i]);
		s->kind_ctl[s->nkinds++] = ci;
	}
}

/* The controllers to run: --controllers, else every one in the table that
 * the worker binary offers (sympozium-worker --list-controllers). */
static int
choose_controllers(struct sup *s, char *err, size_t errlen)
{
	char cmd[4200], line[128];
	FILE *p;

	if (s->cfg.controllers != NULL) {
		char *list = xstrdup(s->cfg.controllers), *save = NULL;
		for (char *n = strtok_r(list, ",", &save); n != NULL;
		        n = strtok_r(NULL, ",", &save)) {
			const struct ctrl_spec *sp = ctrl_find(n);
			if (sp == NULL) {
				snprintf(err, errlen,
				        "--controllers: unknown "
				        "controller \"%s\"",
				        n);
				free(list);
				return (-1);
			}
			s->ctls = xreallocarray(
			        s->ctls, s->nctls + 1, sizeof(*s->ctls));
			s->ctls[s->nctls++] = (struct sup_ctl) { .spec = sp };
		}
		free(list);
		return (0);
	}
	snprintf(cmd, sizeof(cmd), "'%s' --list-controllers",
	        s->cfg.worker_binary);
	if ((p = popen(cmd, "re")) == NULL) {
		snprintf(err, errlen, "cannot run %s", s->cfg.worker_binary);
		return (-1);
	}
	while (fgets(line, sizeof(line), p) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		const struct ctrl_spec *sp = ctrl_find(line);
		if (sp != NULL && !sp->test_only) {
			s->ctls = xreallocarray(
			        s->ctls, s->nctls + 1, sizeof(*s->ctls));
			s->ctls[s->nctls++] = (struct sup_ctl) { .spec = sp };
		}
	}
	pclose(p);
	return (0);
}

/* The default runtime directory TMPDIR/sympoziumd-UID (where
 * sympoziumctl looks by default), when it is free: created now, or an
 * existing one of ours with mode 0700 and no live health socket. */
static bool
claim_default_dir(struct sup *s, const char *tmp)
{
	struct stat sb;
	char sock[4200];

	snprintf(s->runtime_dir, sizeof(s->runtime_dir), "%s/sympoziumd-%u",
	        tmp, (unsigned)geteuid());
	if (mkdir(s->runtime_dir, 0700) == 0) {
		return (true);
	}
	if (errno != EEXIST || lstat(s->runtime_dir, &sb) != 0
	        || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid()
	        || (sb.st_mode & 077) != 0) {
		return (false);
	}
	snprintf(sock, sizeof(sock), "%s/health.sock", s->runtime_dir);
	return (s->cfg.health_socket != NULL || !health_alive(sock));
}

static int
runtime_dir(struct sup *s, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";

	if (s->cfg.runtime_dir != NULL) {
		snprintf(s->runtime_dir, sizeof(s->runtime_dir), "%s",
		        s->cfg.runtime_dir);
		if (mkdir(s->runtime_dir, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "--runtime-dir %s: %s",
			        s->runtime_dir, strerror(errno));
			return (-1);
		}
		chmod(s->runtime_dir, 0700);
		return (0);
	}
	if (claim_default_dir(s, tmp)) {
		s->own_runtime_dir = true;
		return (0);
	}
	snprintf(s->runtime_dir, sizeof(s->runtime_dir),
	        "%s/sympoziumd.XXXXXX", tmp);
	if (mkdtemp(s->runtime_dir) == NULL) {
		snprintf(
		        err, errlen, "runtime directory: %s", strerror(errno));
		return (-1);
	}
	s->own_runtime_dir = true;
	return (0);
}

/* The API configuration: kapi_conf_load's order, except that for tests
 * SYMPOZIUM_SERVICEACCOUNT_DIR replaces the in-cluster service-account
 * directory (KAPI_SA_DIR) when neither --kubeconfig nor KUBECONFIG is
 * given. */
static struct kapi_conf *
load_conf(struct sup *s, char *err, size_t errlen)
{
	const char *sa = getenv("SYMPOZIUM_SERVICEACCOUNT_DIR");
	const char *kc = getenv("KUBECONFIG");

	if (s->cfg.kubeconfig == NULL && (kc == NULL || *kc == '\0')
	        && sa != NULL && *sa != '\0') {
		return (kapi_conf_in_cluster(sa, err, errlen));
	}
	return (kapi_conf_load(s->cfg.kubeconfig, NULL, err, errlen));
}

/* Logs "caches synced" with the totals once every kind has synced
 * (start-up timing and cache size, tests/bench/operator.sh). */
static void
on_synced(void *arg, size_t kind)
{
	struct sup *s = arg;
	uint64_t objs = 0, bytes = 0;

	(void)kind;
	if (!inf_all_synced(s->inf)) {
		return;
	}
	/* each shared cache once */
	for (size_t i = 0; i < s->nkinds; i++) {
		struct inf_stats st;
		size_t src = inf_source(s->inf, i), j = 0;
		while (j < i && inf_source(s->inf, j) != src) {
			j++;
		}
		if (j < i) {
			continue;
		}
		inf_stats(s->inf, i, &st);
		objs += st.objects;
		bytes += st.bytes;
	}
	log_info("caches synced: %zu watches, %llu objects, %llu bytes "
	         "(%zu shared caches)",
	        s->nkinds, (unsigned long long)objs, (unsigned long long)bytes,
	        inf_nsources(s->inf));
}

/* --max-response-bytes caps a LIST page; no other answer (nor one
 * watch event) may be larger than that either. */
static void
set_caps(struct sup *s, struct inf_conf *ic)
{
	size_t n = s->cfg.max_response_bytes;

	if (n == 0) {
		return;
	}
	kapi_client_set_max_body(s->client, n,
	        n < KAPI_MAX_BODY_BYTES ? n : KAPI_MAX_BODY_BYTES);
	ic->max_event_bytes = n < KAPI_WATCH_DEFAULT_MAX_BYTES
	        ? n
	        : KAPI_WATCH_DEFAULT_MAX_BYTES;
}

static int
setup_api(struct sup *s, char *err, size_t errlen)
{
	struct inf_conf ic = { .on_change = sup_on_change,
		.on_synced = on_synced,
		.arg = s,
		.seed = (uint64_t)getpid() };
	struct wr_conf wc = { .lookup = sup_lookup,
		.fence = sup_may_write,
		.on_done = sup_on_written,
		.arg = s,
		.max_inflight = s->cfg.max_writes };
	char e[512];

	s->conf = load_conf(s, e, sizeof(e));
	if (s->conf == NULL) {
		snprintf(err, errlen, "kubeconfig: %s", e);
		return (-1);
	}
	char ua[200];
	snprintf(ua, sizeof(ua), "sympoziumd/0.1 %s",
	        leader_identity(s->leader));
	s->client = kapi_client_new(s->conf, ua);
	/* a Lease request must not outlive the renew deadline */
	kapi_client_set_timeout(s->client, s->cfg.renew_ms);
	set_caps(s, &ic);
	s->m = kapi_multi_new(s->client);
	if (s->cfg.shadow) {
		s->shadow = sh_new(0);
		log_info("shadow mode: no write goes to the API server; "
		         "sympoziumctl shadow lists the writes it would send");
	}
	sup_detect_served(s);
	for (size_t i = 0; i < s->nctls; i++) {
		add_kinds(s, i);
	}
	s->stats = ops_stats_new(s, timefmt_now_ms_mono());
	leader_connect(s->leader, s->m, s->stats);
	ic.stats = s->stats;
	s->inf = inf_new_off(s->m, s->kinds, s->kind_off, s->nkinds, &ic);
	s->wr = wr_new(s->m, &wc);
	wr_set_correlator(s->wr, NULL);
	wr_set_stats(s->wr, s->stats);
	wr_set_shadow(s->wr, s->shadow);
	return (0);
}

/* The only environment workers get: the settings reconcilers read
 * (images, telemetry), when set here, and the sandbox's mode
 * (workers/sandbox.h: off under --no-worker-sandbox). */
static void
worker_env(struct sup *s)
{
	static const char *const pass[] = { "SYMPOZIUM_IMAGE_REGISTRY",
		"SYMPOZIUM_IMAGE_TAG", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"SYMPOZIUM_WORKER_SANDBOX", NULL };
	size_t n = 0;

	for (size_t i = 0; pass[i] != NULL; i++) {
		const char *v = getenv(pass[i]);
		if (s->cfg.no_worker_sandbox && i == 3) {
			v = "off";
		}
		if (v != NULL && n < SUP_MAX_ENV - 1) {
			s->env[n++] = xasprintf("%s=%s", pass[i], v);
		}
	}
	if (s->cfg.max_run_history != NULL && n < SUP_MAX_ENV - 1) {
		s->env[n++] = xasprintf("SYMPOZIUM_MAX_RUN_HISTORY=%s",
		        s->cfg.max_run_history);
	}
	if (s->agent_sandbox && n < SUP_MAX_ENV - 1) {
		s->env[n++] = xasprintf("%s=1", CONTRACT_ENV_AGENT_SANDBOX);
	}
	s->env[n] = NULL;
}

static int
setup_workers(struct sup *s, char *err, size_t errlen)
{
	struct wk_config wc;
	/* no on_idle: the loop dispatches to idle workers on every turn */
	struct wk_callbacks cb = { sup_on_result, sup_on_view, sup_on_lost,
		NULL, sup_on_released };
	char e[256];

	wk_config_default(&wc);
	worker_env(s);
	wc.env = (const char *const *)s->env;
	wc.binary = s->cfg.worker_binary;
	wc.runtime_dir = s->runtime_dir;
	wc.log_format = s->cfg.log_format;
	wc.reconcile_ms = s->cfg.reconcile_ms;
	wc.shutdown_grace_ms = s->cfg.shutdown_ms;
	wc.handshake_ms = s->cfg.handshake_ms;
	wc.fault.recover_ms = s->cfg.recover_ms;
	s->pool = wk_pool_new(&wc, &cb, s);
	if (s->pool == NULL) {
		snprintf(err, errlen, "workers: cannot create the pool");
		return (-1);
	}
	for (size_t i = 0; i < s->nctls; i++) {
		struct queue_config qc;
		queue_config_default(&qc);
		s->ctls[i].q = queue_new(&qc);
		s->ctls[i].nmeters
		        = cfg_workers_for(&s->cfg, s->ctls[i].spec->name);
		s->ctls[i].meters = xcalloc((size_t)s->ctls[i].nmeters + 1,
		        sizeof(*s->ctls[i].meters));
		if (wk_add_controller(s->pool, s->ctls[i].spec->name,
		            cfg_workers_for(&s->cfg, s->ctls[i].spec->name), e,
		            sizeof(e))
		        != 0) {
			snprintf(err, errlen, "workers: %s", e);
			return (-1);
		}
	}
	sup_path_new(s);
	return (0);
}

/* Leadership events (leader.h): the workers' new epoch and a resync of
 * every primary object on gaining; on losing (the renew deadline passed
 * while the loop waited or was stopped, or the release at shutdown),
 * writes submitted before must not go out now. */
static void
on_leader(void *arg, enum leader_event ev, uint32_t epoch, int64_t now)
{
	struct sup *s = arg;
	size_t c;

	if (ev == LEADER_GAINED) {
		wk_set_epoch(s->pool, epoch);
		sup_resync(s, now);
		return;
	}
	c = wr_fence_inflight(s->wr);
	if (c > 0) {
		log_warnx("leadership lost: %zu write(s) in flight cancelled",
		        c);
	}
}

static int
setup_lease(struct sup *s, char *err, size_t errlen)
{
	struct leader_conf lc = { .elect = s->cfg.leader_elect,
		.ns = s->cfg.le_namespace,
		.name = s->cfg.le_id,
		.lease_ms = s->cfg.lease_ms,
		.renew_ms = s->cfg.renew_ms,
		.retry_ms = s->cfg.retry_ms,
		.seed = (uint64_t)getpid() ^ (uint64_t)timefmt_now_us_real(),
		.on_event = on_leader,
		.arg = s };
	char e[256];

	s->leader = leader_new(&lc, e, sizeof(e));
	if (s->leader == NULL) {
		snprintf(err, errlen, "leader election: %s", e);
		return (-1);
	}
	return (0);
}

static int
setup_health(struct sup *s, char *err, size_t errlen)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/health.sock", s->runtime_dir);
	s->health = health_new(
	        s->cfg.health_socket != NULL ? s->cfg.health_socket : path,
	        ops_health_request, s, err, errlen);
	return (s->health != NULL ? 0 : -1);
}

/* The probe and metrics endpoints ("0" turns one off). */
static int
setup_http(struct sup *s, char *err, size_t errlen)
{
	if (!http_disabled(s->cfg.probe_addr)) {
		s->probe = http_new("--health-probe-bind-address",
		        s->cfg.probe_addr, ops_http_probe, s, err, errlen);
		if (s->probe == NULL) {
			return (-1);
		}
	}
	if (!http_disabled(s->cfg.metrics_addr)) {
		s->metrics = http_new("--metrics-bind-address",
		        s->cfg.metrics_addr, ops_http_metrics, s, err, errlen);
		if (s->metrics == NULL) {
			return (-1);
		}
	}
	return (0);
}

static int
setup_signals(struct sup *s, char *err, size_t errlen)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sigfd < 0) {
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
		return (-1);
	}
	return (0);
}

/* Upstream's telemetry.Init: on when OTEL_EXPORTER_OTLP_ENDPOINT is set,
 * with the resource of its downward-API environment. */
static void
setup_otel(struct sup *s)
{
	struct otel_conf oc = { getenv("OTEL_EXPORTER_OTLP_ENDPOINT"),
		getenv("NAMESPACE"), getenv("POD_NAME"), getenv("NODE_NAME"),
		getenv("INSTANCE_NAME"), timefmt_now_us_real() * 1000,
		getenv("OTEL_RESOURCE_ATTRIBUTES") };

	s->otel = otel_new(&oc);
	if (s->otel == NULL) {
		return;
	}
	s->egress = egress_new(
	        otel_endpoint(s->otel), getenv("OTEL_EXPORTER_OTLP_HEADERS"));
	if (s->egress == NULL) {
		otel_free(s->otel);
		s->otel = NULL;
		return;
	}
	log_info("OpenTelemetry: metrics, traces and logs to %s (OTLP/gRPC, "
	         "insecure)",
	        otel_endpoint(s->otel));
}

void
sup_otel_tick(struct sup *s, int64_t now, bool force)
{
	/* upstream's periodic reader and span batcher every 5 s, its log
	 * batch processor every second */
	static const int64_t every[OTEL_NSIGNALS] = { 5000, 5000, 1000 };
	struct buf b;

	if (s->otel == NULL) {
		return;
	}
	buf_init(&b);
	for (int i = 0; i < OTEL_NSIGNALS; i++) {
		if (!force && now < s->otel_due[i]) {
			continue;
		}
		s->otel_due[i] = now + every[i];
		if (otel_encode(s->otel, (enum otel_signal)i,
		            timefmt_now_us_real() * 1000, &b)
		        > 0) {
			egress_send(s->egress, (enum otel_signal)i, &b);
		}
	}
	buf_fini(&b);
}

struct sup *
sup_new(const struct sup_config *cfg, char *err, size_t errlen)
{
	struct sup *s = xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	s->sigfd = -1;
	if (setup_signals(s, err, errlen) != 0
	        || choose_controllers(s, err, errlen) != 0
	        || runtime_dir(s, err, errlen) != 0
	        || setup_lease(s, err, errlen) != 0
	        || setup_api(s, err, errlen) != 0
	        || setup_workers(s, err, errlen) != 0
	        || setup_health(s, err, errlen) != 0
	        || setup_http(s, err, errlen) != 0) {
		sup_free(s);
		return (NULL);
	}
	setup_otel(s);
	return (s);
}

void
sup_free(struct sup *s)
{
	if (s == NULL) {
		return;
	}
	egress_free(s->egress, 0);
	otel_free(s->otel);
	health_free(s->health);
	http_free(s->probe);
	http_free(s->metrics);
	sup_path_free(s);
	wr_free(s->wr);
	sh_free(s->shadow);
	inf_free(s->inf);
	leader_free(s->leader);
	if (s->m != NULL) {
		kapi_multi_free(s->m);
	}
	if (s->client != NULL) {
		kapi_client_free(s->client);
	}
	kapi_conf_free(s->conf);
	wk_free(s->pool);
	for (size_t i = 0; i < s->nctls; i++) {
		queue_free(s->ctls[i].q);
		free(s->ctls[i].meters);
	}
	free(s->ctls);
	free(s->kinds);
	free(s->kind_ctl);
	free(s->kind_off);
	for (size_t i = 0; i < SUP_MAX_ENV && s->env[i] != NULL; i++) {
		free(s->env[i]);
	}
	if (s->sigfd >= 0) {
		close(s->sigfd);
	}
	stats_free(s->stats);
	if (s->own_runtime_dir) {
		rmdir(s->runtime_dir);
	}
	free(s);
}

static void
read_signals(struct sup *s, int64_t now)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			wk_reap(s->pool, now);
		} else if (!s->stopping) {
			log_info("signal %u: stopping (grace %lld ms)",
			        si.ssi_signo, (long long)s->cfg.shutdown_ms);
			s->stopping = true;
			s->stop_at = now;
			leader_stopping(s->leader);
		}
	}
}

static bool
busy(struct sup *s)
{
	for (size_t i = 0; i < s->nctls; i++) {
		if (queue_processing(s->ctls[i].q) > 0) {
			return (true);
		}
	}
	return (wr_pending(s->wr) > 0);
}

/* The shutdown sequence; true when everything has stopped. */
static bool
shutdown_step(struct sup *s, int64_t now)
{
	bool grace_over = now - s->stop_at >= s->cfg.shutdown_ms;

	if (!s->workers_quit && (!busy(s) || grace_over)) {
		s->workers_quit = true;
		wk_shutdown(s->pool, now);
		leader_release(s->leader, now);
	}
	if (!s->workers_quit) {
		return (false);
	}
	bool lease_done = leader_released(s->leader)
	        || now - s->stop_at >= s->cfg.shutdown_ms + s->cfg.renew_ms;
	return (wk_done(s->pool) && lease_done);
}

static int64_t
next_timeout(struct sup *s, int64_t now)
{
	int64_t t = now + 1000, d;

	d = inf_next_deadline(s->inf, now);
	if (d >= 0 && d < t) {
		t = d;
	}
	d = wk_next_deadline(s->pool, now);
	if (d >= 0 && d < t) {
		t = d;
	}
	for (size_t i = 0; i < s->nctls; i++) {
		d = queue_next_deadline(s->ctls[i].q, now);
		if (d >= 0 && d < t) {
			t = d;
		}
		if (queue_len(s->ctls[i].q) > 0
		        && wk_idle(s->pool, s->ctls[i].spec->name) > 0) {
			t = now;
		}
	}
	d = leader_next_deadline(s->leader);
	if (d >= 0 && d < t) {
		t = d;
	}
	if (wr_has_ready(s->wr)) {
		t = now;
	}
	d = health_next_deadline(s->health);
	if (d >= 0 && d < t) {
		t = d;
	}
	d = http_next_deadline(s->probe, now);
	if (d >= 0 && d < t) {
		t = d;
	}
	d = http_next_deadline(s->metrics, now);
	if (d >= 0 && d < t) {
		t = d;
	}
	return (t > now ? t - now : 0);
}

static void
poll_once(struct sup *s, int64_t now)
{
	struct kapi_pollfd fds[MAX_FDS];
	struct pollfd pf[MAX_FDS];
	size_t n = wk_fds(s->pool, pf, MAX_FDS - 1);
	n += health_fds(s->health, pf + n, MAX_FDS - 1 - n);
	n += http_fds(s->probe, pf + n, MAX_FDS - 1 - n);
	n += http_fds(s->metrics, pf + n, MAX_FDS - 1 - n);
	int timeout = (int)next_timeout(s, now);

	fds[0] = (struct kapi_pollfd) { s->sigfd, POLLIN, 0 };
	for (size_t i = 0; i < n; i++) {
		fds[i + 1]
		        = (struct kapi_pollfd) { pf[i].fd, pf[i].events, 0 };
	}
	kapi_multi_poll(s->m, fds, (int)n + 1, timeout);
	now = timefmt_now_ms_mono();
	/* the renew deadline may have passed while we waited (or were
	 * stopped): reported (on_leader) before anything is sent */
	leader_check(s->leader, now);
	kapi_multi_perform(s->m);
	now = timefmt_now_ms_mono();
	if (fds[0].revents != 0) {
		read_signals(s, now);
	}
	wk_handle_io(s->pool, now);
	health_handle(s->health, now);
	http_handle(s->probe);
	http_handle(s->metrics);
}

/* Gives the freed pages inside the heap back once a burst of work is over
 * (a backlog of events and writes, a pruned run history, deleted
 * objects): nothing in flight, at most every 10 s (mtune.h). */
static void
sup_trim(struct sup *s, int64_t now)
{
	if (mtune_trim_check(&s->trim, !busy(s), now)) {
		log_debug("idle: heap trimmed");
	}
}

int
sup_run(struct sup *s)
{
	int64_t now = timefmt_now_ms_mono();
	size_t off = 0;

	for (size_t i = 0; i < s->nkinds; i++) {
		off += s->kind_off[i];
	}
	/* informers: one LIST+WATCH each; watches sharing one count once
	 * (tests/chaos/ reads the first number); an unserved optional kind
	 * (served.c) has a source of its own that sends nothing: not
	 * counted */
	log_info("starting %zu controller(s), %zu informer(s) for %zu "
	         "watch(es), runtime %s%s",
	        s->nctls, inf_nsources(s->inf) - off, s->nkinds - off,
	        s->runtime_dir,
	        off > 0 ? " (optional kinds not served: off)" : "");
	log_info("health socket %s%s",
	        s->cfg.health_socket != NULL ? s->cfg.health_socket
	                                     : s->runtime_dir,
	        s->cfg.health_socket != NULL ? "" : "/health.sock");
	if (s->probe != NULL) {
		log_info("health probes on http://%s (/healthz, /readyz)",
		        http_addr(s->probe));
	}
	if (s->metrics != NULL) {
		log_info(
		        "metrics on http://%s/metrics", http_addr(s->metrics));
	}
	if (wk_start(s->pool, now) != 0) {
		log_warnx("some workers did not start; retrying with backoff");
	}
	for (;;) {
		now = timefmt_now_ms_mono();
		inf_tick(s->inf, now);
		wk_tick(s->pool, now);
		leader_tick(s->leader, now);
		sup_dispatch(s, now);
		wr_run(s->wr);
		sup_trim(s, now);
		sup_otel_tick(s, now, false);
		if (s->stopping && shutdown_step(s, now)) {
			break;
		}
		poll_once(s, now);
	}
	/* upstream's tel.Shutdown: what is pending is flushed */
	sup_otel_tick(s, now, true);
	egress_free(s->egress, 5000);
	s->egress = NULL;
	otel_free(s->otel);
	s->otel = NULL;
	log_info("stopped");
	return (0);
}
