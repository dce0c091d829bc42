/* test_w3trace.c: traceparent parse/format, child span contexts, trace ID. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/w3trace.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static void
test_parse_round_trip(void **state)
{
	struct w3t_ctx c;
	char buf[W3T_TRACEPARENT_LEN + 1], id[33];

	(void)state;
	assert_true(w3t_parse(TP, &c));
	assert_true(c.valid);
	assert_int_equal(c.trace_id[0], 0x4b);
	assert_int_equal(c.span_id[7], 0xb7);
	assert_int_equal(c.flags, 1);
	w3t_format(&c, buf);
	assert_string_equal(buf, TP);
	w3t_trace_id_hex(&c, id);
	assert_string_equal(id, "4bf92f3577b34da6a3ce929d0e0e4736");
}

static void
test_parse_rejects(void **state)
{
	static const char *bad[] = {
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
	};
	struct w3t_ctx c;
	char buf[W3T_TRACEPARENT_LEN + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(w3t_parse(bad[i], &c));
		assert_false(c.valid);
		w3t_format(&c, buf);
		assert_string_equal(buf, "");
	}
	assert_false(w3t_parse(NULL, &c));
}

static void
test_parse_future_version(void **state)
{
	struct w3t_ctx c;

	(void)state;
	assert_true(w3t_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-"
	                      "00f067aa0ba902b7-03-extra",
	        &c));
	assert_int_equal(c.flags, 1);
}

static void
fill(uint8_t rnd[W3T_RANDOM_LEN], uint8_t v)
{
	for (int i = 0; i < W3T_RANDOM_LEN; i++)
		rnd[i] = (uint8_t)(v + i);
}

static void
test_child_joins_parent(void **state)
{
	struct w3t_ctx parent, child;
	uint8_t rnd[W3T_RANDOM_LEN];
	char buf[W3T_TRACEPARENT_LEN + 1];

	(void)state;
	fill(rnd, 0x10);
	assert_true(w3t_parse(TP, &parent));
	w3t_child(&parent, rnd, &child);
	w3t_format(&child, buf);
	assert_string_equal(buf,
	        "00-4bf92f3577b34da6a3ce929d0e0e4736-2021222324252627-01");
	parent.flags = 0;
	w3t_child(&parent, rnd, &child);
	w3t_format(&child, buf);
	assert_string_equal(buf + 52, "-00");
}

static void
test_child_new_root(void **state)
{
	struct w3t_ctx child, bad = { .valid = false };
	uint8_t rnd[W3T_RANDOM_LEN];
	char buf[W3T_TRACEPARENT_LEN + 1], id[33];

	(void)state;
	fill(rnd, 0);
	w3t_child(NULL, rnd, &child);
	w3t_format(&child, buf);
	assert_string_equal(buf,
	        "00-000102030405060708090a0b0c0d0e0f-1011121314151617-01");
	w3t_child(&bad, rnd, &child);
	w3t_trace_id_hex(&child, id);
	assert_string_equal(id, "000102030405060708090a0b0c0d0e0f");
	memset(rnd, 0, sizeof(rnd));
	w3t_child(NULL, rnd, &child);
	w3t_format(&child, buf);
	assert_string_equal(buf,
	        "00-00000000000000000000000000000001-0000000000000001-01");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_round_trip),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_parse_future_version),
		cmocka_unit_test(test_child_joins_parent),
		cmocka_unit_test(test_child_new_root),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
