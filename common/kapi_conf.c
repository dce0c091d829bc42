/*
 * kapi_conf.c: loading a struct kapi_conf (kapi_conf.h, spec kube-api.md
 * F.1 and F.2).  Owns kubeconfig parsing (through yamlj, so YAML and JSON
 * both work), the KUBECONFIG "first one wins" merge, path resolution
 * against each file's directory, base64 of the *-data fields, the
 * in-cluster service-account files and controller-runtime's search order.
 * The token source that re-reads token files is kapi_token.c.
 *
 * Merging keeps every parsed file and looks names up in file order, which
 * is the merge rule itself: the first file naming a cluster, user or
 * context provides the whole entry (and its directory), and the first
 * non-empty current-context wins.  Files are read only here: a loaded
 * configuration holds PEM bytes, the token and the token file's path.
 */
#include "common/kapi_conf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/kapi_conf_mem.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"

/* Largest kubeconfig, PEM or token file we read. */
#define MAX_FILE ((size_t)16 << 20)

#define NOT_IN_CLUSTER                                                        \
	"unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "   \
	"and KUBERNETES_SERVICE_PORT must be defined"

/* One parsed kubeconfig. */
struct kfile {
	char *path;        /* as named, for messages */
	char *dir;         /* absolute; relative paths resolve here */
	json_object *root; /* object, or NULL for an empty file */
};

/* The files of one load, in KUBECONFIG order, plus the error sink. */
struct load {
	struct kfile *files;
	size_t nfiles;
	char *err;
	size_t errlen;
	bool failed; /* err holds the first error */
};

static void seterr(struct load *ld, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void
seterr(struct load *ld, const char *fmt, ...)
{
	va_list ap;

	if (ld->failed) {
		return;
	}
	ld->failed = true;
	if (ld->errlen == 0) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(ld->err, ld->errlen, fmt, ap);
	va_end(ap);
}

static void
load_init(struct load *ld, char *err, size_t errlen)
{
	memset(ld, 0, sizeof(*ld));
	ld->err = err;
	ld->errlen = errlen;
	if (errlen > 0) {
		err[0] = '\0';
	}
}

static void
load_fini(struct load *ld)
{
	size_t i;

	for (i = 0; i < ld->nfiles; i++) {
		free(ld->files[i].path);
		free(ld->files[i].dir);
		json_object_put(ld->files[i].root);
	}
	free(ld->files);
}

/*
 * Reads a whole regular file into out.  Returns 0, or an errno value with
 * *why set to a reason.  O_NONBLOCK keeps a FIFO from blocking the open;
 * the S_ISREG check then refuses it.
 */
static int
read_file(const char *path, struct buf *out, const char **why)
{
	char chunk[8192];
	struct stat st;
	ssize_t n;
	int fd, e = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		e = errno;
		*why = strerror(e);
		return (e);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return (EINVAL);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n == -1 && errno == EINTR) {
			continue;
		}
		if (n == -1 || out->len + (size_t)n > MAX_FILE) {
			e = n == -1 ? errno : EFBIG;
			*why = n == -1 ? strerror(e) : "file too large";
			break;
		}
		buf_append(out, chunk, (size_t)n);
	}
	close(fd);
	return (e);
}

/* Trims surrounding whitespace in place. */
static void
trim(struct buf *b)
{
	size_t start = 0;

	while (b->len > 0 && isspace((unsigned char)b->data[b->len - 1])) {
		b->data[--b->len] = '\0';
	}
	while (start < b->len && isspace((unsigned char)b->data[start])) {
		start++;
	}
	buf_consume(b, start);
}

/* path made absolute against the current directory. */
static char *
absolute(const char *path)
{
	char *cwd, *s;

	if (path[0] == '/') {
		return (xstrdup(path));
	}
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		return (xstrdup(path));
	}
	s = xasprintf("%s/%s", cwd, path);
	free(cwd);
	return (s);
}

/* The absolute directory holding path. */
static char *
dir_of(const char *path)
{
	char *s = absolute(path), *slash;

	slash = strrchr(s, '/');
	if (slash == s) {
		s[1] = '\0';
	} else if (slash != NULL) {
		*slash = '\0';
	}
	return (s);
}

