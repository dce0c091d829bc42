/*
 * ksim.c: the kubesim test driver of ksim.h.  Owns the child process
 * (fork/exec with a stdout pipe, a thread that copies later stdout lines to
 * stderr), one-shot libcurl requests and watch streams (one thread per
 * watch running a curl easy transfer whose write callback fills a
 * mutex-protected buffer and signals a condition variable), the ksim_api
 * fixture (temporary directory, kubeconfig, request log, kapi client) and
 * request-log counting, and loading CRD files into a running kubesim.
 */
#include "tests/lib/ksim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/lib/testutil.h"

#define START_TIMEOUT_MS   10000
#define STOP_TIMEOUT_MS    5000
#define DEFAULT_REQ_MS     15000
#define API_MAX_EXTRA      56
#define RESTART_TIMEOUT_MS 5000

struct ksim {
	pid_t pid;
	int out_fd;
	char *url;
	pthread_t drain;
	bool drain_started;
};

struct ksim_watch {
	CURL *curl;
	struct curl_slist *hdrs;
	char *url;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct buf data; /* bytes not yet returned as lines */
	struct buf all;  /* everything received */
	struct buf hdr;  /* header lines of the final response */
	long status;     /* final HTTP status, once all headers are in */
	long pending;    /* status line seen, headers still coming */
	bool ended;
	atomic_bool cancel;
	int lines;
	int bad;
	int64_t end_ms;
	char errbuf[CURL_ERROR_SIZE];
	char *error;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
init_curl(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	signal(SIGPIPE, SIG_IGN);
}

int64_t
ksim_now_ms(void)
{
	return (timefmt_now_ms_mono());
}

void
ksim_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		continue;
	}
}

const char *
ksim_binary(void)
{
	const char *p = getenv("KUBESIM");

	return (p != NULL && *p != '\0' ? p : "bin/kubesim");
}

static void
exec_child(const char *bin, const char *const *args, int out_fd)
{
	const char *argv[64];
	int n = 0;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(out_fd, STDOUT_FILENO) < 0) {
		_exit(127);
	}
	argv[n++] = bin;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	for (int i = 0; args != NULL && args[i] != NULL && n < 63; i++) {
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	execv(bin, (char *const *)(uintptr_t)argv);
	fprintf(stderr, "ksim: exec %s: %s\n", bin, strerror(errno));
	_exit(127);
}

/* Reads stdout until the first line or the deadline.  Returns the line
 * (caller frees) or NULL. */
static char *
read_first_line(int fd, int timeout_ms)
{
	struct buf b = BUF_INIT;
	int64_t deadline = ksim_now_ms() + timeout_ms;
	char c;

	for (;;) {
		int64_t left = deadline - ksim_now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			break;
		}
		if (read(fd, &c, 1) != 1) {
			break;
		}
		if (c == '\n') {
			return (buf_detach(&b, NULL));
		}
		buf_putc(&b, c);
	}
	if (b.len > 0) {
		fprintf(stderr, "ksim: partial first line: %s\n", buf_str(&b));
	}
	buf_fini(&b);
	return (NULL);
}

static void *
drain_main(void *arg)
{
	struct ksim *k = arg;
	char chunk[4096];
	ssize_t n;

	while ((n = read(k->out_fd, chunk, sizeof(chunk))) > 0) {
		if (write(STDERR_FILENO, chunk, (size_t)n) < 0) {
			break;
		}
	}
	return (NULL);
}

static int
reap(pid_t pid, int timeout_ms)
{
	int64_t deadline = ksim_now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			return (WIFEXITED(st) ? WEXITSTATUS(st)
			                      : 128 + WTERMSIG(st));
		}
		if (r < 0) {
			return (-1);
		}
		if (ksim_now_ms() >= deadline) {
			return (-2);
		}
		ksim_sleep_ms(10);
	}
}

static void
kill_and_free(struct ksim *k)
{
	kill(k->pid, SIGKILL);
	reap(k->pid, STOP_TIMEOUT_MS);
	close(k->out_fd);
	free(k->url);
	free(k);
}

