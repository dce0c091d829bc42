/*
 * procs.c: the chaos suite's processes: the bin/sympoziumd supervisors
 * (chaos.sd[], started with --leader-elect one at a time, their identity
 * learnt from the request log), their workers (children found in /proc
 * and remembered for the cleanup), who leads, reaping with the model's
 * verdict on each exit, and stopping everything started here by pid.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/chaos/chaos.h"
#include "tests/lib/sdproc.h"

#define LEADING "leading (epoch"
#define DEPOSED "not leading any more"

static const char *const le_args[] = { "--leader-elect",
	"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline",
	"2s", "--leader-elect-retry-period", "500ms", NULL };

void
sd_worker_ctl(pid_t pid, char *out, size_t len)
{
	char path[64], buf[1024];
	size_t n = 0;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (strcmp(buf + i, "--controller") == 0 && i + 13 < n) {
			snprintf(out, len, "%s", buf + i + 13);
			return;
		}
	}
}

int
sd_workers(struct chaos_sd *s, pid_t *out, int max)
{
	int n = s->pid > 0 ? sdproc_children(s->pid, out, max) : 0;

	for (int i = 0; i < n; i++) {
		sdproc_remember(s->seen, &s->nseen, CHAOS_MAX_SEEN, out[i]);
	}
	return (n);
}

/* True when the log of s says it leads now. */
static bool
sd_leading(const struct chaos_sd *s)
{
	char *t = sdproc_log_text(s->log);
	bool l = sdproc_count(t, LEADING) > sdproc_count(t, DEPOSED);

	free(t);
	return (l);
}

void
sd_start(void)
{
	struct chaos_sd *s;
	const char *argv[32];
	char rundir[128];
	int n = 0, i = chaos.nsd;

	assert_true(chaos.nsd < CHAOS_MAX_SD);
	s = &chaos.sd[chaos.nsd++];
	memset(s, 0, sizeof(*s));
	snprintf(s->log, sizeof(s->log), "%s/sd%d.log", chaos.dir, i);
	snprintf(rundir, sizeof(rundir), "%s/run%d", chaos.dir, i);
	argv[n++] = "--kubeconfig";
	argv[n++] = chaos.kc;
	argv[n++] = "--runtime-dir";
	argv[n++] = rundir;
	argv[n++] = "--metrics-bind-address=0";
	argv[n++] = "--health-probe-bind-address=0";
	for (int j = 0; le_args[j] != NULL; j++) {
		argv[n++] = le_args[j];
	}
	argv[n] = NULL;
	s->started_ms = ksim_now_ms();
	s->pid = sdproc_start(s->log, argv);
	assert_true(s->pid > 0);
	chaos_say("started supervisor %d (pid %d)", i, (int)s->pid);
}

void
sd_poll(int idx)
{
	struct chaos_sd *s = &chaos.sd[idx];
	pid_t r;

	if (s->pid <= 0 || (r = waitpid(s->pid, &s->status, WNOHANG)) == 0) {
		return;
	}
	if (r < 0 && errno == EINTR) {
		return;
	}
	s->pid = 0;
	switch (chaosmodel_exit(s->expect_end, s->term, s->status)) {
	case CHAOSMODEL_EXIT_UNASKED:
		chaos_violation(
		        "supervisor %d exited on its own (status 0x%x)", idx,
		        s->status);
		break;
	case CHAOSMODEL_EXIT_TERM_BAD:
		chaos_violation("supervisor %d did not exit 0 after SIGTERM "
		                "(status 0x%x)",
		        idx, s->status);
		break;
	default:
		break;
	}
}

void
sd_poll_all(void)
{
	for (int i = 0; i < chaos.nsd; i++) {
		sd_poll(i);
	}
}

int
sd_live(int *out)
{
	int n = 0;

	for (int i = 0; i < chaos.nsd; i++) {
		struct chaos_sd *s = &chaos.sd[i];
		if (s->pid > 0 && !s->expect_end) {
			out[n++] = i;
		}
	}
	return (n);
}

