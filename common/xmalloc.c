/*
 * xmalloc.c: the allocation wrappers of xmalloc.h.  Every function aborts on
 * failure after writing one line to stderr; none returns NULL.
 */
#include "common/xmalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void __attribute__((noreturn)) oom(size_t n)
{
	char msg[96];
	int len;

	len = snprintf(msg, sizeof(msg),
	        "xmalloc: out of memory trying to allocate %zu bytes\n", n);
	if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0) {
		/* nothing left to report with */
	}
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		oom(n);
	}
	return (p);
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL) {
		oom(nmemb * size);
	}
	return (p);
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL) {
		oom(n);
	}
	return (q);
}

void *
xreallocarray(void *p, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size) {
		oom(SIZE_MAX);
	}
	return (xrealloc(p, nmemb * size));
}

char *
xstrdup(const char *s)
{
	return (xmemdup(s, strlen(s) + 1));
}

char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

void *
xmemdup(const void *p, size_t n)
{
	void *q = xmalloc(n);

	if (n > 0) {
		memcpy(q, p, n);
	}
	return (q);
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		oom(strlen(fmt));
	}
	return (s);
}
