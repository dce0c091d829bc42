/*
 * kapi_exec.c: exec credential plugins (kapi_exec.h): the kubeconfig
 * stanza, the ExecCredential texts both ways, and the one fork+exec of a
 * plugin with a pipe for its stdout and a deadline.
 */
#include "common/kapi_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/b64.h"
#include "common/buf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"

#define API_V1      "client.authentication.k8s.io/v1"
#define API_V1BETA1 "client.authentication.k8s.io/v1beta1"

extern char **environ;

static int fail(char *err, size_t n, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int
fail(char *err, size_t n, const char *name, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, n, "exec plugin \"%s\": %s", name, msg);
	return (-1);
}

void
kapi_exec_free(struct kapi_exec *x)
{
	if (x == NULL) {
		return;
	}
	for (size_t i = 0; x->args != NULL && x->args[i] != NULL; i++) {
		free(x->args[i]);
	}
	for (size_t i = 0; x->env != NULL && x->env[i] != NULL; i++) {
		free(x->env[i]);
	}
	free(x->args);
	free(x->env);
	free(x->name);
	free(x->command);
	free(x->api_version);
	free(x->install_hint);
	free(x);
}

static const char *
str_of(json_object *o, const char *key, bool *bad)
{
	json_object *v = json_object_object_get(o, key);

	if (v == NULL) {
		return (NULL);
	}
	if (!json_object_is_type(v, json_type_string)) {
		*bad = true;
		return (NULL);
	}
	return (json_object_get_string(v));
}

/* args: the command, then the strings of a (absent: none). */
static int
parse_args(struct kapi_exec *x, json_object *a)
{
	size_t n = json_object_is_type(a, json_type_array)
	        ? json_object_array_length(a)
	        : 0;

	if (a != NULL && !json_object_is_type(a, json_type_array)) {
		return (-1);
	}
	x->args = xcalloc(n + 2, sizeof(*x->args));
	x->args[0] = xstrdup(x->command);
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(a, i);

		if (!json_object_is_type(v, json_type_string)) {
			return (-1);
		}
		x->args[i + 1] = xstrdup(json_object_get_string(v));
	}
	return (0);
}

/* env: [{name, value}...]: "NAME=value". */
static int
parse_env(struct kapi_exec *x, json_object *a)
{
	size_t n = json_object_is_type(a, json_type_array)
	        ? json_object_array_length(a)
	        : 0;
	bool bad = false;

	if (a != NULL && !json_object_is_type(a, json_type_array)) {
		return (-1);
	}
	x->env = xcalloc(n + 1, sizeof(*x->env));
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *k = str_of(e, "name", &bad);
		const char *v = str_of(e, "value", &bad);

		if (bad || k == NULL || k[0] == '\0'
		        || strchr(k, '=') != NULL) {
			return (-1);
		}
		x->env[i] = xasprintf("%s=%s", k, v != NULL ? v : "");
	}
	return (0);
}

static int
parse_mode(struct kapi_exec *x, const char *m, char *err, size_t n)
{
	if (m == NULL || m[0] == '\0') {
		if (strcmp(x->api_version, API_V1) == 0) {
			return (fail(err, n, x->name,
			        "interactiveMode must be specified for %s",
			        API_V1));
		}
		x->interactive = KAPI_EXEC_IF_AVAILABLE;
	} else if (strcmp(m, "Never") == 0) {
		x->interactive = KAPI_EXEC_NEVER;
	} else if (strcmp(m, "IfAvailable") == 0) {
		x->interactive = KAPI_EXEC_IF_AVAILABLE;
	} else if (strcmp(m, "Always") == 0) {
		x->interactive = KAPI_EXEC_ALWAYS;
	} else {
		return (fail(err, n, x->name,
		        "invalid interactiveMode \"%s\" (want Never, "
		        "IfAvailable or Always)",
		        m));
	}
	return (0);
}

