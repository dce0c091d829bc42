/*
 * strtab.h: a string-keyed hash table of caller-owned elements.  Prefix
 * strtab_.
 *
 * Open addressing with linear probing over a power-of-two array of element
 * pointers, kept at most 70% full, with backward-shift deletion (no
 * tombstones: a lookup stops at the first empty slot).  The hash is
 * strhash() of the key.  The table stores pointers only; it reads each
 * element's key through the keyof function given at init, so an element
 * holds its own key and an entry costs one pointer (about 1.4 to 2.9
 * pointers with the free slots).
 *
 * The table never allocates or frees elements, and keys must not change
 * while their element is in the table.  Puts and deletes invalidate an
 * iteration in progress.  Single-threaded: no locks.
 */
#ifndef STRTAB_H
#define STRTAB_H

#include <stddef.h>

/* The key of an element (never NULL). */
typedef const char *strtab_keyof_fn(const void *elem);

/* Embed it in the owner; the fields are the module's (use the functions). */
struct strtab {
	void **slot;
	size_t cap; /* 0 (nothing allocated yet) or a power of two */
	size_t n;
	strtab_keyof_fn *keyof;
};

/* An empty table (allocates nothing until the first put). */
void strtab_init(struct strtab *t, strtab_keyof_fn *keyof);
/* Frees the slot array (not the elements); t is empty again after it. */
void strtab_fini(struct strtab *t);

/* The element whose key is key, or NULL. */
void *strtab_get(const struct strtab *t, const char *key);
/* Stores elem (not NULL) under its key.  Returns the element it replaced,
 * which had the same key, or NULL. */
void *strtab_put(struct strtab *t, void *elem);
/* Takes the element whose key is key out of the table and returns it, or
 * returns NULL when there is none. */
void *strtab_del(struct strtab *t, const char *key);

/* Number of elements. */
size_t strtab_len(const struct strtab *t);
/* Bytes of the slot array, for memory accounting. */
size_t strtab_bytes(const struct strtab *t);

/* Iteration in slot order, which has no meaning:
 *     size_t pos = 0; void *e;
 *     while ((e = strtab_next(t, &pos)) != NULL) { ... }
 * Returns the next element at or after *pos and moves *pos past it; NULL
 * at the end. */
void *strtab_next(const struct strtab *t, size_t *pos);

#endif
