/*
 * testctl.c: the test controller, linked only into the test worker binary
 * bin/tests/sympozium-worker-test (never into bin/sympozium-worker, so no
 * production configuration can reach it).  Each WORK's behaviour is chosen
 * by the object's annotation testctl.sympozium.ai/action:
 *
 *   ok (default)  done, with one write: create ConfigMap <name>-out
 *                 (tolerating AlreadyExists)
 *   error         verdict error            requeue     verdict requeue
 *   after:MS      requeue after MS         terminal    verdict terminal
 *   sleep:MS      sleep, then done         hang        never answer
 *   abort         abort()                  segv        SIGSEGV
 *   exit:N        _exit(N)                 malformed   a RESULT with an
 *                                                      invalid verdict
 *   view:NS/NAME  reads ConfigMap NS/NAME through the view and copies its
 *                 data into <name>-out
 *   get:PLURAL:NS/NAME  the same with an object of core v1 PLURAL
 *   secret:NAME   reads the metadata view of Secret NAME of the object's
 *                 namespace into <name>-out: data.meta, the view's JSON
 *   log:POD       reads the log of container "c" of pod POD of the
 *                 object's namespace into <name>-out: data.log
 *   views:N       N views of the absent ConfigMap <name>-none (each a
 *                 live GET), then done with data.views: how many
 *                 answered; a terminal verdict at the first one refused
 *   open:PATH     opens PATH read-only (the sandbox kills the worker:
 *                 SIGSYS); when it opens, done with {"opened": PATH}
 *   socket        creates a TCP socket (killed likewise); when it is
 *                 created, done with {"socket": "created"}
 *   env           done with the worker's whole environment as data
 *   noop          done, no writes (benchmarks: the pipeline's own cost)
 *   stamp         done, no writes, after writing the line "testctl-stamp
 *                 <resourceVersion> <CLOCK_MONOTONIC us at receipt>" to
 *                 stderr (the supervisor's log; benchmarks: event-to-worker
 *                 latency with the sandbox on; tests/bench/bench_dispatch.c)
 *   foreign:NS/NAME  a RESULT of two writes: its usual <name>-out, then a
 *                 delete of ConfigMap NS/NAME (the write policy refuses
 *                 the whole RESULT when that is not its own)
 *   switch:NS/NAME  the action in data.action of ConfigMap NS/NAME (read
 *                 through the view at each reconcile; "ok" when it or the
 *                 key is absent): one switch turns a behaviour (exit:3,
 *                 exit:100, ...) on and off for every object using it
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "tests/workers/testctl.h"
#include "workers/kobj.h"
#include "workers/reconcile.h"
#include "workers/view.h"

static const struct ipc_res configmaps = CONTRACT_RES_CONFIGMAPS;

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0) { }
}

static void
write_out(const struct rec_in *in, struct rec_out *out, json_object *data)
{
	json_object *cm = json_object_new_object();
	char name[300];

	snprintf(name, sizeof(name), "%s-out",
	        jx_get_str(in->object, "metadata.name"));
	jx_set_path(cm, "metadata.name", json_object_new_string(name));
	jx_setv(cm, json_object_new_string("true"), "metadata", "labels",
	        TESTCTL_LABEL_OUT, NULL);
	kobj_set_owner(cm, in->object);
	json_object_object_add(
	        cm, "data", data != NULL ? data : json_object_new_object());
	json_object *w = ipc_write_new(IPC_OP_CREATE, &configmaps,
	        jx_get_str(in->object, "metadata.namespace"), NULL, cm);
	ipc_write_set_tolerate(w, IPC_TOL_ALREADY_EXISTS);
	rec_write(out, w);
}

static void
view_action(const struct rec_in *in, struct rec_out *out,
        const struct ipc_res *res, const char *arg)
{
	char ns[256], err[256];
	const char *sl = strchr(arg, '/');
	json_object *obj = NULL, *data = NULL;

	if (sl == NULL || (size_t)(sl - arg) >= sizeof(ns)) {
		rec_verdict(out, IPC_V_TERMINAL, 0, "bad view action");
		return;
	}
	memcpy(ns, arg, (size_t)(sl - arg));
	ns[sl - arg] = '\0';
	int rc = view_get(in->view, res, ns, sl + 1, &obj, err, sizeof(err));
	if (rc < 0) {
		rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
		return;
	}
	if (rc == 0 && json_object_object_get(obj, "data") != NULL) {
		data = jx_copy(json_object_object_get(obj, "data"));
	}
	json_object_put(obj);
	write_out(in, out, data);
	rec_verdict(out, IPC_V_DONE, 0, rc == 1 ? "not found" : NULL);
}

/* get:PLURAL:NS/NAME: view_action() of core v1 PLURAL. */
static void
get_action(const struct rec_in *in, struct rec_out *out, const char *arg)
{
	char plural[64];
	const char *colon = strchr(arg, ':');
	struct ipc_res res = { "", "v1", plural, true };

	if (colon == NULL || (size_t)(colon - arg) >= sizeof(plural)) {
		rec_verdict(out, IPC_V_TERMINAL, 0, "bad get action");
		return;
	}
	snprintf(plural, sizeof(plural), "%.*s", (int)(colon - arg), arg);
	view_action(in, out, &res, colon + 1);
}