struct kapi_exec *
kapi_exec_parse(json_object *exec, const char *user, const char *dir,
        char *err, size_t errlen)
{
	struct kapi_exec *x = xcalloc(1, sizeof(*x));
	bool bad = false;
	const char *cmd = str_of(exec, "command", &bad);
	const char *api = str_of(exec, "apiVersion", &bad);
	const char *hint = str_of(exec, "installHint", &bad);
	const char *mode = str_of(exec, "interactiveMode", &bad);
	json_object *pci = json_object_object_get(exec, "provideClusterInfo");
	int rc = 0;

	x->name = xstrdup(user);
	x->install_hint = hint != NULL ? xstrdup(hint) : NULL;
	if (!json_object_is_type(exec, json_type_object) || bad) {
		rc = fail(err, errlen, user,
		        "exec must be an object of strings");
	} else if (cmd == NULL || cmd[0] == '\0') {
		rc = fail(err, errlen, user, "no command");
	} else if (api == NULL
	        || (strcmp(api, API_V1) != 0
	                && strcmp(api, API_V1BETA1) != 0)) {
		rc = fail(err, errlen, user,
		        "apiVersion \"%s\" is not supported (want %s or %s)",
		        api != NULL ? api : "", API_V1, API_V1BETA1);
	}
	if (rc == 0) {
		x->api_version = xstrdup(api);
		x->command = cmd[0] != '/' && strchr(cmd, '/') != NULL
		        ? xasprintf("%s/%s", dir, cmd)
		        : xstrdup(cmd);
		x->provide_cluster_info
		        = pci != NULL && json_object_get_boolean(pci);
		if (parse_args(x, json_object_object_get(exec, "args")) != 0
		        || parse_env(x, json_object_object_get(exec, "env"))
		                != 0) {
			rc = fail(err, errlen, user,
			        "args must be strings and env entries "
			        "{name, value}");
		} else {
			rc = parse_mode(x, mode, err, errlen);
		}
	}
	if (rc != 0) {
		kapi_exec_free(x);
		return (NULL);
	}
	return (x);
}

char *
kapi_exec_info(const struct kapi_exec *x, const char *server,
        const char *ca_pem, size_t ca_len, bool insecure,
        const char *tls_server_name)
{
	json_object *o = json_object_new_object(), *spec, *c;
	char *s;

	json_object_object_add(
	        o, "apiVersion", json_object_new_string(x->api_version));
	json_object_object_add(
	        o, "kind", json_object_new_string("ExecCredential"));
	spec = json_object_new_object();
	json_object_object_add(
	        spec, "interactive", json_object_new_boolean(0));
	if (x->provide_cluster_info) {
		c = json_object_new_object();
		json_object_object_add(c, "server",
		        json_object_new_string(server != NULL ? server : ""));
		if (tls_server_name != NULL) {
			json_object_object_add(c, "tls-server-name",
			        json_object_new_string(tls_server_name));
		}
		if (insecure) {
			json_object_object_add(c, "insecure-skip-tls-verify",
			        json_object_new_boolean(1));
		}
		if (ca_pem != NULL) {
			char *b = b64_encode(
			        ca_pem, ca_len ? ca_len : strlen(ca_pem));

			json_object_object_add(c, "certificate-authority-data",
			        json_object_new_string(b));
			free(b);
		}
		json_object_object_add(spec, "cluster", c);
	}
	json_object_object_add(o, "spec", spec);
	s = xstrdup(json_object_to_json_string_ext(
	        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return (s);
}

void
kapi_exec_cred_fini(struct kapi_exec_cred *c)
{
	free(c->token);
	free(c->cert_pem);
	free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

static int
parse_status(const struct kapi_exec *x, json_object *st,
        struct kapi_exec_cred *out, char *err, size_t n)
{
	bool bad = false;
	const char *tok = str_of(st, "token", &bad);
	const char *cert = str_of(st, "clientCertificateData", &bad);
	const char *key = str_of(st, "clientKeyData", &bad);
	const char *exp = str_of(st, "expirationTimestamp", &bad);
	int64_t us;

	if (bad) {
		return (fail(
		        err, n, x->name, "status fields must be strings"));
	}
	if ((cert != NULL && cert[0] != '\0')
	        != (key != NULL && key[0] != '\0')) {
		return (fail(err, n, x->name,
		        "clientCertificateData and clientKeyData must both be "
		        "present or both absent"));
	}
	if ((tok == NULL || tok[0] == '\0')
	        && (cert == NULL || cert[0] == '\0')) {
		return (fail(err, n, x->name,
		        "the credential has neither a token nor a client "
		        "certificate"));
	}
	if (exp != NULL && exp[0] != '\0' && timefmt_parse(exp, &us) != 0) {
		return (fail(err, n, x->name,
		        "expirationTimestamp \"%s\" is not RFC 3339", exp));
	}
	memset(out, 0, sizeof(*out));
	out->token = tok != NULL && tok[0] != '\0' ? xstrdup(tok) : NULL;
	out->cert_pem = cert != NULL && cert[0] != '\0' ? xstrdup(cert) : NULL;
	out->key_pem = key != NULL && key[0] != '\0' ? xstrdup(key) : NULL;
	out->expires_ms = exp != NULL && exp[0] != '\0' ? us / 1000 : 0;
	return (0);
}

int
kapi_exec_parse_output(const struct kapi_exec *x, const char *text,
        struct kapi_exec_cred *out, char *err, size_t errlen)
{
	json_object *o = json_tokener_parse(text);
	const char *api = json_object_get_string(
	        json_object_object_get(o, "apiVersion"));
	const char *kind
	        = json_object_get_string(json_object_object_get(o, "kind"));
	json_object *st = json_object_object_get(o, "status");
	int rc;

	if (!json_object_is_type(o, json_type_object)) {
		rc = fail(err, errlen, x->name,
		        "its output is not an ExecCredential (not a JSON "
		        "object)");
	} else if (api == NULL || strcmp(api, x->api_version) != 0) {
		rc = fail(err, errlen, x->name,
		        "its output has apiVersion \"%s\", want \"%s\"",
		        api != NULL ? api : "", x->api_version);
	} else if (kind == NULL || strcmp(kind, "ExecCredential") != 0) {
		rc = fail(err, errlen, x->name,
		        "its output has kind \"%s\", want ExecCredential",
		        kind != NULL ? kind : "");
	} else if (!json_object_is_type(st, json_type_object)) {
		rc = fail(err, errlen, x->name, "its output has no status");
	} else {
		rc = parse_status(x, st, out, err, errlen);
	}
	json_object_put(o);
	return (rc);
}

/* ---- the run ---- */

/* The environment: ours, the plugin's, then KUBERNETES_EXEC_INFO. */
static char **
child_env(const struct kapi_exec *x, const char *info, char **own)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ != NULL && environ[n] != NULL) {
		n++;
	}
	while (x->env[m] != NULL) {
		m++;
	}
	env = xcalloc(n + m + 2, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0) {
			env[k++] = environ[i];
		}
	}
	for (size_t i = 0; i < m; i++) {
		env[k++] = x->env[i];
	}
	env[k] = *own = xasprintf("KUBERNETES_EXEC_INFO=%s", info);
	return (env);
}