static char *
resolve(const char *dir, const char *path)
{
	if (path[0] == '/') {
		return (xstrdup(path));
	}
	return (xasprintf("%s/%s", dir, path));
}

static int
b64_value(unsigned char c)
{
	static const char alphabet[]
	        = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	          "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p;

	if (c == '\0' || (p = strchr(alphabet, c)) == NULL) {
		return (-1);
	}
	return ((int)(p - alphabet));
}

/*
 * Standard base64 with padding, as Go's encoding/json decodes []byte (CR
 * and LF ignored).  Returns 0 and the bytes in out, or -1.
 */
static int
b64_decode(const char *in, struct buf *out)
{
	unsigned acc = 0;
	int v, nbits = 0, pad = 0;
	size_t n = 0;

	for (; *in != '\0'; in++) {
		if (*in == '\r' || *in == '\n') {
			continue;
		}
		n++;
		if (*in == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (v = b64_value((unsigned char)*in)) < 0) {
			return (-1);
		}
		acc = ((acc << 6) | (unsigned)v) & 0xffffff;
		if ((nbits += 6) >= 8) {
			nbits -= 8;
			buf_putc(out, (char)((acc >> nbits) & 0xff));
		}
	}
	if (n % 4 != 0 || pad > 2 || (pad > 0 && nbits / 2 != pad)) {
		return (-1);
	}
	return (0);
}

/* A string member, or NULL when absent or null; other types are errors. */
static const char *
get_str(struct load *ld, json_object *o, const char *key, const char *where)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL) {
		return (NULL);
	}
	if (!json_object_is_type(v, json_type_string)) {
		seterr(ld, "%s: %s must be a string", where, key);
		return (NULL);
	}
	return (json_object_get_string(v));
}

static bool
get_bool(struct load *ld, json_object *o, const char *key, const char *where)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL) {
		return (false);
	}
	if (!json_object_is_type(v, json_type_boolean)) {
		seterr(ld, "%s: %s must be a boolean", where, key);
		return (false);
	}
	return (json_object_get_boolean(v));
}

static bool
nonempty(const char *s)
{
	return (s != NULL && s[0] != '\0');
}

/*
 * PEM bytes from datakey (base64, wins) or pathkey (a file relative to
 * dir).  Leaves *pem NULL when neither is set.
 */
static void
load_pem(struct load *ld, json_object *o, const char *key, const char *dir,
        const char *where, char **pem, size_t *len)
{
	char *datakey = xasprintf("%s-data", key), *path;
	const char *data, *file, *why;
	struct buf b = BUF_INIT;

	data = get_str(ld, o, datakey, where);
	file = get_str(ld, o, key, where);
	if (nonempty(data)) {
		if (b64_decode(data, &b) != 0) {
			seterr(ld, "%s: %s is not valid base64", where,
			        datakey);
		}
	} else if (nonempty(file)) {
		path = resolve(dir, file);
		if (read_file(path, &b, &why) != 0) {
			seterr(ld, "%s: cannot read %s %s: %s", where, key,
			        path, why);
		}
		free(path);
	}
	free(datakey);
	if (ld->failed || b.data == NULL) {
		buf_fini(&b);
		return;
	}
	*pem = buf_detach(&b, len);
}

/* The file's entries of one list ("users") must be objects with unique
 * non-empty names. */
static void
check_list(struct load *ld, const struct kfile *kf, const char *list)
{
	json_object *arr, *seen, *e, *name;
	size_t i, n;

	if (!json_object_object_get_ex(kf->root, list, &arr) || arr == NULL) {
		return;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		seterr(ld, "%s: %s must be a list", kf->path, list);
		return;
	}
	seen = json_object_new_object();
	n = json_object_array_length(arr);
	for (i = 0; i < n && !ld->failed; i++) {
		e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, json_type_object)
		        || !json_object_object_get_ex(e, "name", &name)
		        || !json_object_is_type(name, json_type_string)
		        || json_object_get_string_len(name) == 0) {
			seterr(ld, "%s: %s[%zu] has no name", kf->path, list,
			        i);
		} else if (json_object_object_get_ex(
		                   seen, json_object_get_string(name), NULL)) {
			seterr(ld, "%s: duplicate name \"%s\" in %s", kf->path,
			        json_object_get_string(name), list);
		} else {
			json_object_object_add(
			        seen, json_object_get_string(name), NULL);
		}
	}
	json_object_put(seen);
}

