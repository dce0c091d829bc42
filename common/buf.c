/*
 * buf.c: the growable buffer of buf.h.  Capacity doubles, so n appends cost
 * O(n) amortised; the trailing NUL is kept on every change.
 */
#include "common/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_fini(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL) {
		b->data[0] = '\0';
	}
}

void
buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap = b->cap ? b->cap : 64;

	if (need <= b->cap) {
		return;
	}
	while (cap < need) {
		cap *= 2;
	}
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void
buf_append(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0) {
		memcpy(b->data + b->len, p, n);
	}
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_putc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n <= 0) {
		return;
	}
	buf_reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *
buf_detach(struct buf *b, size_t *lenp)
{
	char *s;

	if (b->data == NULL) {
		buf_reserve(b, 0);
		b->data[0] = '\0';
	}
	s = b->data;
	if (lenp != NULL) {
		*lenp = b->len;
	}
	buf_init(b);
	return (s);
}

const char *
buf_str(const struct buf *b)
{
	return (b->data != NULL ? b->data : "");
}

int
buf_read_file(struct buf *b, const char *path, size_t max)
{
	size_t start = b->len, n;
	char chunk[4096];
	int saved;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b->len - start + n > max) {
			errno = EFBIG;
			break;
		}
		buf_append(b, chunk, n);
	}
	if (n > 0 || ferror(f)) {
		saved = ferror(f) ? EIO : errno;
		fclose(f);
		b->len = start;
		if (b->data != NULL) {
			b->data[start] = '\0';
		}
		errno = saved;
		return (-1);
	}
	fclose(f);
	return (0);
}
