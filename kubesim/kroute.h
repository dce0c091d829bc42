/*
 * kroute.h: kubesim's request routing, as pure functions: what a URL path
 * names (spec A.1: discovery, OpenAPI, health, a resource collection, an
 * object, a subresource, the admin endpoint) and the query-parameter rules
 * of spec A.3.  Prefix kroute_.
 */
#ifndef KROUTE_H
#define KROUTE_H

#include <stdbool.h>
#include <stddef.h>

enum kroute_kind {
	KROUTE_NONE,         /* 404 page not found */
	KROUTE_VERSION,      /* /version */
	KROUTE_HEALTH,       /* /healthz, /livez, /readyz */
	KROUTE_API,          /* /api */
	KROUTE_APIS,         /* /apis */
	KROUTE_GROUP,        /* /apis/<group> */
	KROUTE_GV,           /* /api/v1, /apis/<group>/<version> */
	KROUTE_OPENAPI_ROOT, /* /openapi/v3 */
	KROUTE_OPENAPI_DOC,  /* /openapi/v3/<gvpath> (rest) */
	KROUTE_OPENAPI_V2,   /* /openapi/v2 (JSON) */
	KROUTE_RESOURCE,     /* a collection, object or subresource */
	KROUTE_ADMIN,        /* /_kubesim/<rest> */
};

/* A parsed path.  Strings are owned; kroute_fini frees them. */
struct kroute {
	enum kroute_kind kind;
	char *group; /* "" for core */
	char *version;
	char *ns; /* NULL: no /namespaces/<ns>/ segment */
	char *plural;
	char *name;      /* NULL: a collection */
	char *sub;       /* NULL, "status", "log", "scale", ... */
	char *rest;      /* OPENAPI_DOC gvpath, ADMIN rest, HEALTH name */
	bool watch_path; /* the deprecated /watch/ form */
};

/* Parses an absolute path (already percent-decoded; no query).  Fills r
 * (kind KROUTE_NONE when nothing matches).  Never fails otherwise. */
void kroute_parse(const char *path, struct kroute *r);
void kroute_fini(struct kroute *r);

/* A boolean query value per spec A.3: NULL (absent), "0" and "false" (any
 * case) are false; anything else, "" included, is true. */
bool kroute_qbool(const char *v);

#endif