/* Parses and checks one kubeconfig and appends it to ld (ownership of
 * path and dir taken). */
static int
add_file(struct load *ld, const char *text, size_t len, char *path, char *dir)
{
	struct kfile *kf;
	char yerr[256];
	json_object *root;

	ld->files
	        = xreallocarray(ld->files, ld->nfiles + 1, sizeof(*ld->files));
	kf = &ld->files[ld->nfiles++];
	kf->path = path;
	kf->dir = dir;
	kf->root = NULL;
	if (yamlj_parse_doc(text, len, &root, yerr, sizeof(yerr)) != 0) {
		seterr(ld, "%s: %s", path, yerr);
		return (-1);
	}
	kf->root = root;
	if (root != NULL && !json_object_is_type(root, json_type_object)) {
		seterr(ld, "%s: not a kubeconfig (not a mapping)", path);
		return (-1);
	}
	check_list(ld, kf, "clusters");
	check_list(ld, kf, "users");
	check_list(ld, kf, "contexts");
	get_str(ld, root, "current-context", path);
	return (ld->failed ? -1 : 0);
}

/* Reads path into ld.  A missing file is skipped (returns 1) unless
 * must_exist. */
static int
add_path(struct load *ld, const char *path, bool must_exist)
{
	struct buf b = BUF_INIT;
	const char *why;
	int e, rc;

	if ((e = read_file(path, &b, &why)) != 0) {
		buf_fini(&b);
		if (e == ENOENT && !must_exist) {
			log_debug(
			        "kubeconfig %s does not exist; skipped", path);
			return (1);
		}
		seterr(ld, "cannot read kubeconfig %s: %s", path, why);
		return (-1);
	}
	rc = add_file(ld, buf_str(&b), b.len, xstrdup(path), dir_of(path));
	buf_fini(&b);
	return (rc);
}

/* The inner object ("cluster" of a clusters[] entry) of the first file
 * defining name, and that file's directory; NULL when none does. */
static json_object *
find_named(struct load *ld, const char *list, const char *inner,
        const char *name, const char **dir)
{
	json_object *arr, *e, *n, *in;
	size_t f, i, len;

	for (f = 0; f < ld->nfiles; f++) {
		if (!json_object_object_get_ex(ld->files[f].root, list, &arr)
		        || arr == NULL) {
			continue;
		}
		len = json_object_array_length(arr);
		for (i = 0; i < len; i++) {
			e = json_object_array_get_idx(arr, i);
			json_object_object_get_ex(e, "name", &n);
			if (strcmp(json_object_get_string(n), name) != 0) {
				continue;
			}
			*dir = ld->files[f].dir;
			if (!json_object_object_get_ex(e, inner, &in)
			        || !json_object_is_type(
			                in, json_type_object)) {
				return (json_object_new_object());
			}
			return (json_object_get(in));
		}
	}
	return (NULL);
}

static const char *
current_context(struct load *ld)
{
	const char *s;
	size_t f;

	for (f = 0; f < ld->nfiles; f++) {
		s = get_str(ld, ld->files[f].root, "current-context", "");
		if (nonempty(s)) {
			return (s);
		}
	}
	return (NULL);
}

