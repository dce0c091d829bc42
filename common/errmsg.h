/*
 * errmsg.h: the one-line error messages that functions taking
 * (char *err, size_t errlen) leave for their callers.  Prefix errmsg.
 */
#ifndef ERRMSG_H
#define ERRMSG_H

#include <stddef.h>

/* Formats into err (truncated to errlen; nothing when err is NULL or
 * errlen is 0) and replaces control characters with '?', so text taken
 * from a request or a file keeps the message on one line. */
void errmsg(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif
