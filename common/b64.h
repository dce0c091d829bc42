/*
 * b64.h: standard base64 (RFC 4648, with padding), as Go's encoding/json
 * writes []byte.  Prefix b64_.
 */
#ifndef B64_H
#define B64_H

#include <stddef.h>

/* data[0..n) in base64: a new NUL-terminated string (caller frees). */
char *b64_encode(const void *data, size_t n);

#endif