static void
fill_server(struct load *ld, struct kapi_conf *conf, json_object *c,
        const char *where)
{
	const char *s = get_str(ld, c, "server", where);
	size_t len;

	if (!nonempty(s)) {
		seterr(ld, "%s has no server", where);
		return;
	}
	if ((strncmp(s, "https://", 8) != 0 || s[8] == '\0')
	        && (strncmp(s, "http://", 7) != 0 || s[7] == '\0')) {
		seterr(ld,
		        "%s: server \"%s\" is not an http:// or https:// URL",
		        where, s);
		return;
	}
	conf->server = xstrdup(s);
	len = strlen(conf->server);
	while (len > 0 && conf->server[len - 1] == '/') {
		conf->server[--len] = '\0';
	}
}

static void
fill_cluster(struct load *ld, struct kapi_conf *conf, json_object *c,
        const char *dir, const char *name)
{
	char *where = xasprintf("cluster \"%s\"", name);
	const char *sni;

	fill_server(ld, conf, c, where);
	conf->insecure = get_bool(ld, c, "insecure-skip-tls-verify", where);
	/* Checked on the fields, before reading anything (client-go's
	 * validation does the same). */
	if (conf->insecure
	        && (nonempty(get_str(ld, c, "certificate-authority", where))
	                || nonempty(get_str(ld, c,
	                        "certificate-authority-data", where)))) {
		seterr(ld,
		        "%s: specifying a root certificates file with the "
		        "insecure flag is not allowed",
		        where);
	}
	load_pem(ld, c, "certificate-authority", dir, where, &conf->ca_pem,
	        &conf->ca_len);
	if (nonempty(sni = get_str(ld, c, "tls-server-name", where))) {
		conf->tls_server_name = xstrdup(sni);
	}
	free(where);
}

static void
fill_token(struct load *ld, struct kapi_conf *conf, json_object *u,
        const char *dir, const char *where)
{
	const char *tok = get_str(ld, u, "token", where);
	const char *file = get_str(ld, u, "tokenFile", where);
	struct buf b = BUF_INIT;
	const char *why;

	if (nonempty(tok)) {
		conf->token = xstrdup(tok);
	}
	if (!nonempty(file)) {
		return;
	}
	conf->token_file = resolve(dir, file);
	if (read_file(conf->token_file, &b, &why) != 0) {
		seterr(ld, "%s: cannot read tokenFile %s: %s", where,
		        conf->token_file, why);
		buf_fini(&b);
		return;
	}
	trim(&b);
	if (b.len > 0) {
		free(conf->token);
		conf->token = buf_detach(&b, NULL);
	}
	buf_fini(&b);
	conf->token_read_ms = 0;
}

static void
fill_user(struct load *ld, struct kapi_conf *conf, json_object *u,
        const char *dir, const char *name)
{
	char *where = xasprintf("user \"%s\"", name);
	json_object *v;
	const char *s;

	if (json_object_object_get_ex(u, "exec", &v) && v != NULL) {
		char why[512];

		conf->exec = kapi_exec_parse(v, name, dir, why, sizeof(why));
		if (conf->exec == NULL) {
			seterr(ld, "%s: %s", where, why);
		}
	}
	if (json_object_object_get_ex(u, "auth-provider", &v) && v != NULL) {
		seterr(ld, "%s: auth-provider plugins are not supported",
		        where);
	}
	load_pem(ld, u, "client-certificate", dir, where, &conf->cert_pem,
	        &conf->cert_len);
	load_pem(ld, u, "client-key", dir, where, &conf->key_pem,
	        &conf->key_len);
	fill_token(ld, conf, u, dir, where);
	if (nonempty(s = get_str(ld, u, "username", where))) {
		conf->username = xstrdup(s);
	}
	if (nonempty(s = get_str(ld, u, "password", where))) {
		conf->password = xstrdup(s);
	}
	free(where);
}

