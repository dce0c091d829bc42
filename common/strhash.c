/*
 * strhash.c: 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3): short, fast and good enough for hash tables keyed by
 * object keys, and for the content hashes of discovery documents.
 */
#include "common/strhash.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

uint64_t
strhash_n(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = FNV_OFFSET;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= FNV_PRIME;
	}
	return (h);
}

uint64_t
strhash_seeded(const char *s, uint64_t basis)
{
	uint64_t h = basis;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= FNV_PRIME;
	}
	return (h);
}

uint64_t
strhash(const char *s)
{
	return (strhash_seeded(s, FNV_OFFSET));
}
