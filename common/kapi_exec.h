/*
 * kapi_exec.h: exec credential plugins of a kubeconfig user (client-go's
 * plugin/pkg/client/auth/exec; kube-api.md F): the `exec` stanza
 * (client.authentication.k8s.io/v1 and v1beta1: command, args, env,
 * interactiveMode, provideClusterInfo, installHint), the ExecCredential
 * the plugin is given in KUBERNETES_EXEC_INFO and the one it prints, and
 * the run itself.  Only the supervisor loads a kubeconfig, so a plugin runs
 * in the supervisor's process context, never inside a worker's sandbox.
 *
 * The credential (a bearer token, or a client certificate and key) is
 * cached until its expirationTimestamp (for ever without one) and the
 * plugin is run again when it has expired or after a 401
 * (kapi_conf_token_invalidate()), as client-go does.  Parsing and the
 * ExecCredential texts are pure; kapi_exec_run() is the only I/O.  Every
 * error names the plugin ("exec plugin \"aws\": ...") and, where the
 * kubeconfig has one, its installHint.  Prefix kapi_exec_.
 */
#ifndef KAPI_EXEC_H
#define KAPI_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define KAPI_EXEC_OUT_MAX (1024 * 1024) /* bytes of a plugin's stdout */
#define KAPI_EXEC_TIMEOUT_MS                                                  \
	30000 /* a plugin that takes longer is                                \
	       * killed */

enum kapi_exec_interactive {
	KAPI_EXEC_NEVER,
	KAPI_EXEC_IF_AVAILABLE,
	KAPI_EXEC_ALWAYS,
};

struct kapi_exec {
	char *name;        /* the kubeconfig user, for messages */
	char *command;     /* as run: absolute, on $PATH, or resolved */
	char **args;       /* NULL-terminated, args[0] = command */
	char **env;        /* "NAME=value", NULL-terminated */
	char *api_version; /* client.authentication.k8s.io/v1 or v1beta1 */
	enum kapi_exec_interactive interactive;
	bool provide_cluster_info;
	char *install_hint; /* or NULL */
};

/* The credential a run gave. */
struct kapi_exec_cred {
	char *token;              /* or NULL */
	char *cert_pem, *key_pem; /* both or neither */
	int64_t expires_ms;       /* unix ms; 0: no expiry */
};

/* Parses the user's `exec` object (dir: the kubeconfig's directory, for a
 * command given as a relative path with a slash).  Returns a new plugin
 * (free with kapi_exec_free()), or NULL with why in err. */
struct kapi_exec *kapi_exec_parse(json_object *exec, const char *user,
        const char *dir, char *err, size_t errlen);
void kapi_exec_free(struct kapi_exec *x);

/* KUBERNETES_EXEC_INFO's value: the ExecCredential the plugin is given
 * (interactive false: the operator has no terminal; with
 * provideClusterInfo, cluster: server, certificate-authority-data (ca_pem
 * base64), insecure-skip-tls-verify, tls-server-name).  New string. */
char *kapi_exec_info(const struct kapi_exec *x, const char *server,
        const char *ca_pem, size_t ca_len, bool insecure,
        const char *tls_server_name);

/* Reads what the plugin printed.  0 and *out filled (free with
 * kapi_exec_cred_fini()), or -1 with why in err: not JSON, another
 * apiVersion or kind, no status, neither a token nor a certificate and
 * key, only one of those two, a bad expirationTimestamp. */
int kapi_exec_parse_output(const struct kapi_exec *x, const char *text,
        struct kapi_exec_cred *out, char *err, size_t errlen);
void kapi_exec_cred_fini(struct kapi_exec_cred *c);

/* Runs the plugin with the process's environment plus its env and
 * KUBERNETES_EXEC_INFO = info, its stderr passed through, and reads its
 * credential; at most KAPI_EXEC_TIMEOUT_MS.  0 and *out, or -1 with why in
 * err (it did not start, exited non-zero, timed out, printed something
 * unreadable; with the install hint when the command was not found). */
int kapi_exec_run(const struct kapi_exec *x, const char *info,
        struct kapi_exec_cred *out, char *err, size_t errlen);

#endif