/* Cluster and user of context ctxname into conf. */
static void
fill_context(struct load *ld, struct kapi_conf *conf, json_object *ctx,
        const char *ctxname)
{
	char *where = xasprintf("context \"%s\"", ctxname);
	const char *cname, *uname, *ns, *dir = "/";
	json_object *c = NULL, *u = NULL;

	cname = get_str(ld, ctx, "cluster", where);
	uname = get_str(ld, ctx, "user", where);
	ns = get_str(ld, ctx, "namespace", where);
	conf->namespace = xstrdup(nonempty(ns) ? ns : "default");
	if (!nonempty(cname)) {
		seterr(ld, "%s has no cluster", where);
	} else if ((c = find_named(ld, "clusters", "cluster", cname, &dir))
	        == NULL) {
		seterr(ld, "cluster \"%s\" was not found for %s", cname,
		        where);
	} else {
		fill_cluster(ld, conf, c, dir, cname);
	}
	if (nonempty(uname) && !ld->failed) {
		if ((u = find_named(ld, "users", "user", uname, &dir))
		        == NULL) {
			seterr(ld, "user \"%s\" was not found for %s", uname,
			        where);
		} else {
			fill_user(ld, conf, u, dir, uname);
		}
	}
	json_object_put(c);
	json_object_put(u);
	free(where);
}

/* Builds the configuration from the merged files of ld. */
static struct kapi_conf *
build(struct load *ld, const char *context)
{
	struct kapi_conf *conf;
	json_object *ctx;
	const char *name = context, *dir;

	if (name == NULL && (name = current_context(ld)) == NULL) {
		seterr(ld,
		        "no current-context is set in the kubeconfig and "
		        "no context was given");
		return (NULL);
	}
	if ((ctx = find_named(ld, "contexts", "context", name, &dir))
	        == NULL) {
		seterr(ld, "context \"%s\" was not found in the kubeconfig",
		        name);
		return (NULL);
	}
	conf = xcalloc(1, sizeof(*conf));
	conf->context = xstrdup(name);
	fill_context(ld, conf, ctx, name);
	json_object_put(ctx);
	if (ld->failed) {
		kapi_conf_free(conf);
		return (NULL);
	}
	return (conf);
}

/* Loads a KUBECONFIG-style list, or the one path when must_exist. */
static struct kapi_conf *
load_paths(const char *paths, bool must_exist, const char *context, char *err,
        size_t errlen)
{
	struct kapi_conf *conf = NULL;
	struct load ld;
	char *list = xstrdup(paths), *p, *save = NULL;

	load_init(&ld, err, errlen);
	if (must_exist) {
		add_path(&ld, paths, true);
	} else {
		for (p = strtok_r(list, ":", &save); p != NULL && !ld.failed;
		        p = strtok_r(NULL, ":", &save)) {
			add_path(&ld, p, false);
		}
	}
	if (!ld.failed && ld.nfiles == 0) {
		seterr(&ld, "no kubeconfig file found in \"%s\"", paths);
	}
	if (!ld.failed) {
		conf = build(&ld, context);
	}
	load_fini(&ld);
	free(list);
	return (conf);
}

struct kapi_conf *
kapi_conf_from_kubeconfig(
        const char *paths, const char *context, char *err, size_t errlen)
{
	return (load_paths(paths, false, context, err, errlen));
}

struct kapi_conf *
kapi_conf_from_memory(const char *text, size_t len, const char *dir,
        const char *context, char *err, size_t errlen)
{
	struct kapi_conf *conf = NULL;
	struct load ld;

	load_init(&ld, err, errlen);
	if (add_file(&ld, text, len, xstrdup("kubeconfig"),
	            absolute(dir != NULL ? dir : "."))
	        == 0) {
		conf = build(&ld, context);
	}
	load_fini(&ld);
	return (conf);
}

/* "https://host:port", bracketing an IPv6 literal. */
static char *
in_cluster_server(const char *host, const char *port)
{
	if (strchr(host, ':') != NULL && host[0] != '[') {
		return (xasprintf("https://[%s]:%s", host, port));
	}
	return (xasprintf("https://%s:%s", host, port));
}

/* Reads dir/name trimmed into *out (NULL when empty); the read's errno. */
static int
read_sa_file(const char *dir, const char *name, char **out, const char **why)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct buf b = BUF_INIT;
	int e;

	*out = NULL;
	if ((e = read_file(path, &b, why)) == 0) {
		trim(&b);
		if (b.len > 0) {
			*out = buf_detach(&b, NULL);
		}
	}
	buf_fini(&b);
	free(path);
	return (e);
}

