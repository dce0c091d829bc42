/*
 * buf.h: growable byte buffers.  The bytes are always followed by a NUL that
 * is not counted in len, so text in a buf can be used as a C string.
 * Allocation aborts on failure (xmalloc.h).  Fields are public for reading;
 * change them only through these functions.
 */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data; /* NULL until the first append */
	size_t len; /* bytes used, not counting the NUL */
	size_t cap; /* bytes allocated */
};

#define BUF_INIT                                                              \
	{                                                                     \
		NULL, 0, 0                                                    \
	}

void buf_init(struct buf *b);
void buf_fini(struct buf *b);
void buf_reset(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));
/* Drops the first n bytes (n > len drops everything). */
void buf_consume(struct buf *b, size_t n);
/* Returns the bytes as a NUL-terminated string the caller frees with free();
 * the buf is left empty.  Never NULL. */
char *buf_detach(struct buf *b, size_t *lenp);
/* Appends the whole content of the file at path (at most max bytes; more
 * is an error with errno EFBIG).  Returns 0, or -1 with errno set; on
 * failure the buf holds what it held before. */
int buf_read_file(struct buf *b, const char *path, size_t max);
/* Read-only view as a C string; "" when empty.  Borrowed. */
const char *buf_str(const struct buf *b);

#endif
