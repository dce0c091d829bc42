/* test_hproto.c: the health socket's protocol (ipc/hproto.h) and server
 * (supervisor/health.h): request and reply lines both ways, bad input,
 * the JSON bodies rendered from struct stats, worker name matching, the
 * peer rule, and the server driven in process (mode 0600, a stale socket
 * replaced, a live one or a plain file refused, one answer per
 * connection, garbage and oversized requests, the per-connection timeout,
 * the connection limit). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "ipc/hproto.h"
#include "supervisor/health.h"

static void
test_req_roundtrip(void **state)
{
	(void)state;
	for (int c = 0; c < HP_NCMDS; c++) {
		struct hp_req in = { .cmd = (enum hp_cmd)c }, out;
		char err[128];
		snprintf(in.name, sizeof(in.name), "testctl-%d", c);
		char *line = hp_req_encode(&in);
		assert_int_equal(line[strlen(line) - 1], '\n');
		assert_int_equal(hp_req_decode(line, strlen(line), &out, err,
		                         sizeof(err)),
		        0);
		assert_int_equal(out.cmd, c);
		assert_string_equal(
		        out.name, hp_cmd_needs_name(in.cmd) ? in.name : "");
		free(line);
	}
}

static void
expect_bad(const char *s, size_t len, const char *why)
{
	struct hp_req r;
	char err[256] = "";

	assert_int_equal(hp_req_decode(s, len, &r, err, sizeof(err)), -1);
	if (strstr(err, why) == NULL) {
		print_error("%s: got \"%s\"\n", s, err);
	}
	assert_non_null(strstr(err, why));
}

static void
test_req_bad(void **state)
{
	char big[HP_REQ_MAX + 10];

	(void)state;
	expect_bad("hello", 5, "");
	expect_bad("[1]", 3, "want {\"cmd\"");
	expect_bad("{}", 2, "want {\"cmd\"");
	expect_bad("{\"cmd\":7}", 9, "want {\"cmd\"");
	expect_bad("{\"cmd\":\"reboot\"}", 16, "want {\"cmd\"");
	expect_bad("{\"cmd\":\"restart\"}", 17, "restart: want a \"name\"");
	expect_bad("{\"cmd\":\"pause\",\"name\":\"A/../b\"}", 31, "pause");
	expect_bad("{\"cmd\":\"pause\",\"name\":\"\"}", 25, "pause");
	expect_bad("{\"cmd\":\"status\",\"x\":[[[[[1]]]]]}", 32, "");
	expect_bad("{\"cmd\":\"sta\0tus\"}", 17, "");
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"cmd\":\"status\"}", 16);
	expect_bad(big, sizeof(big), "longer than");
	/* names are bounded */
	char longname[400];
	snprintf(longname, sizeof(longname),
	        "{\"cmd\":\"worker\",\"name\":\"%0200d\"}", 1);
	expect_bad(longname, strlen(longname), "worker");
}