static void
secret_action(const struct rec_in *in, struct rec_out *out, const char *name)
{
	char err[256];
	json_object *meta = NULL, *data = json_object_new_object();
	int rc = view_secret_meta(in->view,
	        jx_get_str(in->object, "metadata.namespace"), name, &meta, err,
	        sizeof(err));

	if (rc < 0) {
		json_object_put(data);
		rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
		return;
	}
	json_object_object_add(data, "meta",
	        json_object_new_string(json_object_to_json_string(meta)));
	json_object_put(meta);
	write_out(in, out, data);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

static void
log_action(const struct rec_in *in, struct rec_out *out, const char *pod)
{
	char err[256], *text = NULL;
	json_object *data = json_object_new_object();
	int rc = view_pod_log(in->view,
	        jx_get_str(in->object, "metadata.namespace"), pod, "c", 10,
	        &text, err, sizeof(err));

	json_object_object_add(data, "log",
	        json_object_new_string(rc < 0  ? err
	                        : text != NULL ? text
	                                       : ""));
	free(text);
	write_out(in, out, data);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

static void
views_action(const struct rec_in *in, struct rec_out *out, long n)
{
	char name[300], err[256];
	json_object *data = json_object_new_object();
	long i;

	snprintf(name, sizeof(name), "%s-none",
	        jx_get_str(in->object, "metadata.name"));
	for (i = 0; i < n; i++) {
		json_object *obj = NULL;
		if (view_get(in->view, &configmaps,
		            jx_get_str(in->object, "metadata.namespace"), name,
		            &obj, err, sizeof(err))
		        < 0) {
			json_object_put(data);
			rec_verdict(out, IPC_V_TERMINAL, 0, "view %ld: %s", i,
			        err);
			return;
		}
		json_object_put(obj);
	}
	snprintf(name, sizeof(name), "%ld", i);
	json_object_object_add(data, "views", json_object_new_string(name));
	write_out(in, out, data);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

/* The action switch:NS/NAME names (buf holds it), "error" when the view
 * fails. */
static const char *
switched(const struct rec_in *in, const char *arg, char *buf, size_t len)
{
	char ns[256], err[256];
	const char *sl = strchr(arg, '/'), *v;
	json_object *obj = NULL;

	if (sl == NULL || (size_t)(sl - arg) >= sizeof(ns)) {
		return ("bad switch");
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(sl - arg), arg);
	int rc = view_get(
	        in->view, &configmaps, ns, sl + 1, &obj, err, sizeof(err));
	if (rc < 0) {
		return ("error");
	}
	v = rc == 0 ? jx_get_str(obj, "data.action") : NULL;
	snprintf(buf, len, "%s", v != NULL ? v : "ok");
	json_object_put(obj);
	return (buf);
}

/* Tries what the sandbox forbids: open:PATH and socket.  Reached only
 * when the sandbox is off (or relaxed, for open). */
static void
forbidden(const struct rec_in *in, struct rec_out *out, const char *a)
{
	json_object *data = json_object_new_object();
	int fd;

	if (strncmp(a, "open:", 5) == 0) {
		fd = open(a + 5, O_RDONLY | O_CLOEXEC);
		json_object_object_add(
		        data, "opened", json_object_new_string(a + 5));
	} else {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		json_object_object_add(
		        data, "socket", json_object_new_string("created"));
	}
	if (fd < 0) {
		json_object_put(data);
		rec_verdict(out, IPC_V_ERROR, 0, "%s failed", a);
		return;
	}
	close(fd);
	write_out(in, out, data);
}

/* The environment as ConfigMap data. */
static void
env_action(const struct rec_in *in, struct rec_out *out)
{
	extern char **environ;
	json_object *data = json_object_new_object();

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		char key[256];
		if (eq != NULL && (size_t)(eq - *e) < sizeof(key)) {
			snprintf(key, sizeof(key), "%.*s", (int)(eq - *e), *e);
			json_object_object_add(
			        data, key, json_object_new_string(eq + 1));
		}
	}
	write_out(in, out, data);
}

/* One line per WORK on stderr, written with one write(2), so the lines of
 * the six workers of a benchmark do not interleave. */
static void
stamp_action(const struct rec_in *in, long long us)
{
	const char *rv = jx_get_str(in->object, "metadata.resourceVersion");
	char line[128];
	int n = snprintf(line, sizeof(line), "testctl-stamp %s %lld\n",
	        rv != NULL ? rv : "-", us);

	(void)!write(STDERR_FILENO, line, (size_t)n);
}

static long long
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* foreign:NS/NAME: a legitimate write, then one the policy refuses. */
static void
foreign_action(const struct rec_in *in, struct rec_out *out, const char *arg)
{
	const char *sl = strchr(arg, '/');
	char ns[256];

	if (sl == NULL || sl == arg || (size_t)(sl - arg) >= sizeof(ns)) {
		rec_verdict(out, IPC_V_TERMINAL, 0, "bad foreign action");
		return;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(sl - arg), arg);
	write_out(in, out, NULL);
	rec_write(out,
	        ipc_write_new(IPC_OP_DELETE, &configmaps, ns, sl + 1, NULL));
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	long long recv_us = mono_us();
	json_object *ann = jx_getv(in->object, "metadata", "annotations",
	        TESTCTL_ANN_ACTION, NULL);
	const char *a = ann != NULL ? json_object_get_string(ann) : "ok";
	char sw[256];

	if (strncmp(a, "switch:", 7) == 0) {
		a = switched(in, a + 7, sw, sizeof(sw));
	}
	if (in->object == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, "gone");
	} else if (strcmp(a, "ok") == 0) {
		write_out(in, out, NULL);
	} else if (strcmp(a, "noop") == 0) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
	} else if (strcmp(a, "stamp") == 0) {
		stamp_action(in, recv_us);
	} else if (strcmp(a, "error") == 0) {
		rec_verdict(out, IPC_V_ERROR, 0, "told to fail");
	} else if (strcmp(a, "requeue") == 0) {
		rec_verdict(out, IPC_V_REQUEUE, 0, NULL);
	} else if (strncmp(a, "after:", 6) == 0) {
		rec_verdict(out, IPC_V_REQUEUE_AFTER, atol(a + 6), NULL);
	} else if (strcmp(a, "terminal") == 0) {
		rec_verdict(out, IPC_V_TERMINAL, 0, "told to give up");
	} else if (strncmp(a, "sleep:", 6) == 0) {
		sleep_ms(atol(a + 6));
	} else if (strcmp(a, "hang") == 0) {
		for (;;) {
			pause();
		}
	} else if (strcmp(a, "abort") == 0) {
		abort();
	} else if (strcmp(a, "segv") == 0) {
		raise(SIGSEGV);
	} else if (strncmp(a, "exit:", 5) == 0) {
		_exit(atoi(a + 5));
	} else if (strcmp(a, "malformed") == 0) {
		out->verdict = (enum ipc_verdict)99; /* no wire name */
	} else if (strncmp(a, "view:", 5) == 0) {
		view_action(in, out, &configmaps, a + 5);
	} else if (strncmp(a, "get:", 4) == 0) {
		get_action(in, out, a + 4);
	} else if (strncmp(a, "secret:", 7) == 0) {
		secret_action(in, out, a + 7);
	} else if (strncmp(a, "log:", 4) == 0) {
		log_action(in, out, a + 4);
	} else if (strncmp(a, "views:", 6) == 0) {
		views_action(in, out, atol(a + 6));
	} else if (strncmp(a, "open:", 5) == 0 || strcmp(a, "socket") == 0) {
		forbidden(in, out, a);
	} else if (strcmp(a, "env") == 0) {
		env_action(in, out);
	} else if (strncmp(a, "foreign:", 8) == 0) {
		foreign_action(in, out, a + 8);
	} else {
		rec_verdict(out, IPC_V_TERMINAL, 0, "unknown action %s", a);
	}
}

static const struct reconciler testctl = { "testctl", reconcile };

const struct reconciler *const rec_extra[] = { &testctl, NULL };