struct ksim *
ksim_start(const char *const *args)
{
	const char *bin = ksim_binary();
	struct ksim *k;
	int p[2];
	char *line;

	pthread_once(&curl_once, init_curl);
	if (access(bin, X_OK) != 0) {
		fprintf(stderr, "ksim: kubesim binary %s: %s (set KUBESIM)\n",
		        bin, strerror(errno));
		return (NULL);
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		fprintf(stderr, "ksim: pipe: %s\n", strerror(errno));
		return (NULL);
	}
	k = xcalloc(1, sizeof(*k));
	k->pid = fork();
	if (k->pid == 0) {
		exec_child(bin, args, p[1]);
	}
	close(p[1]);
	k->out_fd = p[0];
	if (k->pid < 0) {
		fprintf(stderr, "ksim: fork: %s\n", strerror(errno));
		close(p[0]);
		free(k);
		return (NULL);
	}
	line = read_first_line(k->out_fd, START_TIMEOUT_MS);
	if (line == NULL || strncmp(line, "listening on ", 13) != 0) {
		fprintf(stderr,
		        "ksim: %s did not print \"listening on URL\" within "
		        "%d ms (got: %s)\n",
		        bin, START_TIMEOUT_MS, line ? line : "nothing");
		free(line);
		kill_and_free(k);
		return (NULL);
	}
	k->url = xstrdup(line + 13);
	free(line);
	k->drain_started = pthread_create(&k->drain, NULL, drain_main, k) == 0;
	return (k);
}

int
ksim_stop(struct ksim *k)
{
	int rc;

	if (k == NULL) {
		return (-1);
	}
	kill(k->pid, SIGTERM);
	rc = reap(k->pid, STOP_TIMEOUT_MS);
	if (rc == -2) {
		fprintf(stderr, "ksim: no exit %d ms after SIGTERM; killing\n",
		        STOP_TIMEOUT_MS);
		kill(k->pid, SIGKILL);
		rc = reap(k->pid, STOP_TIMEOUT_MS);
		rc = rc >= 0 ? 128 + SIGKILL : rc;
	}
	if (k->drain_started) {
		pthread_join(k->drain, NULL);
	}
	close(k->out_fd);
	free(k->url);
	free(k);
	return (rc);
}

const char *
ksim_url(const struct ksim *k)
{
	return (k->url);
}

pid_t
ksim_pid(const struct ksim *k)
{
	return (k->pid);
}

static size_t
append_cb(char *p, size_t size, size_t n, void *arg)
{
	buf_append(arg, p, size * n);
	return (size * n);
}

static struct curl_slist *
make_headers(const char *ctype, const char *const *headers)
{
	struct curl_slist *l = NULL;
	char *h;

	/* "Expect:" disables 100-continue; an empty Content-Type name
	 * removes the one curl would add for POST bodies. */
	l = curl_slist_append(l, "Expect:");
	if (ctype != NULL) {
		h = xasprintf("Content-Type: %s", ctype);
		l = curl_slist_append(l, h);
		free(h);
	} else {
		l = curl_slist_append(l, "Content-Type:");
	}
	for (; headers != NULL && *headers != NULL; headers++) {
		l = curl_slist_append(l, *headers);
	}
	return (l);
}

static void
common_opts(CURL *c, const char *url, struct curl_slist *hdrs)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
}

static void
set_body(CURL *c, const char *method, const char *body)
{
	if (strcmp(method, "GET") == 0 && body == NULL) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
		return;
	}
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		return;
	}
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
}

static void
fill_resp(struct ksim_resp *r, CURL *c, struct buf *body, struct buf *hdr)
{
	char *ct = NULL;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	r->content_type = xstrdup(ct != NULL ? ct : "");
	r->body = buf_detach(body, &r->body_len);
	r->headers = buf_detach(hdr, NULL);
	if (r->body_len > 0) {
		r->json = jx_parse(r->body, r->body_len, 0, NULL, 0);
	}
}

/* Keeps only the header block of the last response (after 1xx). */
static size_t
header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;

	if (size * n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		buf_reset(b);
	}
	buf_append(b, p, size * n);
	return (size * n);
}