/* Reads fd until EOF, the bound or the deadline; 0, 1 (timed out), -1. */
static int
drain(int fd, struct buf *out, int64_t deadline)
{
	char chunk[4096];

	for (;;) {
		int64_t left = deadline - timefmt_now_ms_mono();
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (left <= 0) {
			return (1);
		}
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
			return (-1);
		}
		r = read(fd, chunk, sizeof(chunk));
		if (r == 0) {
			return (0);
		}
		if (r < 0 && errno != EINTR && errno != EAGAIN) {
			return (-1);
		}
		if (r > 0) {
			buf_append(out, chunk, (size_t)r);
		}
		if (out->len > KAPI_EXEC_OUT_MAX) {
			return (-1);
		}
	}
}

static pid_t
spawn(const struct kapi_exec *x, const char *info, int *rfd)
{
	int p[2];
	char **env, *own;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		return (-1);
	}
	env = child_env(x, info, &own);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* stdin: no terminal (interactive is false) */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
		}
		dup2(p[1], STDOUT_FILENO);
		/* nothing of ours but stdin, stdout and stderr */
		close_range(3, ~0U, 0);
		execvpe(x->command, x->args, env);
		_exit(127);
	}
	free(own);
	free(env);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return (-1);
	}
	*rfd = p[0];
	return (pid);
}

int
kapi_exec_run(const struct kapi_exec *x, const char *info,
        struct kapi_exec_cred *out, char *err, size_t errlen)
{
	int64_t deadline = timefmt_now_ms_mono() + KAPI_EXEC_TIMEOUT_MS;
	struct buf b = BUF_INIT;
	int fd = -1, st = 0, d;
	pid_t pid;

	if (x->interactive == KAPI_EXEC_ALWAYS) {
		return (fail(err, errlen, x->name,
		        "interactiveMode Always needs a terminal, and the "
		        "operator has none"));
	}
	pid = spawn(x, info, &fd);
	if (pid < 0) {
		return (fail(err, errlen, x->name, "cannot start %s: %s",
		        x->command, strerror(errno)));
	}
	d = drain(fd, &b, deadline);
	close(fd);
	if (d != 0) {
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) { }
	if (d == 1) {
		buf_fini(&b);
		return (fail(err, errlen, x->name,
		        "%s did not answer within %d s", x->command,
		        KAPI_EXEC_TIMEOUT_MS / 1000));
	}
	if (d < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		buf_fini(&b);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
			return (fail(err, errlen, x->name,
			        "%s could not be run (not found?)%s%s",
			        x->command, x->install_hint ? ": " : "",
			        x->install_hint ? x->install_hint : ""));
		}
		return (fail(err, errlen, x->name, "%s %s %d", x->command,
		        WIFEXITED(st) ? "exited with status"
		                      : "killed by signal",
		        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)));
	}
	d = kapi_exec_parse_output(x, buf_str(&b), out, err, errlen);
	buf_fini(&b);
	return (d);
}
