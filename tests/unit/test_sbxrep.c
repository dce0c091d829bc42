/*
 * test_sbxrep.c: the sandbox kill report (ipc/sbxrep.h): a record round
 * trips and names its call; short, garbled, foreign-architecture and
 * unknown-number records are refused (the worker is not trusted); the
 * supervisor's read of a pipe, empty or not.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "ipc/sbxrep.h"

static void
test_round_trip(void **state)
{
	unsigned char rec[SBXREP_LEN];
	uint32_t nr = 0, arch = 0;
	char cause[128], want[128];

	(void)state;
	sbxrep_encode(rec, SYS_openat, seccomp_arch_native());
	assert_int_equal(sbxrep_decode(rec, sizeof(rec), &nr, &arch), 0);
	assert_int_equal(nr, SYS_openat);
	assert_int_equal(arch, seccomp_arch_native());
	assert_non_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
	snprintf(want, sizeof(want),
	        "killed by its sandbox: system call openat (%d)", SYS_openat);
	assert_string_equal(cause, want);
}

static void
test_refused(void **state)
{
	unsigned char rec[SBXREP_LEN];
	uint32_t nr, arch;
	char cause[128];

	(void)state;
	sbxrep_encode(rec, SYS_socket, seccomp_arch_native());
	assert_int_equal(sbxrep_decode(rec, SBXREP_LEN - 1, &nr, &arch), -1);
	assert_null(sbxrep_cause(NULL, 0, cause, sizeof(cause)));
	rec[0] = 'X'; /* magic */
	assert_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
	sbxrep_encode(rec, SYS_socket, seccomp_arch_native());
	rec[7] ^= 1; /* the number, not the check word */
	assert_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
	/* valid records of another architecture or an unknown number */
	sbxrep_encode(rec, SYS_socket, seccomp_arch_native() ^ 0x10000u);
	assert_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
	sbxrep_encode(rec, 99999, seccomp_arch_native());
	assert_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
	sbxrep_encode(rec, 0xffffffffu, seccomp_arch_native());
	assert_null(sbxrep_cause(rec, sizeof(rec), cause, sizeof(cause)));
}

static void
test_read_pipe(void **state)
{
	unsigned char rec[SBXREP_LEN];
	char cause[128];
	int p[2];

	(void)state;
	assert_null(sbxrep_read_cause(-1, cause, sizeof(cause)));
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_null(sbxrep_read_cause(p[0], cause, sizeof(cause))); /* empty */
	sbxrep_encode(rec, SYS_execve, seccomp_arch_native());
	assert_int_equal(write(p[1], rec, sizeof(rec)), SBXREP_LEN);
	assert_int_equal(write(p[1], "trailing junk", 13), 13);
	close(p[1]);
	assert_non_null(sbxrep_read_cause(p[0], cause, sizeof(cause)));
	assert_non_null(strstr(cause, "system call execve ("));
	assert_null(sbxrep_read_cause(p[0], cause, sizeof(cause))); /* EOF */
	close(p[0]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_read_pipe),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