struct ksim_resp *
ksim_request(const char *base, const char *method, const char *path,
        const char *ctype, const char *body, const char *const *headers,
        int timeout_ms)
{
	struct ksim_resp *r = xcalloc(1, sizeof(*r));
	struct buf rb = BUF_INIT, hb = BUF_INIT;
	char errbuf[CURL_ERROR_SIZE] = "";
	char *url = xasprintf("%s%s", base, path);
	struct curl_slist *hdrs = make_headers(ctype, headers);
	int64_t t0 = ksim_now_ms();
	CURL *c;
	CURLcode rc;

	pthread_once(&curl_once, init_curl);
	c = curl_easy_init();
	common_opts(c, url, hdrs);
	set_body(c, method, body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
	        (long)(timeout_ms > 0 ? timeout_ms : DEFAULT_REQ_MS));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &rb);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	rc = curl_easy_perform(c);
	fill_resp(r, c, &rb, &hb);
	if (rc != CURLE_OK) {
		r->code = 0;
		r->error = xasprintf("%s: %s", curl_easy_strerror(rc), errbuf);
	} else {
		r->error = xstrdup("");
	}
	r->elapsed_ms = ksim_now_ms() - t0;
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	free(url);
	return (r);
}

void
ksim_resp_free(struct ksim_resp *r)
{
	if (r == NULL) {
		return;
	}
	free(r->body);
	free(r->content_type);
	free(r->headers);
	free(r->error);
	json_object_put(r->json);
	free(r);
}

static char *
find_header(const char *headers, const char *name)
{
	size_t nlen = strlen(name);
	const char *line = headers;

	while (line != NULL && *line != '\0') {
		const char *eol = strchr(line, '\n');
		size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);

		if (len > nlen && strncasecmp(line, name, nlen) == 0
		        && line[nlen] == ':') {
			const char *v = line + nlen + 1;
			const char *end = line + len;

			while (v < end && (*v == ' ' || *v == '\t')) {
				v++;
			}
			while (end > v
			        && (end[-1] == '\r' || end[-1] == ' ')) {
				end--;
			}
			return (xstrndup(v, (size_t)(end - v)));
		}
		line = eol != NULL ? eol + 1 : NULL;
	}
	return (NULL);
}

char *
ksim_resp_header(const struct ksim_resp *r, const char *name)
{
	return (find_header(r->headers, name));
}

char *
ksim_urlenc(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = BUF_INIT;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9')
		        || strchr("-_.~", c) != NULL) {
			buf_putc(&b, (char)c);
		} else {
			buf_putc(&b, '%');
			buf_putc(&b, hex[c >> 4]);
			buf_putc(&b, hex[c & 15]);
		}
	}
	return (buf_detach(&b, NULL));
}

/* Watch streams. */

static size_t
watch_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct ksim_watch *w = arg;

	pthread_mutex_lock(&w->mu);
	buf_append(&w->data, p, size * n);
	buf_append(&w->all, p, size * n);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return (size * n);
}

static size_t
watch_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct ksim_watch *w = arg;
	long code = 0;

	pthread_mutex_lock(&w->mu);
	if (size * n > 9 && strncmp(p, "HTTP/", 5) == 0) {
		const char *sp = memchr(p, ' ', size * n);

		buf_reset(&w->hdr);
		code = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
	}
	buf_append(&w->hdr, p, size * n);
	/* The blank line ends the header block: the status is final. */
	if (size * n <= 2 && w->status == 0 && w->pending >= 200) {
		w->status = w->pending;
		pthread_cond_broadcast(&w->cv);
	}
	if (code != 0) {
		w->pending = code;
	}
	pthread_mutex_unlock(&w->mu);
	return (size * n);
}

static int
watch_progress_cb(
        void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct ksim_watch *w = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return (w->cancel ? 1 : 0);
}

static void *
watch_main(void *arg)
{
	struct ksim_watch *w = arg;
	CURLcode rc = curl_easy_perform(w->curl);

	pthread_mutex_lock(&w->mu);
	if (w->status == 0 && w->pending >= 200) {
		w->status = w->pending;
	}
	w->ended = true;
	w->end_ms = ksim_now_ms();
	if (rc != CURLE_OK) {
		w->error = xasprintf(
		        "%s: %s", curl_easy_strerror(rc), w->errbuf);
	} else {
		w->error = xstrdup("");
	}
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return (NULL);
}

