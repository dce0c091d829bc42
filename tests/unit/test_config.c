/*
 * test_config.c: sympoziumd's flags: defaults, every flag, bad values,
 * the lease timing rule, --workers; and the controller watch table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/config.h"
#include "supervisor/ctrl.h"

static int
parse(struct sup_config *c, char *err, size_t len, ...)
{
	char *argv[32] = { "sympoziumd" };
	int argc = 1;
	va_list ap;
	char *a;

	va_start(ap, len);
	while ((a = va_arg(ap, char *)) != NULL && argc < 31) {
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;
	return (cfg_parse(argc, argv, c, err, len));
}

static void
test_defaults(void **state)
{
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), NULL), 0);
	assert_false(c.leader_elect);
	assert_string_equal(c.le_namespace, "sympozium-system");
	assert_string_equal(c.le_id, "sympozium-controller-leader");
	assert_int_equal(c.lease_ms, 15000);
	assert_int_equal(c.renew_ms, 10000);
	assert_int_equal(c.retry_ms, 2000);
	assert_string_equal(c.metrics_addr, ":8080");
	assert_string_equal(c.probe_addr, ":8081");
	assert_int_equal(c.reconcile_ms, 60000);
	assert_null(c.kubeconfig);
	assert_int_equal(cfg_workers_for(&c, "agentrun"), 1);
}

static void
test_flags(void **state)
{
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--kubeconfig", "kc",
	                "--leader-elect", "--leader-election-namespace=ns",
	                "--leader-elect-lease-duration", "3s",
	                "--leader-elect-renew-deadline", "2s",
	                "--leader-elect-retry-period", "500ms", "--workers",
	                "agentrun=4", "--workers", "skillpack=2",
	                "--reconcile-timeout", "1m30s", "--log-format", "json",
	                "-v", "--controllers", "testctl", NULL),
	        0);
	assert_string_equal(c.kubeconfig, "kc");
	assert_true(c.leader_elect);
	assert_string_equal(c.le_namespace, "ns");
	assert_int_equal(c.lease_ms, 3000);
	assert_int_equal(c.retry_ms, 500);
	assert_int_equal(cfg_workers_for(&c, "agentrun"), 4);
	assert_int_equal(cfg_workers_for(&c, "skillpack"), 2);
	assert_int_equal(c.reconcile_ms, 90000);
	assert_string_equal(c.log_format, "json");
	assert_int_equal(c.verbose, 1);
	assert_string_equal(c.controllers, "testctl");
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--leader-elect=false", NULL), 0);
	assert_false(c.leader_elect);
	assert_int_equal(parse(&c, err, sizeof(err), "--help", NULL), 0);
	assert_true(c.help);
	assert_non_null(strstr(cfg_usage(), "--workers NAME=N"));
}

static void
test_bad(void **state)
{
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), "--nope", NULL), -1);
	assert_int_equal(parse(&c, err, sizeof(err), "--reconcile-timeout",
	                         "soon", NULL),
	        -1);
	assert_non_null(strstr(err, "invalid duration"));
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--workers", "agentrun", NULL),
	        -1);
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--workers", "a=0", NULL), -1);
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--log-format", "xml", NULL), -1);
	assert_int_equal(parse(&c, err, sizeof(err),
	                         "--leader-elect-renew-deadline", "20s", NULL),
	        -1);
	assert_non_null(strstr(err, "lease-duration > renew-deadline"));
	assert_int_equal(parse(&c, err, sizeof(err), "extra", NULL), -1);
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--leader-elect=maybe", NULL), -1);
}

/* --allow-skill-wildcard: off by default, a plain switch, in --help. */
/* --shadow: off by default; refuses --leader-elect (never a Lease). */
static void
test_shadow(void **state)
{
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), NULL), 0);
	assert_false(c.shadow);
	assert_int_equal(parse(&c, err, sizeof(err), "--shadow", NULL), 0);
	assert_true(c.shadow);
	assert_false(c.leader_elect);
	assert_int_equal(parse(&c, err, sizeof(err), "--shadow",
	                         "--leader-elect=false", NULL),
	        0);
	assert_int_equal(parse(&c, err, sizeof(err), "--shadow",
	                         "--leader-elect", NULL),
	        -1);
	assert_non_null(strstr(err, "--leader-elect"));
	assert_int_equal(parse(&c, err, sizeof(err), "--leader-elect=true",
	                         "--shadow", NULL),
	        -1);
	assert_non_null(strstr(cfg_usage(), "--shadow"));
}

