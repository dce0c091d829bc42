/* test_ctl.c: sympoziumctl's pure half (ctl/ctl.h): the default socket,
 * the command line and its errors, durations, and the text rendering of
 * each reply (status screen, worker table, one worker, actions), also of
 * replies with missing fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "ctl/ctl.h"

static int
parse(struct ctl_opts *o, char *err, size_t len, ...)
{
	char *argv[16] = { (char *)"sympoziumctl" };
	int argc = 1;
	va_list ap;

	memset(o, 0, sizeof(*o));
	snprintf(o->socket, sizeof(o->socket), "/dflt.sock");
	va_start(ap, len);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL) {
		argc++;
	}
	va_end(ap);
	err[0] = '\0';
	return (ctl_parse_args(argc, argv, o, err, len));
}

static void
test_default_socket(void **state)
{
	char p[256];

	(void)state;
	ctl_default_socket(p, sizeof(p), "/run/x.sock", "/tmp", 5);
	assert_string_equal(p, "/run/x.sock");
	ctl_default_socket(p, sizeof(p), "", NULL, 1000);
	assert_string_equal(p, "/tmp/sympoziumd-1000/health.sock");
	ctl_default_socket(p, sizeof(p), NULL, "/var/tmp", 0);
	assert_string_equal(p, "/var/tmp/sympoziumd-0/health.sock");
}

static void
test_args(void **state)
{
	struct ctl_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "status", NULL), 0);
	assert_int_equal(o.req.cmd, HP_STATUS);
	assert_string_equal(o.socket, "/dflt.sock");
	assert_false(o.json);
	assert_false(o.watch);
	assert_int_equal(o.timeout_ms, CTL_DEFAULT_TIMEOUT_MS);
	assert_int_equal(parse(&o, err, sizeof(err), "--socket", "/s",
	                         "--json", "restart", "testctl-1", NULL),
	        0);
	assert_int_equal(o.req.cmd, HP_RESTART);
	assert_string_equal(o.req.name, "testctl-1");
	assert_string_equal(o.socket, "/s");
	assert_true(o.json);
	/* --watch with and without seconds, anywhere */
	assert_int_equal(
	        parse(&o, err, sizeof(err), "workers", "--watch", NULL), 0);
	assert_true(o.watch);
	assert_int_equal(o.interval_ms, 2000);
	assert_int_equal(
	        parse(&o, err, sizeof(err), "--watch", "0.5", "status", NULL),
	        0);
	assert_int_equal(o.interval_ms, 500);
	assert_int_equal(o.req.cmd, HP_STATUS);
	assert_int_equal(parse(&o, err, sizeof(err), "--watch=3", "--count",
	                         "4", "--timeout", "1.5", "status", NULL),
	        0);
	assert_int_equal(o.interval_ms, 3000);
	assert_int_equal(o.count, 4);
	assert_int_equal(o.timeout_ms, 1500);
	assert_int_equal(parse(&o, err, sizeof(err), "--help", NULL), 0);
	assert_true(o.help);
	assert_non_null(strstr(ctl_usage(), "pause CONTROLLER"));
}

static void
expect_usage(const char *why, ...)
{
	char *argv[16] = { (char *)"sympoziumctl" };
	int argc = 1;
	struct ctl_opts o;
	char err[256] = "";
	va_list ap;

	memset(&o, 0, sizeof(o));
	va_start(ap, why);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL) {
		argc++;
	}
	va_end(ap);
	assert_int_equal(ctl_parse_args(argc, argv, &o, err, sizeof(err)), -1);
	if (strstr(err, why) == NULL) {
		print_error("got \"%s\"\n", err);
	}
	assert_non_null(strstr(err, why));
}

static void
test_args_bad(void **state)
{
	(void)state;
	expect_usage("missing command", NULL);
	expect_usage("missing command", "--json", NULL);
	expect_usage("unknown command \"stat\"", "stat", NULL);
	expect_usage("restart: want exactly one NAME", "restart", NULL);
	expect_usage("pause: want exactly one NAME", "pause", "a", "b", NULL);
	expect_usage("status: takes no argument", "status", "x", NULL);
	expect_usage("unknown flag --frob", "--frob", "status", NULL);
	expect_usage("--socket: missing value", "status", "--socket", NULL);
	expect_usage(
	        "--timeout: want seconds", "--timeout", "0", "status", NULL);
	expect_usage("--count: want N", "--count", "x", "status", NULL);
	expect_usage("--watch: want seconds", "--watch=-1", "status", NULL);
}