struct ksim_watch *
ksim_watch_open(const char *base, const char *path, const char *const *headers)
{
	struct ksim_watch *w = xcalloc(1, sizeof(*w));
	CURL *c;

	pthread_once(&curl_once, init_curl);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	buf_init(&w->data);
	buf_init(&w->all);
	buf_init(&w->hdr);
	w->url = xasprintf("%s%s", base, path);
	w->hdrs = make_headers(NULL, headers);
	w->curl = c = curl_easy_init();
	common_opts(c, w->url, w->hdrs);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, watch_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watch_progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, w->errbuf);
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		fprintf(stderr, "ksim: cannot start a watch thread\n");
		abort();
	}
	return (w);
}

static struct timespec
deadline_ts(int timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return (ts);
}

long
ksim_watch_status(struct ksim_watch *w, int timeout_ms)
{
	struct timespec ts = deadline_ts(timeout_ms);
	long code;

	pthread_mutex_lock(&w->mu);
	while (w->status == 0 && !w->ended) {
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0) {
			break;
		}
	}
	code = w->status;
	pthread_mutex_unlock(&w->mu);
	return (code);
}

/* With w->mu held: takes the next complete line out of w->data.  Returns
 * the parsed event, or NULL with *got false when no full line is there. */
static json_object *
take_line(struct ksim_watch *w, bool *got)
{
	char *nl = w->data.len > 0 ? memchr(w->data.data, '\n', w->data.len)
	                           : NULL;
	json_object *o;
	size_t len;

	*got = nl != NULL;
	if (nl == NULL) {
		return (NULL);
	}
	len = (size_t)(nl - w->data.data);
	o = jx_parse(w->data.data, len, 0, NULL, 0);
	w->lines++;
	if (o == NULL) {
		fprintf(stderr, "ksim: bad watch line: %.*s\n", (int)len,
		        w->data.data);
		w->bad++;
	}
	buf_consume(&w->data, len + 1);
	return (o);
}

json_object *
ksim_watch_next(struct ksim_watch *w, int timeout_ms)
{
	struct timespec ts = deadline_ts(timeout_ms);
	json_object *o = NULL;
	bool got;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		o = take_line(w, &got);
		if (o != NULL) {
			break;
		}
		if (got) {
			continue;
		}
		if (w->ended) {
			break;
		}
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return (o);
}

bool
ksim_watch_wait_end(struct ksim_watch *w, int timeout_ms)
{
	struct timespec ts = deadline_ts(timeout_ms);
	bool ended;

	pthread_mutex_lock(&w->mu);
	while (!w->ended) {
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0) {
			break;
		}
	}
	ended = w->ended;
	pthread_mutex_unlock(&w->mu);
	return (ended);
}

bool
ksim_watch_ended(struct ksim_watch *w)
{
	return (ksim_watch_wait_end(w, 0));
}

int64_t
ksim_watch_end_ms(struct ksim_watch *w)
{
	int64_t t;

	pthread_mutex_lock(&w->mu);
	t = w->end_ms;
	pthread_mutex_unlock(&w->mu);
	return (t);
}

int
ksim_watch_bad_lines(struct ksim_watch *w)
{
	int n;

	pthread_mutex_lock(&w->mu);
	n = w->bad;
	if (w->ended && w->data.len > 0
	        && memchr(w->data.data, '\n', w->data.len) == NULL) {
		n++;
	}
	pthread_mutex_unlock(&w->mu);
	return (n);
}

int
ksim_watch_lines(struct ksim_watch *w)
{
	int n;

	pthread_mutex_lock(&w->mu);
	n = w->lines;
	pthread_mutex_unlock(&w->mu);
	return (n);
}

char *
ksim_watch_body(struct ksim_watch *w)
{
	char *s;

	pthread_mutex_lock(&w->mu);
	s = xstrdup(buf_str(&w->all));
	pthread_mutex_unlock(&w->mu);
	return (s);
}

