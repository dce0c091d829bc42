/*
 * kapi_conf.h: where the Kubernetes API is and how to authenticate to it
 * (spec kube-api.md section F).  Loaded from a kubeconfig (one explicit
 * file, or the KUBECONFIG list with client-go's "first one wins" merge
 * rules) or from the in-cluster service-account files, then handed to the
 * client (kapi.h), which borrows it for its whole life.
 *
 * Every path in a kubeconfig is resolved against the directory of the file
 * that named it and read at load time, so a loaded configuration holds PEM
 * bytes, never paths; the one exception is the token file, which is re-read
 * (kapi_conf_token) because service-account tokens rotate.
 */
#ifndef KAPI_CONF_H
#define KAPI_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kapi_exec.h"

#define KAPI_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* How often a token file is re-read at most (client-go: 1 min). */
#define KAPI_TOKEN_REFRESH_MS 60000

struct kapi_conf {
	char *server; /* "https://host:port", no trailing slash */
	char *ca_pem; /* CA bundle (PEM), NULL = system roots */
	size_t ca_len;
	char *cert_pem; /* client certificate (PEM) or NULL */
	size_t cert_len;
	char *key_pem; /* client key (PEM) or NULL */
	size_t key_len;
	bool insecure;         /* insecure-skip-tls-verify */
	char *tls_server_name; /* SNI / name to verify, or NULL */
	char *namespace;       /* context namespace, else "default" */
	char *username;        /* basic auth, or NULL */
	char *password;
	char *context;   /* name of the context used, or NULL */
	bool in_cluster; /* loaded from the service-account files */

	/* Bearer token: a static token, or a file re-read at most every
	 * KAPI_TOKEN_REFRESH_MS and at the next use after an invalidate.
	 * When both are set the file wins while it can be read. */
	char *token;           /* current token, or NULL */
	char *token_file;      /* absolute path, or NULL */
	int64_t token_read_ms; /* when token_file was last read */
	bool token_stale;      /* set after a 401 */

	/* An exec credential plugin (kapi_exec.h), or NULL: its credential
	 * (token, or cert_pem/key_pem above) is fetched by
	 * kapi_conf_refresh() when there is none, when it expired
	 * (exec_expires_ms, unix ms, 0: never) and after a 401. */
	struct kapi_exec *exec;
	int64_t exec_expires_ms;
	bool exec_have;
};

/*
 * Loading.  Each returns a configuration the caller frees with
 * kapi_conf_free(), or NULL with a one-line reason in err (never NULL when
 * errlen > 0).
 *
 * kapi_conf_load: controller-runtime's order: the explicit path (must
 * exist, no merging) when non-NULL, else $KUBECONFIG (split on ':', empty
 * entries and missing files skipped, merged first-one-wins), else
 * in-cluster (when KUBERNETES_SERVICE_HOST and _PORT are set), else
 * ~/.kube/config.  context overrides current-context when non-NULL.
 */
struct kapi_conf *kapi_conf_load(const char *explicit_path,
        const char *context, char *err, size_t errlen);
/* paths: a KUBECONFIG-style list ("a:b"). */
struct kapi_conf *kapi_conf_from_kubeconfig(
        const char *paths, const char *context, char *err, size_t errlen);
/* sa_dir: the service-account directory (KAPI_SA_DIR in a pod; tests pass
 * their own).  Host and port come from the environment. */
struct kapi_conf *kapi_conf_in_cluster(
        const char *sa_dir, char *err, size_t errlen);
void kapi_conf_free(struct kapi_conf *conf);

/*
 * Token source.  Returns the bearer token to send now (borrowed; valid
 * until the next call), or NULL when there is none.  now_ms is a monotonic
 * clock in milliseconds.  A failed re-read keeps the last good token.
 */
const char *kapi_conf_token(struct kapi_conf *conf, int64_t now_ms);
/* Marks the token stale so that the next kapi_conf_token re-reads the
 * file, or reruns the exec plugin (called after a 401). */
void kapi_conf_token_invalidate(struct kapi_conf *conf);
/* Runs the exec plugin when its credential is missing, expired or stale
 * (nothing without a plugin).  A failed run is logged (naming the
 * plugin) and keeps the last credential.  Returns 0 when a credential is
 * at hand, -1 when none is. */
int kapi_conf_refresh(struct kapi_conf *conf);

#endif