static void
test_durations(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(ctl_fmt_dur(-1, b, sizeof(b)), "-");
	assert_string_equal(ctl_fmt_dur(0, b, sizeof(b)), "0ms");
	assert_string_equal(ctl_fmt_dur(850, b, sizeof(b)), "850ms");
	assert_string_equal(ctl_fmt_dur(3150, b, sizeof(b)), "3.1s");
	assert_string_equal(ctl_fmt_dur(123000, b, sizeof(b)), "2m3s");
	assert_string_equal(ctl_fmt_dur(3720000, b, sizeof(b)), "1h2m");
	assert_string_equal(ctl_fmt_dur(273600000, b, sizeof(b)), "3d4h");
}

static const char status_reply[]
        = "{\"ok\":true,\"supervisor\":{\"pid\":77,\"role\":\"leader\","
          "\"epoch\":2,\"roleSinceAgoMs\":61000,\"uptimeMs\":62000,"
          "\"leaderElection\":true,\"leaseHolder\":\"host_1\","
          "\"api\":{\"total\":9,\"errors\":1},\"relists\":0,"
          "\"watchRestarts\":3},"
          "\"controllers\":[{\"name\":\"testctl\",\"paused\":true,"
          "\"depth\":4,\"parked\":1,\"adds\":10,\"retries\":2,"
          "\"quarantined\":1,\"reconciles\":{\"success\":8,\"error\":2,"
          "\"requeue\":1,\"requeue_after\":1},"
          "\"latencyMs\":{\"p50\":12,\"p99\":2500}}],"
          "\"kinds\":[{\"name\":\"a\",\"synced\":true,\"objects\":5,"
          "\"resource\":\"configmaps\",\"ageMs\":0,\"failing\":0},"
          "{\"name\":\"b\",\"synced\":false,\"objects\":2,"
          "\"resource\":\"secrets\",\"ageMs\":312000,\"failing\":4}],"
          "\"workers\":[{\"name\":\"testctl-0\",\"pid\":1234,"
          "\"state\":\"busy\",\"startedAgoMs\":5000,\"restarts\":2,"
          "\"lastExit\":\"signal SIGKILL\",\"heartbeatAgeMs\":150,"
          "\"key\":\"default/stuck\",\"keyAgeMs\":4200,"
          "\"reconciles\":{\"success\":3,\"error\":1},\"lastError\":\"x\","
          "\"latencyMs\":{\"p50\":10,\"p99\":900}},"
          "{\"name\":\"testctl-1\",\"pid\":0,\"state\":\"crash-loop\","
          "\"startedAgoMs\":-1,\"restarts\":7,\"lastExit\":\"exit 3\","
          "\"heartbeatAgeMs\":-1,\"key\":\"\",\"lastError\":\"told to "
          "fail\"}]}";

static char *
render(enum hp_cmd cmd, const char *json)
{
	json_object *o = jx_parse(json, strlen(json), 0, NULL, 0);
	struct buf b = BUF_INIT;

	assert_non_null(o);
	ctl_format(cmd, o, &b);
	json_object_put(o);
	buf_putc(&b, '\0');
	return (buf_detach(&b, NULL));
}

