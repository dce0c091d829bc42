/* test_buf.c: growable buffers and the xmalloc wrappers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/xmalloc.h"

static void
test_append_keeps_nul(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	assert_string_equal(buf_str(&b), "");
	buf_puts(&b, "abc");
	buf_putc(&b, 'd');
	buf_append(&b, "ef\0gh", 5);
	assert_int_equal(b.len, 9);
	assert_memory_equal(b.data, "abcdef\0gh", 9);
	assert_int_equal(b.data[b.len], '\0');
	buf_fini(&b);
	assert_null(b.data);
}

static void
test_growth_many(void **state)
{
	struct buf b = BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		buf_putc(&b, (char)('a' + i % 26));
	}
	assert_int_equal(b.len, 100000);
	assert_true(b.cap > b.len);
	assert_int_equal(b.data[99999], 'a' + 99999 % 26);
	buf_fini(&b);
}

static void
test_printf_and_consume(void **state)
{
	struct buf b = BUF_INIT;
	char *s;
	size_t n;

	(void)state;
	buf_printf(&b, "%s=%d;", "x", 42);
	buf_printf(&b, "%0300d", 7);
	assert_int_equal(b.len, 5 + 300);
	buf_consume(&b, 5);
	assert_int_equal(b.len, 300);
	assert_int_equal(b.data[299], '7');
	buf_consume(&b, 1000);
	assert_int_equal(b.len, 0);
	assert_string_equal(buf_str(&b), "");
	buf_puts(&b, "tail");
	s = buf_detach(&b, &n);
	assert_string_equal(s, "tail");
	assert_int_equal(n, 4);
	assert_null(b.data);
	free(s);
	s = buf_detach(&b, &n);
	assert_string_equal(s, "");
	assert_int_equal(n, 0);
	free(s);
}

static void
test_xmalloc_family(void **state)
{
	char *s;
	int *v;

	(void)state;
	s = xasprintf("%s-%03d", "w", 5);
	assert_string_equal(s, "w-005");
	free(s);
	s = xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
	v = xcalloc(4, sizeof(*v));
	assert_int_equal(v[3], 0);
	v = xreallocarray(v, 1000, sizeof(*v));
	v[999] = 1;
	free(v);
}

static void
test_read_file(void **state)
{
	char path[] = "/tmp/test_buf.XXXXXX";
	struct buf b = BUF_INIT;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello\nworld", 11), 11);
	close(fd);
	buf_puts(&b, ">");
	assert_int_equal(buf_read_file(&b, path, 100), 0);
	assert_string_equal(b.data, ">hello\nworld");
	/* Too large: error, and the buf keeps what it had. */
	assert_int_equal(buf_read_file(&b, path, 5), -1);
	assert_int_equal(errno, EFBIG);
	assert_string_equal(b.data, ">hello\nworld");
	unlink(path);
	assert_int_equal(buf_read_file(&b, path, 100), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(b.len, 12);
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_keeps_nul),
		cmocka_unit_test(test_growth_many),
		cmocka_unit_test(test_printf_and_consume),
		cmocka_unit_test(test_xmalloc_family),
		cmocka_unit_test(test_read_file),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
