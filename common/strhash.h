/*
 * strhash.h: one string hash for every hash table and content hash in
 * the project: 64-bit FNV-1a.  Prefix strhash.
 */
#ifndef STRHASH_H
#define STRHASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over n bytes of p. */
uint64_t strhash_n(const void *p, size_t n);
/* FNV-1a over a NUL-terminated string. */
uint64_t strhash(const char *s);
/* The same from another offset basis: a second hash of s, for digests of
 * two hashes (supervisor/events.c). */
uint64_t strhash_seeded(const char *s, uint64_t basis);

#endif
