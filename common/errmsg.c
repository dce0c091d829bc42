/*
 * errmsg.c: formats the one-line error messages of (err, errlen) APIs.
 */
#include <stdarg.h>
#include <stdio.h>

#include "common/errmsg.h"

void
errmsg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0) {
		return;
	}
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	for (char *p = err; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
}
