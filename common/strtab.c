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
strtab_init(struct strtab *t, strtab_keyof_fn *keyof)
{
	t->slot = NULL;
	t->cap = t->n = 0;
	t->keyof = keyof;
}

void
strtab_fini(struct strtab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

static size_t
home(const struct strtab *t, const char *key)
{
	return ((size_t)strhash(key) & (t->cap - 1));
}

/* The slot holding key, or the empty slot where it would go (cap > 0). */
static size_t
find(const struct strtab *t, const char *key)
{
	size_t mask = t->cap - 1, i = home(t, key);

	while (t->slot[i] != NULL && strcmp(t->keyof(t->slot[i]), key) != 0) {
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
	return (t->slot[find(t, key)]);
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
			t->slot[find(t, t->keyof(old[i]))] = old[i];
		}
	}
	free(old);
}

void *
strtab_put(struct strtab *t, void *elem)
{
	void *old;
	size_t i;

	if ((t->n + 1) * 10 > t->cap * 7) {
		grow(t);
	}
	i = find(t, t->keyof(elem));
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

void *
strtab_del(struct strtab *t, const char *key)
{
	size_t mask, i, j;
	void *elem;

	if (t->cap == 0 || (elem = t->slot[i = find(t, key)]) == NULL) {
		return (NULL);
	}
	mask = t->cap - 1;
	t->slot[i] = NULL;
	t->n--;
	for (j = (i + 1) & mask; t->slot[j] != NULL; j = (j + 1) & mask) {
		if (stays(i, j, home(t, t->keyof(t->slot[j])))) {
			continue;
		}
		t->slot[i] = t->slot[j];
		t->slot[j] = NULL;
		i = j;
	}
	return (elem);
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
