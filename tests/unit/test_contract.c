/*
 * test_contract.c: the contract of common/contract.h between the
 * supervisor and the reconcilers.  The table is consistent (a primary
 * first, every child kind with a label key that parses as a selector,
 * names and finalizers unique); the supervisor's watch tables
 * (supervisor/ctrl.c) are that table, row for row; every product
 * controller has a reconciler in the worker registry and the other way
 * round; the test controller is an extra, only run when named; and the
 * check that fakesup_run() applies to every reconciler unit test
 * (tests/lib/contractcheck.h) refuses a child the supervisor's watch would
 * not select.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "supervisor/ctrl.h"
#include "supervisor/labelsel.h"
#include "tests/lib/contractcheck.h"
#include "workers/reconcile.h"

static bool
same_res(const struct kapi_res *a, const struct kapi_res *b)
{
	return (strcmp(a->group, b->group) == 0
	        && strcmp(a->version, b->version) == 0
	        && strcmp(a->plural, b->plural) == 0
	        && a->namespaced == b->namespaced);
}

static bool
same_str(const char *a, const char *b)
{
	return (a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0);
}

static void
check_watch(const struct contract_ctrl *c, size_t j)
{
	const struct contract_watch *w = &c->watches[j];
	struct labelsel *sel;
	char err[256];

	assert_non_null(w->kind);
	assert_true(w->kind[0] != '\0' && w->res.plural[0] != '\0');
	assert_true((w->role == CONTRACT_PRIMARY) == (j == 0));
	if (w->role == CONTRACT_CHILD) {
		/* a label key: the selector "has the key" */
		assert_non_null(w->label);
		assert_null(strpbrk(w->label, "=!,() "));
	}
	sel = labelsel_parse(w->label, err, sizeof(err));
	if (sel == NULL) {
		fail_msg("%s watch %zu: %s", c->name, j, err);
	}
	labelsel_free(sel);
}

static void
test_table(void **state)
{
	const struct contract_ctrl *c, *d;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (c = contract_at(i)) != NULL; i++, n++) {
		/* the config controller watches only its primary, as
		 * upstream does (For, no Owns) */
		assert_true(
		        c->nwatches >= 2 || strcmp(c->name, "config") == 0);
		assert_int_equal(c->watches[0].role, CONTRACT_PRIMARY);
		for (size_t j = 0; j < c->nwatches; j++) {
			check_watch(c, j);
		}
		for (size_t k = 0; k < i; k++) {
			d = contract_at(k);
			assert_string_not_equal(c->name, d->name);
			assert_false(c->finalizer != NULL
			        && same_str(c->finalizer, d->finalizer));
		}
		assert_ptr_equal(contract_find(c->name), c);
	}
	assert_int_equal(n, 9); /* eight product controllers, testctl */
	assert_null(contract_find("nope"));
	assert_null(contract_find(NULL));
}

/* Whether c watches (so caches) res. */
static bool
watched(const struct contract_ctrl *c, const struct kapi_res *res)
{
	for (size_t j = 0; j < c->nwatches; j++) {
		if (same_res(&c->watches[j].res, res)) {
			return (true);
		}
	}
	return (false);
}

/* The write table of c: Events and its primary's own writes on the
 * primary's resource; every row that mutates objects it must find in
 * the cache names a resource c watches; a row has what its kind needs. */
static void
check_writes(const struct contract_ctrl *c)
{
	static const struct kapi_res events = CONTRACT_RES_EVENTS;
	bool ev = false;

	assert_true(c->nwrites > 0);
	for (size_t j = 0; j < c->nwrites; j++) {
		const struct contract_write *w = &c->writes[j];
		bool mutates = (w->ops & CONTRACT_W_MUTATE) != 0;
		assert_true(w->ops != 0);
		assert_true((w->ops & CONTRACT_W_APPLY) == 0); /* none does */
		ev |= same_res(&w->res, &events) && w->ops == CONTRACT_W_EVENT;
		/* a spec-named object may be either (Gateway, GatewayClass) */
		assert_true(w->own == CONTRACT_OWN_SPEC_NAME
		        || w->res.namespaced
		                == (w->own != CONTRACT_OWN_CLUSTER));
		switch (w->own) {
		case CONTRACT_OWN_SELF:
			assert_true(w->ops == CONTRACT_W_EVENT
			        || same_res(&w->res, &c->watches[0].res));
			break;
		case CONTRACT_OWN_CHILD:
			assert_non_null(w->label);
			assert_true(!mutates || watched(c, &w->res));
			break;
		case CONTRACT_OWN_LABEL:
			assert_true((w->ops & CONTRACT_W_CREATE) == 0);
			assert_true(w->label != NULL || w->match != NULL);
			assert_true(watched(c, &w->res));
			break;
		case CONTRACT_OWN_CLUSTER:
			/* checked by name: the default RBAC cannot watch */
			assert_non_null(w->label);
			assert_non_null(w->prefix);
			break;
		case CONTRACT_OWN_SHARED:
			assert_int_equal(w->ops, CONTRACT_W_CREATE);
			assert_non_null(w->prefix);
			break;
		case CONTRACT_OWN_NAMED:
			assert_int_equal(w->ops, CONTRACT_W_DELETE);
			assert_non_null(w->ref);
			assert_non_null(w->match);
			break;
		case CONTRACT_OWN_ADOPT:
			/* a patch of a child kind the controller watches */
			assert_int_equal(w->ops, CONTRACT_W_PATCH);
			assert_non_null(w->label);
			assert_true(watched(c, &w->res));
			break;
		case CONTRACT_OWN_SPEC_NAME:
			/* no cache: created labelled, deleted by its name */
			assert_int_equal(w->ops
			                & ~(unsigned)(CONTRACT_W_CREATE
			                        | CONTRACT_W_DELETE),
			        0);
			assert_non_null(w->ref);
			assert_non_null(w->prefix);
			assert_non_null(w->match);
			assert_non_null(strchr(w->match, '='));
			break;
		case CONTRACT_OWN_TESTED:
			/* the API server tests the controller reference */
			assert_int_equal(w->ops, CONTRACT_W_PATCH);
			assert_true(w->res.namespaced);
			assert_non_null(w->paths);
			assert_non_null(w->paths[0]);
			break;
		case CONTRACT_OWN_KEY_SECRET:
			/* a created-only Secret of one generated key */
			assert_int_equal(w->ops, CONTRACT_W_CREATE);
			assert_string_equal(w->res.plural, "secrets");
			assert_non_null(w->label);
			assert_non_null(w->ref);
			assert_non_null(w->suffix);
			assert_non_null(w->match);
			break;
		case CONTRACT_OWN_ORPHAN:
			/* a patch of a child kind, named by the spec */
			assert_int_equal(w->ops, CONTRACT_W_PATCH);
			assert_true(w->res.namespaced);
			assert_non_null(w->label);
			assert_non_null(w->ref);
			assert_non_null(w->match);
			assert_true(watched(c, &w->res));
			break;
		}
	}
	assert_true(ev);
}