static void
test_allow_skill_wildcard(void **state)
{
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), NULL), 0);
	assert_false(c.allow_skill_wildcard);
	assert_int_equal(
	        parse(&c, err, sizeof(err), "--allow-skill-wildcard", NULL),
	        0);
	assert_true(c.allow_skill_wildcard);
	assert_int_equal(parse(&c, err, sizeof(err),
	                         "--allow-skill-wildcard=yes", NULL),
	        -1);
	assert_non_null(strstr(cfg_usage(), "--allow-skill-wildcard"));
}

static void
test_ctrl_table(void **state)
{
	const struct ctrl_spec *s;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (s = ctrl_at(i)) != NULL; i++, n++) {
		/* the config controller watches only its primary, as
		 * upstream does (For, no Owns) */
		assert_true(
		        s->nwatches >= 2 || strcmp(s->name, "config") == 0);
		assert_int_equal(s->watches[0].role, CTRL_PRIMARY);
		for (size_t j = 1; j < s->nwatches; j++) {
			assert_int_not_equal(s->watches[j].role, CTRL_PRIMARY);
			if (s->watches[j].role == CTRL_CHILD) {
				/* children are label-selected */
				assert_non_null(s->watches[j].selector);
			}
		}
	}
	assert_int_equal(n, 9); /* eight product controllers and testctl */
	assert_non_null(ctrl_find("agentrun"));
	assert_string_equal(
	        ctrl_find("skillpack")->watches[1].res.plural, "configmaps");
	assert_null(ctrl_find("nope"));
	assert_null(ctrl_find(NULL));
}

static void
test_max_response_bytes(void **state)
{
	static const char *const bad[]
	        = { "", "x", "1k", "-1Mi", "1Ti", "65535", "17Gi", "1Mi2" };
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), NULL), 0);
	assert_int_equal(c.max_response_bytes, 0);
	assert_int_equal(parse(&c, err, sizeof(err), "--max-response-bytes",
	                         "64Mi", NULL),
	        0);
	assert_int_equal(c.max_response_bytes, 64 << 20);
	assert_int_equal(parse(&c, err, sizeof(err),
	                         "--max-response-bytes=65536", NULL),
	        0);
	assert_int_equal(c.max_response_bytes, 65536);
	assert_int_equal(parse(&c, err, sizeof(err), "--max-response-bytes",
	                         "2Gi", NULL),
	        0);
	assert_int_equal(c.max_response_bytes, (size_t)2 << 30);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&c, err, sizeof(err),
		                         "--max-response-bytes", bad[i], NULL),
		        -1);
		assert_non_null(strstr(err, "--max-response-bytes"));
	}
}

static void
test_max_concurrent_writes(void **state)
{
	static const char *const bad[] = { "0", "1025", "-3", "x", "", "8k" };
	struct sup_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), NULL), 0);
	assert_int_equal(c.max_writes, 32);
	assert_int_equal(parse(&c, err, sizeof(err), "--max-concurrent-writes",
	                         "1", NULL),
	        0);
	assert_int_equal(c.max_writes, 1);
	assert_int_equal(parse(&c, err, sizeof(err),
	                         "--max-concurrent-writes=1024", NULL),
	        0);
	assert_int_equal(c.max_writes, 1024);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(
		        parse(&c, err, sizeof(err), "--max-concurrent-writes",
		                bad[i], NULL),
		        -1);
		assert_non_null(strstr(err, "--max-concurrent-writes"));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_concurrent_writes),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_allow_skill_wildcard),
		cmocka_unit_test(test_shadow),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_max_response_bytes),
		cmocka_unit_test(test_ctrl_table),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