static void
test_status_screen(void **state)
{
	char *t = render(HP_STATUS, status_reply);

	(void)state;
	if (getenv("SHOW") != NULL) {
		fputs(t, stdout);
	}
	assert_non_null(strstr(t,
	        "supervisor  pid 77, leader (epoch 2) for "
	        "1m1s, up 1m2s\n"));
	assert_non_null(strstr(t, "lease       elected (holder host_1)"));
	assert_non_null(strstr(t, "caches      1/2 kinds synced, 7 objects"));
	/* the oldest cache, and a line for each stale or failing one */
	assert_non_null(strstr(t,
	        "; oldest 5m12s (secrets); 1 failing\n"
	        "  cache     secrets (b): age 5m12s, 4 "
	        "failure(s)\n"));
	assert_null(strstr(t, "cache     configmaps"));
	assert_non_null(strstr(t,
	        "api         9 requests, 1 errors; 0 "
	        "relists, 3 watch restarts"));
	assert_non_null(strstr(t, "testctl          paused       4"));
	assert_non_null(strstr(t, "2.5s"));
	/* the worker table */
	assert_non_null(strstr(t, "WORKER"));
	assert_non_null(strstr(t, "testctl-0"));
	assert_non_null(strstr(t, "busy"));
	assert_non_null(strstr(t, "signal SIGKILL"));
	assert_non_null(strstr(t, "default/stuck (4.2s)"));
	assert_non_null(strstr(t, "crash-loop"));
	assert_non_null(strstr(t, "! told to fail"));
	/* fits a screen: no line over 160 columns */
	for (char *l = t, *nl; (nl = strchr(l, '\n')) != NULL; l = nl + 1) {
		assert_true(nl - l <= 160);
	}
	free(t);
}

static void
test_other_replies(void **state)
{
	char *t;

	(void)state;
	t = render(HP_WORKERS, status_reply);
	assert_non_null(strstr(t, "testctl-1"));
	assert_null(strstr(t, "supervisor"));
	free(t);
	/* a degraded controller: its STATE and a line with the reason */
	t = render(HP_STATUS,
	        "{\"controllers\":[{\"name\":\"agentrun\",\"state\":"
	        "\"degraded\",\"stateReason\":\"workers died on 3 "
	        "different keys in a row (last: signal SIGSYS on ns/r)\","
	        "\"stateSinceAgoMs\":12000},{\"name\":\"schedule\","
	        "\"state\":\"ok\",\"stateReason\":\"\"}]}");
	assert_non_null(strstr(t, "agentrun         degraded     0"));
	assert_non_null(strstr(t, "schedule         active       0"));
	assert_non_null(strstr(t,
	        "agentrun degraded for 12.0s: workers died on 3 different "
	        "keys "
	        "in a row (last: signal SIGSYS on ns/r)\n"));
	assert_null(strstr(t, "schedule ok for"));
	free(t);
	t = render(HP_WORKER,
	        "{\"worker\":{\"name\":\"testctl-0\",\"controller\":"
	        "\"testctl\",\"pid\":9,\"state\":\"ready\",\"restarts\":1,"
	        "\"lastExit\":\"exit 1\",\"reconciles\":{\"success\":4},"
	        "\"latencyMs\":{\"p50\":5,\"p90\":7,\"p99\":9,\"count\":4}}}");
	assert_non_null(strstr(t,
	        "worker      testctl-0 (controller "
	        "testctl)"));
	assert_non_null(strstr(t, "state       ready"));
	assert_non_null(strstr(t, "restarts    1 (last exit: exit 1)"));
	assert_non_null(strstr(t, "success 4, error 0"));
	assert_non_null(strstr(t, "p50 5ms, p90 7ms, p99 9ms over 4"));
	assert_non_null(strstr(t, "key         - (for -)"));
	free(t);
	t = render(HP_RESTART, "{\"restarted\":[\"a-0\",\"a-1\"]}");
	assert_string_equal(t, "restarted a-0\nrestarted a-1\n");
	free(t);
	t = render(HP_PAUSE, "{\"controller\":\"a\",\"paused\":true}");
	assert_string_equal(t, "a paused\n");
	free(t);
	t = render(HP_RESUME, "{\"controller\":\"a\",\"paused\":false}");
	assert_string_equal(t, "a resumed\n");
	free(t);
	/* empty or odd replies render without crashing */
	t = render(HP_STATUS, "{\"workers\":7,\"controllers\":{}}");
	assert_non_null(strstr(t, "supervisor  pid 0"));
	free(t);
	t = render(HP_WORKER, "{}");
	assert_non_null(strstr(t, "worker      -"));
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_socket),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_args_bad),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_status_screen),
		cmocka_unit_test(test_other_replies),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