static void
test_writes(void **state)
{
	const struct contract_ctrl *c;

	(void)state;
	for (size_t i = 0; (c = contract_at(i)) != NULL; i++) {
		check_writes(c);
	}
}

/* ctrl_find(c->name) is c, row for row. */
static void
check_ctrl(const struct contract_ctrl *c)
{
	const struct ctrl_spec *s = ctrl_find(c->name);
	const enum ctrl_role role[] = { [CONTRACT_PRIMARY] = CTRL_PRIMARY,
		[CONTRACT_CHILD] = CTRL_CHILD,
		[CONTRACT_READ] = CTRL_READ };

	assert_non_null(s);
	assert_int_equal(s->nwatches, c->nwatches);
	assert_int_equal(s->test_only, contract_is_extra(c));
	for (size_t j = 0; j < c->nwatches; j++) {
		const struct ctrl_watch *w = &s->watches[j];
		const struct contract_watch *cw = &c->watches[j];
		assert_string_equal(w->kind, cw->kind);
		assert_true(same_res(&w->res, &cw->res));
		assert_true(same_str(w->selector, cw->label));
		assert_int_equal(w->role, role[cw->role]);
	}
}

static void
test_ctrl_is_the_table(void **state)
{
	const struct contract_ctrl *c;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (c = contract_at(i)) != NULL; i++, n++) {
		check_ctrl(c);
	}
	for (size_t i = 0; ctrl_at(i) != NULL; i++) {
		assert_non_null(contract_find(ctrl_at(i)->name));
		n--;
	}
	assert_int_equal(n, 0);
}

/* Every product controller has a reconciler, every production
 * reconciler a controller. */
static void
test_registry(void **state)
{
	const struct contract_ctrl *c;
	char *text = NULL, *line, *save;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	rec_list(f);
	fclose(f);
	for (size_t i = 0; (c = contract_at(i)) != NULL; i++) {
		if (!contract_is_extra(c)) {
			assert_non_null(rec_find(c->name));
			assert_non_null(strstr(text, c->name));
		}
	}
	for (line = strtok_r(text, "\n", &save); line != NULL;
	        line = strtok_r(NULL, "\n", &save)) {
		assert_non_null(contract_find(line));
	}
	free(text);
}

static void
test_extra(void **state)
{
	const struct contract_ctrl *t = contract_find("testctl");

	(void)state;
	assert_non_null(t);
	assert_true(contract_is_extra(t));
	assert_true(ctrl_find("testctl")->test_only);
	assert_false(contract_is_extra(contract_find("agentrun")));
	assert_false(ctrl_find("agentrun")->test_only);
	assert_false(contract_is_extra(NULL));
}

/* contractcheck_write() of a create of res (group/plural) with labels
 * (JSON text, NULL: none) by controller. */
static bool
check(const char *controller, const char *group, const char *plural,
        const char *labels, char *err, size_t errlen)
{
	json_object *o = json_tokener_parse("{\"metadata\":{\"name\":\"c\"}}");
	struct ipc_write w = { .op = IPC_OP_CREATE,
		.res = { group, "v1", plural, true },
		.namespace = "ns",
		.name = "",
		.object = o };
	bool ok;

	if (labels != NULL) {
		jx_setv(o, json_tokener_parse(labels), "metadata", "labels",
		        NULL);
	}
	ok = contractcheck_write(controller, &w, err, errlen);
	json_object_put(o);
	return (ok);
}

static void
test_check(void **state)
{
	char err[512] = "";

	(void)state;
	assert_true(check("agentrun", "batch", "jobs",
	        "{\"" CONTRACT_LABEL_AGENT_RUN "\":\"r\"}", err, sizeof(err)));
	assert_false(check("agentrun", "batch", "jobs",
	        "{\"" CONTRACT_LABEL_INSTANCE "\":\"r\"}", err, sizeof(err)));
	assert_non_null(strstr(err, "agentrun writes Job ns/c"));
	assert_non_null(strstr(err, "(" CONTRACT_LABEL_AGENT_RUN ")"));
	assert_false(
	        check("skillpack", "", "configmaps", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "(none)"));
	/* not a child kind of agentrun, an unknown controller */
	assert_true(
	        check("agentrun", "", "configmaps", NULL, err, sizeof(err)));
	assert_true(check("nope", "batch", "jobs", NULL, err, sizeof(err)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_ctrl_is_the_table),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_extra),
		cmocka_unit_test(test_check),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
