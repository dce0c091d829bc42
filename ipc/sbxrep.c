/*
 * sbxrep.c: the sandbox kill report (sbxrep.h): its codec and the
 * supervisor's validation, with the names libseccomp knows.
 */
#include "ipc/sbxrep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#define MAGIC 0x53425831u /* "SBX1" */

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t
get32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16
	        | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

void
sbxrep_encode(unsigned char out[SBXREP_LEN], uint32_t nr, uint32_t arch)
{
	put32(out, MAGIC);
	put32(out + 4, nr);
	put32(out + 8, arch);
	put32(out + 12, ~(nr ^ arch));
}

int
sbxrep_decode(const unsigned char *buf, size_t n, uint32_t *nr, uint32_t *arch)
{
	if (buf == NULL || n < SBXREP_LEN || get32(buf) != MAGIC) {
		return (-1);
	}
	*nr = get32(buf + 4);
	*arch = get32(buf + 8);
	return (get32(buf + 12) == ~(*nr ^ *arch) ? 0 : -1);
}

char *
sbxrep_cause(const unsigned char *buf, size_t n, char *out, size_t len)
{
	uint32_t nr, arch;
	char *name;

	if (sbxrep_decode(buf, n, &nr, &arch) != 0
	        || arch != seccomp_arch_native() || nr > 0x7fffffffu) {
		return (NULL);
	}
	name = seccomp_syscall_resolve_num_arch(arch, (int)nr);
	if (name == NULL) {
		return (NULL);
	}
	snprintf(out, len, SBXREP_CAUSE ": system call %s (%u)", name,
	        (unsigned)nr);
	free(name);
	return (out);
}

char *
sbxrep_read_cause(int fd, char *out, size_t len)
{
	unsigned char buf[4 * SBXREP_LEN];
	ssize_t n;

	if (fd < 0) {
		return (NULL);
	}
	do {
		n = read(fd, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);
	return (n > 0 ? sbxrep_cause(buf, (size_t)n, out, len) : NULL);
}