char *
ksim_watch_header(struct ksim_watch *w, const char *name)
{
	char *v;

	pthread_mutex_lock(&w->mu);
	v = find_header(buf_str(&w->hdr), name);
	pthread_mutex_unlock(&w->mu);
	return (v);
}

char *
ksim_watch_error(struct ksim_watch *w)
{
	char *s;

	pthread_mutex_lock(&w->mu);
	s = xstrdup(w->error != NULL ? w->error : "");
	pthread_mutex_unlock(&w->mu);
	return (s);
}

void
ksim_watch_close(struct ksim_watch *w)
{
	if (w == NULL) {
		return;
	}
	w->cancel = true;
	pthread_join(w->thread, NULL);
	curl_easy_cleanup(w->curl);
	curl_slist_free_all(w->hdrs);
	buf_fini(&w->data);
	buf_fini(&w->all);
	buf_fini(&w->hdr);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->error);
	free(w->url);
	free(w);
}

/* The ksim_api fixture. */

/* Removes the directory with the kubeconfig, the request log and what
 * the caller put there (supervisors' logs and runtime directories), unless
 * $KEEP_TEST_DIR is set (testutil_rmtree()). */
static void
api_remove_files(struct ksim_api *a)
{
	if (testutil_rmtree(a->dir) != 0) {
		fprintf(stderr, "ksim: cannot remove all of %s: %s\n", a->dir,
		        strerror(errno));
	}
}

/* Fills the paths of a fresh directory; 0 or -1. */
static int
api_make_dir(struct ksim_api *a)
{
	snprintf(a->dir, sizeof(a->dir), "/tmp/ksim-XXXXXX");
	if (mkdtemp(a->dir) == NULL) {
		fprintf(stderr, "ksim: mkdtemp %s: %s\n", a->dir,
		        strerror(errno));
		return (-1);
	}
	snprintf(
	        a->kubeconfig, sizeof(a->kubeconfig), "%s/kubeconfig", a->dir);
	snprintf(a->request_log, sizeof(a->request_log), "%s/requests.log",
	        a->dir);
	return (0);
}

static struct ksim *
api_start_server(struct ksim_api *a, const char *const *extra)
{
	const char *args[4 + API_MAX_EXTRA + 1] = { "--write-kubeconfig",
		a->kubeconfig, "--request-log", a->request_log };
	int n = 4;

	for (; extra != NULL && *extra != NULL; extra++) {
		if (n == 4 + API_MAX_EXTRA) {
			fprintf(stderr, "ksim: more than %d extra args\n",
			        API_MAX_EXTRA);
			return (NULL);
		}
		args[n++] = *extra;
	}
	args[n] = NULL;
	return (ksim_start(args));
}

int
ksim_api_start(struct ksim_api *a, const char *const *extra_args,
        const char *user_agent, long timeout_ms)
{
	char err[256] = "";

	memset(a, 0, sizeof(*a));
	if (api_make_dir(a) != 0) {
		memset(a, 0, sizeof(*a));
		return (-1);
	}
	if ((a->k = api_start_server(a, extra_args)) == NULL) {
		ksim_api_stop(a);
		return (-1);
	}
	a->conf = kapi_conf_load(a->kubeconfig, NULL, err, sizeof(err));
	if (a->conf == NULL) {
		fprintf(stderr, "ksim: kapi_conf_load %s: %s\n", a->kubeconfig,
		        err);
		ksim_api_stop(a);
		return (-1);
	}
	a->c = kapi_client_new(a->conf, user_agent);
	kapi_client_set_timeout(a->c, timeout_ms);
	return (0);
}

int
ksim_api_restart(
        struct ksim_api *a, int down_ms, const char *const *extra_args)
{
	const char *args[API_MAX_EXTRA + 1];
	const char *hp;
	char listen[80];
	int64_t deadline;
	size_t n = 0;

