/*
 * kprint.h: the server-side printers of the built-in kinds kubesim
 * serves (the real server's pkg/printers/internalversion): the columns
 * and cells of `kubectl get` for Pods (READY, STATUS, RESTARTS), Events
 * (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE), Namespaces (STATUS), Jobs,
 * Deployments, Services, ConfigMaps, Secrets and Leases, with their
 * `-o wide` columns at priority 1.  ktable.c builds the Table from them.
 * Pure: `now` is an argument.  Prefix kprint_.
 */
#ifndef KPRINT_H
#define KPRINT_H

#include <stdint.h>
#include <json-c/json.h>

struct kprint_col {
	const char *name, *type, *format;
	int priority;
	const char *desc;
};

struct kprint {
	const char *group, *plural;
	const struct kprint_col *cols; /* NULL-name terminated */
	/* The cells of obj, one per column, in order (a new array). */
	json_object *(*cells)(json_object *obj, int64_t now_s);
};

/* The printer of a built-in resource, or NULL. */
const struct kprint *kprint_find(const char *group, const char *plural);

#endif
