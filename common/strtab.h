/*
 * strtab.h: a string-keyed hash table of caller-owned elements.  Prefix
 * strtab_.
 *
 * Open addressing with linear probing over a power-of-two array of element
 * pointers, kept at most 70% full (or the share chosen at init), with
 * backward-shift deletion (no tombstones: a lookup stops at the first
 * empty slot).  The hash is strhash() of the key.  The table stores
 * pointers only; it reads each element's key through the keyof function
 * given at init, so an element holds its own key and an entry costs one
 * pointer (1.4 to 2.9 pointers with the free slots at 70%).  An element
 * that also keeps its key's hash can hand it over through an optional
 * hashof function: probes then compare hashes before keys and moves never
 * hash again.
 *
 * The table never allocates or frees elements, and keys must not change
 * while their element is in the table.  Puts and deletes invalidate an
 * iteration in progress.  Single-threaded: no locks.
 */
#ifndef STRTAB_H
#define STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The key of an element (never NULL). */
typedef const char *strtab_keyof_fn(const void *elem);
/* The strhash() of that key, kept by the element. */
typedef uint64_t strtab_hashof_fn(const void *elem);

/* Embed it in the owner; the fields are the module's (use the functions). */
struct strtab {
	void **slot;
	size_t cap; /* 0 (nothing allocated yet) or a power of two */
	size_t n;
	strtab_keyof_fn *keyof;
	strtab_hashof_fn *hashof; /* NULL: strhash(keyof(elem)) */
	unsigned max_load;        /* percent of cap */
};

#define STRTAB_LOAD_DEFAULT 70

/* An empty table (allocates nothing until the first put).  hashof may be
 * NULL.  max_load is how full the table may get, in percent of its slots
 * (clamped to 10..90; 0 is STRTAB_LOAD_DEFAULT): the lower, the shorter
 * the probes and the more slots.  The work queue, on the dispatch path,
 * uses 50 (a third faster than 70 with 100,000 keys); 70 suits tables kept
 * small for memory. */
void strtab_init(struct strtab *t, strtab_keyof_fn *keyof,
        strtab_hashof_fn *hashof, unsigned max_load);
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
/* Takes elem itself out of the table (found by its address along its
 * key's probe path, without comparing keys).  Returns whether it was
 * there. */
bool strtab_remove(struct strtab *t, const void *elem);

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