	if (a->k == NULL || (hp = strstr(ksim_url(a->k), "://")) == NULL) {
		fprintf(stderr, "ksim: restart: no server running\n");
		return (-1);
	}
	snprintf(listen, sizeof(listen), "%s", hp + 3);
	args[n++] = "--listen";
	args[n++] = listen;
	for (; extra_args != NULL && *extra_args != NULL; extra_args++) {
		if (n == API_MAX_EXTRA) {
			fprintf(stderr, "ksim: restart: too many args\n");
			return (-1);
		}
		args[n++] = *extra_args;
	}
	args[n] = NULL;
	(void)ksim_stop(a->k);
	a->k = NULL;
	ksim_sleep_ms(down_ms);
	/* the port is free once the old process is gone (SO_REUSEADDR);
	 * a few tries cover a slow exit */
	deadline = ksim_now_ms() + RESTART_TIMEOUT_MS;
	while ((a->k = api_start_server(a, args)) == NULL
	        && ksim_now_ms() < deadline) {
		ksim_sleep_ms(100);
	}
	return (a->k != NULL ? 0 : -1);
}

int
ksim_api_stop(struct ksim_api *a)
{
	int rc;

	if (a->dir[0] == '\0') {
		return (-1);
	}
	if (a->c != NULL) {
		kapi_client_free(a->c);
	}
	if (a->conf != NULL) {
		kapi_conf_free(a->conf);
	}
	rc = ksim_stop(a->k);
	if (rc > 0) {
		fprintf(stderr, "ksim: kubesim exit status %d\n", rc);
	}
	api_remove_files(a);
	memset(a, 0, sizeof(*a));
	return (rc);
}

int
ksim_api_teardown(void **state)
{
	return (ksim_api_stop(*state) == 0 ? 0 : -1);
}

/* NULL filters match anything; a missing field matches only NULL. */
static bool
log_line_matches(
        json_object *l, const char *verb, const char *path, const char *ua)
{
	const char *v = jx_get_str(l, "verb"), *m = jx_get_str(l, "method");
	const char *p = jx_get_str(l, "path"), *u = jx_get_str(l, "userAgent");

	if (verb != NULL && !(v != NULL && strcmp(v, verb) == 0)
	        && !(m != NULL && strcmp(m, verb) == 0)) {
		return (false);
	}
	if (path != NULL && (p == NULL || strstr(p, path) == NULL)) {
		return (false);
	}
	return (ua == NULL || (u != NULL && strstr(u, ua) != NULL));
}

