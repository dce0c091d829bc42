/*
 * strtab.c: the string-keyed open-addressing hash table of strtab.h.  It
 * owns only the slot array; elements and their keys are the caller's.
 */
#include "common/strtab.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/strhash.h"
#include "common/xmalloc.h"

#define STRTAB_MIN 16

void
strtab_init(struct strtab *t, strtab_keyof_fn *keyof, strtab_hashof_fn *hashof,
        unsigned max_load)
{
	t->slot = NULL;
	t->cap = t->n = 0;
	t->keyof = keyof;
	t->hashof = hashof;
	if (max_load == 0) {
		max_load = STRTAB_LOAD_DEFAULT;
	}
	t->max_load = max_load < 10 ? 10 : max_load > 90 ? 90 : max_load;
}

void
strtab_fini(struct strtab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

static uint64_t
hash_of(const struct strtab *t, const void *elem)
{
	return (t->hashof != NULL ? t->hashof(elem) : strhash(t->keyof(elem)));
}

/* Whether elem's key is key, whose hash is h. */
static bool
same(const struct strtab *t, const void *elem, const char *key, uint64_t h)
{
	return ((t->hashof == NULL || t->hashof(elem) == h)
	        && strcmp(t->keyof(elem), key) == 0);
}

/* The slot holding key (hash h), or the empty slot where it would go (cap
 * > 0). */
static size_t
find(const struct strtab *t, const char *key, uint64_t h)
{
	size_t mask = t->cap - 1, i = (size_t)h & mask;

	while (t->slot[i] != NULL && !same(t, t->slot[i], key, h)) {
		i = (i + 1) & mask;
	}
	return (i);
}

void *
strtab_get(const struct strtab *t, const char *key)
{
	if (t->cap == 0) {
		return (NULL);
	}
	return (t->slot[find(t, key, strhash(key))]);
}

static void
grow(struct strtab *t)
{
	void **old = t->slot;
	size_t old_cap = t->cap;

	t->cap = old_cap == 0 ? STRTAB_MIN : old_cap * 2;
	t->slot = xcalloc(t->cap, sizeof(t->slot[0]));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i] != NULL) {
			t->slot[find(t, t->keyof(old[i]), hash_of(t, old[i]))]
			        = old[i];
		}
	}
	free(old);
}

void *
strtab_put(struct strtab *t, void *elem)
{
	void *old;
	size_t i;

	if ((t->n + 1) * 100 > t->cap * t->max_load) {
		grow(t);
	}
	i = find(t, t->keyof(elem), hash_of(t, elem));
	old = t->slot[i];
	if (old == NULL) {
		t->n++;
	}
	t->slot[i] = elem;
	return (old);
}

/* Whether the element at j, whose home is k, stays put when slot i (before
 * j on the probe path) empties: so when k lies cyclically in (i, j]. */
static bool
stays(size_t i, size_t j, size_t k)
{
	return (i <= j ? (i < k && k <= j) : (i < k || k <= j));
}

/* Empties slot i and shifts the rest of its run back over it. */
static void
vacate(struct strtab *t, size_t i)
{
	size_t mask = t->cap - 1, j;

	t->slot[i] = NULL;
	t->n--;
	for (j = (i + 1) & mask; t->slot[j] != NULL; j = (j + 1) & mask) {
		if (stays(i, j, (size_t)hash_of(t, t->slot[j]) & mask)) {
			continue;
		}
		t->slot[i] = t->slot[j];
		t->slot[j] = NULL;
		i = j;
	}
}

void *
strtab_del(struct strtab *t, const char *key)
{
	size_t i;
	void *elem;

	if (t->cap == 0
	        || (elem = t->slot[i = find(t, key, strhash(key))]) == NULL) {
		return (NULL);
	}
	vacate(t, i);
	return (elem);
}

bool
strtab_remove(struct strtab *t, const void *elem)
{
	size_t mask = t->cap - 1, i;

	if (t->cap == 0) {
		return (false);
	}
	for (i = (size_t)hash_of(t, elem) & mask; t->slot[i] != NULL;
	        i = (i + 1) & mask) {
		if (t->slot[i] == elem) {
			vacate(t, i);
			return (true);
		}
	}
	return (false);
}

size_t
strtab_len(const struct strtab *t)
{
	return (t->n);
}

size_t
strtab_bytes(const struct strtab *t)
{
	return (t->cap * sizeof(t->slot[0]));
}

void *
strtab_next(const struct strtab *t, size_t *pos)
{
	for (; *pos < t->cap; (*pos)++) {
		if (t->slot[*pos] != NULL) {
			return (t->slot[(*pos)++]);
		}
	}
	return (NULL);
}