int
sd_leader(void)
{
	int live[CHAOS_MAX_SD], n = sd_live(live), l = -1, count = 0;

	for (int i = 0; i < n; i++) {
		struct chaos_sd *s = &chaos.sd[live[i]];
		if (!s->stopped && sd_leading(s)) {
			l = live[i];
			count++;
		}
	}
	return (count == 1 ? l : -1);
}

int
sd_watches(const struct chaos_sd *s)
{
	char *t = sdproc_log_text(s->log);
	const char *p = strstr(t, "controller(s), ");
	int n = p != NULL ? atoi(p + strlen("controller(s), ")) : 0;

	free(t);
	return (n);
}

struct new_id {
	char id[160];
};

/* The first supervisor User-Agent no supervisor has yet. */
static void
find_new_id(const struct chaosmodel_req *e, void *arg)
{
	struct new_id *n = arg;
	char id[160];

	if (n->id[0] != '\0') {
		return;
	}
	rl_ua_identity(e->ua, id, sizeof(id));
	if (id[0] == '\0') {
		return;
	}
	for (int i = 0; i < chaos.nsd; i++) {
		if (strcmp(chaos.sd[i].id, id) == 0) {
			return;
		}
	}
	snprintf(n->id, sizeof(n->id), "%s", id);
}

void
sd_learn_identity(int idx)
{
	struct chaos_sd *s = &chaos.sd[idx];
	int64_t end = ksim_now_ms() + 20000;
	struct new_id n = { "" };

	while (n.id[0] == '\0' && ksim_now_ms() < end) {
		rl_scan(0, find_new_id, &n);
		if (n.id[0] == '\0') {
			ksim_sleep_ms(100);
		}
	}
	if (n.id[0] == '\0') {
		fail_msg("supervisor %d made no request in 20 s", idx);
	}
	snprintf(s->id, sizeof(s->id), "%s", n.id);
	chaos_say("supervisor %d is %s", idx, s->id);
}

/* Waits up to 20 s for supervisor i to exit, then SIGKILLs it and the
 * workers it left behind. */
static void
sd_reap(int i, bool check)
{
	struct chaos_sd *s = &chaos.sd[i];
	int64_t end = ksim_now_ms() + 20000;

	while (s->pid > 0 && ksim_now_ms() < end) {
		sd_poll(i);
		ksim_sleep_ms(20);
	}
	if (s->pid > 0) {
		if (check) {
			chaos_violation("supervisor %d did not exit within "
			                "20 s of SIGTERM",
			        i);
		}
		kill(s->pid, SIGKILL);
		(void)waitpid(s->pid, &s->status, 0);
		s->pid = 0;
	}
	for (int j = 0; j < s->nseen; j++) {
		if (sdproc_alive(s->seen[j]) && sdproc_is_worker(s->seen[j])) {
			kill(s->seen[j], SIGCONT);
			kill(s->seen[j], SIGKILL);
		}
	}
}

/* Supervisors get SIGCONT and SIGTERM, then SIGKILL after 20 s; workers
 * left behind get SIGKILL. */
void
sd_stop_all(bool check)
{
	pid_t w[64];

	for (int i = 0; i < chaos.nsd; i++) {
		struct chaos_sd *s = &chaos.sd[i];
		(void)sd_workers(s, w, 64);
		if (s->pid > 0) {
			s->expect_end = true;
			s->term = check;
			kill(s->pid, SIGCONT);
			kill(s->pid, SIGTERM);
		}
	}
	for (int i = 0; i < chaos.nsd; i++) {
		sd_reap(i, check);
	}
}

void
sd_kill_all(void)
{
	for (int i = 0; i < chaos.nsd; i++) {
		if (chaos.sd[i].pid > 0) {
			kill(chaos.sd[i].pid, SIGKILL);
		}
		for (int j = 0; j < chaos.sd[i].nseen; j++) {
			if (sdproc_is_worker(chaos.sd[i].seen[j])) {
				kill(chaos.sd[i].seen[j], SIGKILL);
			}
		}
	}
}