int
ksim_count_log(const char *request_log, const char *verb,
        const char *path_fragment, const char *user_agent_fragment)
{
	FILE *f = fopen(request_log, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int n = 0;

	if (f == NULL) {
		fprintf(stderr, "ksim: request log %s: %s\n", request_log,
		        strerror(errno));
		return (-1);
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		json_object *l = jx_parse(line, (size_t)len, 0, NULL, 0);

		if (json_object_is_type(l, json_type_object)
		        && log_line_matches(
		                l, verb, path_fragment, user_agent_fragment)) {
			n++;
		}
		json_object_put(l);
	}
	free(line);
	fclose(f);
	return (n);
}

enum kapi_rc
ksim_api_create(struct ksim_api *a, const struct kapi_res *r, const char *ns,
        const char *name, const char *app_label)
{
	json_object *o = json_object_new_object();
	struct kapi_err e = KAPI_ERR_INIT;
	enum kapi_rc rc;

	jx_setv(o, json_object_new_string(name), "metadata", "name", NULL);
	if (app_label != NULL) {
		jx_setv(o, json_object_new_string(app_label), "metadata",
		        "labels", "app", NULL);
	}
	rc = kapi_create(a->c, r, ns, o, NULL, &e);
	if (rc != KAPI_OK) {
		fprintf(stderr, "ksim_api_create %s: %s\n", name,
		        e.message != NULL ? e.message : kapi_rc_name(rc));
	}
	json_object_put(o);
	kapi_err_fini(&e);
	return (rc);
}

static int
yaml_file(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return (de->d_name[0] != '.' && n > 5
	        && strcmp(de->d_name + n - 5, ".yaml") == 0);
}

/* Creates every CustomResourceDefinition of one YAML file; the number
 * created, or -1. */
static int
apply_crd_file(struct kapi_client *c, const char *path)
{
	static const struct kapi_res crd = { "apiextensions.k8s.io", "v1",
		"customresourcedefinitions", false };
	size_t len = 0;
	char *text = testutil_read_file(path, &len);
	char err[256] = "";
	json_object *docs = text != NULL
	        ? yamlj_parse_all(text, len, err, sizeof(err))
	        : NULL;
	int n = 0;

	if (docs == NULL) {
		fprintf(stderr, "ksim: %s: %s\n", path,
		        text != NULL ? err : "cannot read");
		n = -1;
	}
	for (size_t j = 0; n >= 0 && j < json_object_array_length(docs); j++) {
		json_object *d = json_object_array_get_idx(docs, j);
		const char *kind = jx_get_str(d, "kind");
		struct kapi_err e = KAPI_ERR_INIT;

		if (kind != NULL
		        && strcmp(kind, "CustomResourceDefinition") == 0) {
			n = kapi_create(c, &crd, NULL, d, NULL, &e) == KAPI_OK
			        ? n + 1
			        : -1;
		}
		if (n < 0) {
			fprintf(stderr, "ksim: CRD %s: %s\n", path,
			        e.message != NULL ? e.message : "");
		}
		kapi_err_fini(&e);
	}
	json_object_put(docs);
	free(text);
	return (n);
}

int
ksim_apply_crds(struct kapi_client *c, const char *dir)
{
	struct dirent **list = NULL;
	int nf = scandir(dir, &list, yaml_file, alphasort);
	int n = 0;

	if (nf < 0) {
		fprintf(stderr, "ksim: %s: %s\n", dir, strerror(errno));
		return (-1);
	}
	for (int i = 0; i < nf; i++) {
		char *path = xasprintf("%s/%s", dir, list[i]->d_name);
		int k = n >= 0 ? apply_crd_file(c, path) : 0;

		n = k < 0 ? -1 : n + k;
		free(path);
		free(list[i]);
	}
	free(list);
	return (n);
}

/* ---- writes in the request log ---- */

static const char *const write_methods[]
        = { "POST", "PUT", "PATCH", "DELETE", NULL };

static bool
is_write(const char *m)
{
	for (int i = 0; m != NULL && write_methods[i] != NULL; i++) {
		if (strcmp(write_methods[i], m) == 0) {
			return (true);
		}
	}
	return (false);
}

int
ksim_writes_after(const char *request_log, const char *user_agent_fragment,
        int skip, bool show)
{
	char *t = testutil_read_file(request_log, NULL);
	char *save = NULL, *end = t != NULL ? strrchr(t, '\n') : NULL;
	int line = 0, n = 0;

	if (end == NULL) {
		free(t);
		return (0);
	}
	end[1] = '\0'; /* a line being written is left for later */
	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save), line++) {
		json_object *o = line >= skip ? json_tokener_parse(l) : NULL;
		const char *ua = jx_get_str(o, "userAgent");
		const char *p = jx_get_str(o, "path");

		if (is_write(jx_get_str(o, "method")) && ua != NULL
		        && strstr(ua, user_agent_fragment) != NULL && p != NULL
		        && strstr(p, "/leases") == NULL) {
			n++;
			if (show) {
				fprintf(stderr, "unexpected write: %.300s\n",
				        l);
			}
		}
		json_object_put(o);
	}
	free(t);
	return (n);
}

int
ksim_log_lines(const char *request_log)
{
	char *t = testutil_read_file(request_log, NULL);
	int n = 0;

	for (const char *p = t; p != NULL && *p != '\0'; p++) {
		n += *p == '\n';
	}
	free(t);
	return (n);
}

void
ksim_wait_quiet(const char *request_log, const char *user_agent_fragment,
        int quiet_ms, int max_ms)
{
	int64_t end = ksim_now_ms() + max_ms;
	int last = ksim_writes_after(
	        request_log, user_agent_fragment, 0, false);
	int64_t since = ksim_now_ms();

	while (ksim_now_ms() < end && ksim_now_ms() - since < quiet_ms) {
		int n;
		ksim_sleep_ms(100);
		n = ksim_writes_after(
		        request_log, user_agent_fragment, 0, false);
		if (n != last) {
			last = n;
			since = ksim_now_ms();
		}
	}
}