static void
test_reply(void **state)
{
	json_object *o = json_object_new_object(), *out;
	char err[256], *line;

	(void)state;
	json_object_object_add(o, "x", json_object_new_int(3));
	line = hp_reply_ok(o);
	assert_int_equal(
	        hp_reply_decode(line, strlen(line), &out, err, sizeof(err)),
	        0);
	assert_true(json_object_get_boolean(jx_get(out, "ok")));
	assert_int_equal(json_object_get_int(jx_get(out, "x")), 3);
	json_object_put(out);
	free(line);
	line = hp_reply_ok(NULL);
	assert_string_equal(line, "{\"ok\":true}\n");
	free(line);
	line = hp_reply_error("no worker \"%s\"", "x-1");
	assert_int_equal(
	        hp_reply_decode(line, strlen(line), &out, err, sizeof(err)),
	        -1);
	assert_null(out);
	assert_string_equal(err, "no worker \"x-1\"");
	free(line);
	assert_int_equal(hp_reply_decode("{}", 2, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid reply"));
	assert_int_equal(hp_reply_decode("xx", 2, &out, err, sizeof(err)), -1);
	assert_string_equal(hp_cmd_name(HP_NCMDS), "unknown");
}

static struct stats *
sample(void)
{
	struct stats *st = stats_new(0, 0);

	stats_add_ctl(st, "testctl");
	stats_add_ctl(st, "my-ctl");
	stats_add_worker(st, "testctl", 0);
	stats_add_worker(st, "testctl", 1);
	stats_add_worker(st, "my-ctl", 0);
	stats_add_kind(st, "configmaps", "testctl");
	st->workers[0].pid = 42;
	st->workers[0].state = STATS_W_BUSY;
	st->workers[0].started_ms = 100;
	snprintf(st->workers[0].key, sizeof(st->workers[0].key), "ns/a");
	st->workers[0].key_since_ms = 900;
	st->workers[1].state = STATS_W_CRASHLOOP;
	snprintf(st->workers[1].last_exit, STATS_ERR_MAX, "exit 3");
	st->ctls[0].paused = true;
	st->ctls[0].depth = 5;
	st->kinds[0].objects = 7;
	st->kinds[0].synced = true;
	stats_reconcile(st, "testctl", 0, STATS_ERROR, 30, "boom", 500);
	stats_api(st, KAPI_LIST, 200);
	stats_leadership(st, true, 2, 200);
	return (st);
}

static void
test_render(void **state)
{
	struct stats *st = sample();
	json_object *o = health_status_json(st, 1000);

	(void)state;
	assert_string_equal(jx_get_str(o, "supervisor.role"), "leader");
	int64_t v;
	assert_int_equal(jx_get_int(o, "supervisor.roleSinceAgoMs", &v), 0);
	assert_int_equal(v, 800);
	assert_int_equal(jx_get_int(o, "supervisor.epoch", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(
	        jx_get_int(o, "supervisor.api.requests.0.code", &v), 0);
	assert_int_equal(v, 200);
	assert_string_equal(
	        jx_get_str(o, "supervisor.api.requests.0.verb"), "LIST");
	assert_string_equal(jx_get_str(o, "workers.0.name"), "testctl-0");
	assert_string_equal(jx_get_str(o, "workers.0.state"), "busy");
	assert_string_equal(jx_get_str(o, "workers.0.key"), "ns/a");
	assert_int_equal(jx_get_int(o, "workers.0.keyAgeMs", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(jx_get_int(o, "workers.0.startedAgoMs", &v), 0);
	assert_int_equal(v, 900);
	assert_int_equal(jx_get_int(o, "workers.0.reconciles.error", &v), 0);
	assert_int_equal(v, 1);
	assert_string_equal(jx_get_str(o, "workers.0.lastError"), "boom");
	assert_string_equal(jx_get_str(o, "workers.1.state"), "crash-loop");
	assert_string_equal(jx_get_str(o, "workers.1.lastExit"), "exit 3");
	assert_int_equal(jx_get_int(o, "workers.1.keyAgeMs", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(jx_get_int(o, "workers.1.latencyMs.p50", &v), 0);
	assert_int_equal(v, -1);
	assert_null(jx_get(o, "workers.0.latencyMs.buckets"));
	assert_true(
	        json_object_get_boolean(jx_get(o, "controllers.0.paused")));
	assert_int_equal(jx_get_int(o, "controllers.0.depth", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(jx_get_int(o, "kinds.0.objects", &v), 0);
	assert_int_equal(v, 7);
	json_object_put(o);
	o = health_worker_json(&st->workers[0], true, 1000);
	assert_int_equal(
	        json_object_array_length(jx_get(o, "latencyMs.buckets")),
	        STATS_NBUCKETS);
	/* 30 ms: cumulative 0 at 0.025, 1 from 0.05 on */
	assert_int_equal(jx_get_int(o, "latencyMs.buckets.2.1", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(jx_get_int(o, "latencyMs.buckets.3.1", &v), 0);
	assert_int_equal(v, 1);
	json_object_put(o);
	stats_free(st);
}

static void
test_match(void **state)
{
	struct stats *st = sample();
	size_t idx[8];

	(void)state;
	assert_int_equal(health_match(st, "testctl-1", idx, 8), 1);
	assert_int_equal(idx[0], 1);
	assert_int_equal(health_match(st, "testctl", idx, 8), 2);
	assert_int_equal(health_match(st, "my-ctl", idx, 8), 1);
	assert_int_equal(idx[0], 2);
	assert_int_equal(health_match(st, "my-ctl-0", idx, 8), 1);
	assert_int_equal(health_match(st, "testctl-2", idx, 8), 0);
	assert_int_equal(health_match(st, "testctl", idx, 1), 1);
	assert_true(health_peer_allowed(1000, 1000));
	assert_true(health_peer_allowed(0, 1000));
	assert_false(health_peer_allowed(65534, 1000));
	assert_false(health_peer_allowed(65534, 0));
	stats_free(st);
}

/* ---- the server, in process ---- */

struct srv {
	char dir[64], path[128];
	struct health *h;
	int calls;
};

static char *
handler(void *arg, const struct hp_req *req, int64_t now)
{
	struct srv *s = arg;
	json_object *o = json_object_new_object();

	(void)now;
	s->calls++;
	json_object_object_add(
	        o, "cmd", json_object_new_string(hp_cmd_name(req->cmd)));
	json_object_object_add(o, "name", json_object_new_string(req->name));
	return (hp_reply_ok(o));
}

static int
srv_setup(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	char err[256];

	snprintf(s->dir, sizeof(s->dir), "/tmp/test_hproto.XXXXXX");
	if (mkdtemp(s->dir) == NULL) {
		free(s);
		return (-1);
	}
	snprintf(s->path, sizeof(s->path), "%s/h.sock", s->dir);
	s->h = health_new(s->path, handler, s, err, sizeof(err));
	*state = s;
	return (s->h != NULL ? 0 : -1);
}

static int
srv_teardown(void **state)
{
	struct srv *s = *state;

	health_free(s->h);
	assert_int_equal(access(s->path, F_OK), -1); /* removed */
	rmdir(s->dir);
	free(s);
	return (0);
}

static int
client(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return (fd);
}

/* Drives the server until fd's reply is complete (server closed). */
static char *
reply_of(struct srv *s, int fd, int64_t now)
{
	struct buf b = BUF_INIT;
	char chunk[4096];

	for (int i = 0; i < 2000; i++) {
		health_handle(s->h, now);
		ssize_t r = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (r > 0) {
			buf_append(&b, chunk, (size_t)r);
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			break;
		} else {
			usleep(1000);
		}
	}
	buf_putc(&b, '\0');
	return (buf_detach(&b, NULL));
}

static void
test_server_answers(void **state)
{
	struct srv *s = *state;
	struct stat sb;
	int fd;
	char *r;

	assert_int_equal(stat(s->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_true(health_alive(s->path));
	fd = client(s->path);
	assert_int_equal(
	        send(fd, "{\"cmd\":\"worker\",\"name\":\"a-0\"}\n", 31, 0),
	        31);
	r = reply_of(s, fd, 0);
	assert_string_equal(
	        r, "{\"cmd\":\"worker\",\"name\":\"a-0\",\"ok\":true}\n");
	free(r);
	close(fd);
	/* EOF without a newline still counts as the request */
	fd = client(s->path);
	assert_int_equal(send(fd, "{\"cmd\":\"status\"}", 16, 0), 16);
	shutdown(fd, SHUT_WR);
	r = reply_of(s, fd, 0);
	assert_non_null(strstr(r, "\"cmd\":\"status\""));
	free(r);
	close(fd);
	/* garbage */
	fd = client(s->path);
	assert_int_equal(send(fd, "\x01\x02garbage\n", 10, 0), 10);
	r = reply_of(s, fd, 0);
	assert_non_null(strstr(r, "\"ok\":false"));
	assert_non_null(strstr(r, "bad request"));
	free(r);
	close(fd);
	assert_int_equal(s->calls, 2);
	assert_int_equal(health_nconns(s->h), 0);
}

static void
test_server_oversized(void **state)
{
	struct srv *s = *state;
	char big[HP_REQ_MAX + 100];
	int fd = client(s->path);
	char *r;

	memset(big, 'x', sizeof(big));
	(void)!send(fd, big, sizeof(big), 0);
	r = reply_of(s, fd, 0);
	assert_non_null(strstr(r, "longer than"));
	free(r);
	close(fd);
	assert_int_equal(s->calls, 0);
}

static void
test_server_timeout(void **state)
{
	struct srv *s = *state;
	int fd = client(s->path);
	char c;

	health_handle(s->h, 1000);
	assert_int_equal(health_nconns(s->h), 1);
	assert_int_equal(health_next_deadline(s->h), 1000 + HEALTH_TIMEOUT_MS);
	(void)!send(fd, "{\"cmd\"", 6, 0); /* half a request */
	health_handle(s->h, 1000 + HEALTH_TIMEOUT_MS - 1);
	assert_int_equal(health_nconns(s->h), 1);
	health_handle(s->h, 1000 + HEALTH_TIMEOUT_MS);
	assert_int_equal(health_nconns(s->h), 0);
	assert_int_equal(health_next_deadline(s->h), -1);
	assert_int_equal(recv(fd, &c, 1, 0), 0); /* closed */
	close(fd);
}

static void
test_server_limit(void **state)
{
	struct srv *s = *state;
	int fds[HEALTH_MAX_CONNS + 1];
	char *r;

	for (int i = 0; i < HEALTH_MAX_CONNS; i++) {
		fds[i] = client(s->path);
	}
	health_handle(s->h, 0);
	assert_int_equal(health_nconns(s->h), HEALTH_MAX_CONNS);
	struct pollfd pf[HEALTH_MAX_CONNS + 4];
	assert_int_equal(health_fds(s->h, pf, HEALTH_MAX_CONNS + 4),
	        HEALTH_MAX_CONNS + 1);
	fds[HEALTH_MAX_CONNS] = client(s->path);
	r = reply_of(s, fds[HEALTH_MAX_CONNS], 0);
	assert_non_null(strstr(r, "too many connections"));
	free(r);
	for (int i = 0; i <= HEALTH_MAX_CONNS; i++) {
		close(fds[i]);
	}
	health_handle(s->h, 0);
	assert_int_equal(health_nconns(s->h), 0);
}

static void
test_server_paths(void **state)
{
	struct srv *s = *state;
	char err[256], file[160];
	struct health *h2;
	FILE *f;

	/* a live socket is not taken over */
	h2 = health_new(s->path, handler, s, err, sizeof(err));
	assert_null(h2);
	assert_non_null(strstr(err, "in use"));
	/* a plain file is not removed */
	snprintf(file, sizeof(file), "%s/plain", s->dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_null(health_new(file, handler, s, err, sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	unlink(file);
	/* a stale socket (no server) is replaced */
	health_free(s->h);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_false(health_alive(s->path));
	s->h = health_new(s->path, handler, s, err, sizeof(err));
	assert_non_null(s->h);
	assert_true(health_alive(s->path));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_roundtrip),
		cmocka_unit_test(test_req_bad),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_match),
		cmocka_unit_test_setup_teardown(
		        test_server_answers, srv_setup, srv_teardown),
		cmocka_unit_test_setup_teardown(
		        test_server_oversized, srv_setup, srv_teardown),
		cmocka_unit_test_setup_teardown(
		        test_server_timeout, srv_setup, srv_teardown),
		cmocka_unit_test_setup_teardown(
		        test_server_limit, srv_setup, srv_teardown),
		cmocka_unit_test_setup_teardown(
		        test_server_paths, srv_setup, srv_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