/* dir/ca.crt, byte for byte; client-go only warns when it is unreadable
 * and the system roots are used. */
static void
read_ca(struct kapi_conf *conf, const char *dir)
{
	char *path = xasprintf("%s/ca.crt", dir);
	struct buf b = BUF_INIT;
	const char *why;

	if (read_file(path, &b, &why) != 0) {
		log_warnx("cannot read %s (%s); using the system roots", path,
		        why);
	} else if (b.len > 0) {
		conf->ca_pem = buf_detach(&b, &conf->ca_len);
	}
	buf_fini(&b);
	free(path);
}

struct kapi_conf *
kapi_conf_in_cluster(const char *sa_dir, char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct kapi_conf *conf;
	const char *why;
	char *dir;

	if (!nonempty(host) || !nonempty(port)) {
		snprintf(err, errlen, "%s", NOT_IN_CLUSTER);
		return (NULL);
	}
	conf = xcalloc(1, sizeof(*conf));
	dir = absolute(sa_dir);
	conf->in_cluster = true;
	conf->server = in_cluster_server(host, port);
	conf->token_file = xasprintf("%s/token", dir);
	if (read_sa_file(dir, "token", &conf->token, &why) != 0) {
		snprintf(err, errlen,
		        "cannot read service-account token %s: %s",
		        conf->token_file, why);
		kapi_conf_free(conf);
		free(dir);
		return (NULL);
	}
	read_ca(conf, dir);
	if (read_sa_file(dir, "namespace", &conf->namespace, &why) != 0
	        || conf->namespace == NULL) {
		conf->namespace = xstrdup("default");
	}
	free(dir);
	return (conf);
}

static bool
exists(const char *path)
{
	struct stat st;

	return (stat(path, &st) == 0);
}

/*
 * controller-runtime's order.  As there, a failed in-cluster load is not
 * final: ~/.kube/config is tried next, and only when it does not exist is
 * the in-cluster reason returned.  context does not apply in-cluster.
 */
struct kapi_conf *
kapi_conf_load(const char *explicit_path, const char *context, char *err,
        size_t errlen)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	struct kapi_conf *conf;
	bool tried = false;
	char *path;

	if (explicit_path != NULL) {
		return (load_paths(explicit_path, true, context, err, errlen));
	}
	if (nonempty(env)) {
		return (load_paths(env, false, context, err, errlen));
	}
	if (nonempty(getenv("KUBERNETES_SERVICE_HOST"))
	        && nonempty(getenv("KUBERNETES_SERVICE_PORT"))) {
		if ((conf = kapi_conf_in_cluster(KAPI_SA_DIR, err, errlen))
		        != NULL) {
			return (conf);
		}
		tried = true;
	}
	path = nonempty(home) ? xasprintf("%s/.kube/config", home) : NULL;
	if (path != NULL && exists(path)) {
		conf = load_paths(path, true, context, err, errlen);
		free(path);
		return (conf);
	}
	free(path);
	if (tried) {
		/* err holds why the in-cluster configuration failed. */
		return (NULL);
	}
	snprintf(err, errlen,
	        "no configuration has been provided: no kubeconfig path, "
	        "KUBECONFIG, in-cluster environment or ~/.kube/config");
	return (NULL);
}

static void
free_secret(char *s, size_t len)
{
	if (s != NULL) {
		explicit_bzero(s, len);
		free(s);
	}
}

void
kapi_conf_free(struct kapi_conf *conf)
{
	if (conf == NULL) {
		return;
	}
	free(conf->server);
	free(conf->ca_pem);
	free(conf->cert_pem);
	free_secret(conf->key_pem, conf->key_len);
	free(conf->tls_server_name);
	free(conf->namespace);
	free(conf->username);
	free_secret(conf->password,
	        conf->password != NULL ? strlen(conf->password) : 0);
	free(conf->context);
	free_secret(
	        conf->token, conf->token != NULL ? strlen(conf->token) : 0);
	free(conf->token_file);
	kapi_exec_free(conf->exec);
	free(conf);
}
