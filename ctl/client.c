/*
 * client.c: sympoziumctl's one request (ctl_call() in ctl.h): connect to
 * the health socket, send the request line, read the reply until the
 * server closes, all within one deadline (non-blocking socket + poll).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "ctl/ctl.h"

static int
open_socket(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return (-1);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return (-1);
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen, "cannot connect to %s: %s%s", path,
		        strerror(errno),
		        errno == ENOENT || errno == ECONNREFUSED
		                ? " (is sympoziumd running? see --socket)"
		                : "");
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Waits for events on fd until deadline; -1 on timeout. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { fd, events, 0 };
	int64_t left = deadline - timefmt_now_ms_mono();

	if (left <= 0) {
		return (-1);
	}
	return (poll(&p, 1, (int)left) > 0 ? 0 : -1);
}

static int
send_all(int fd, const char *s, size_t len, int64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = send(fd, s + off, len - off, MSG_NOSIGNAL);
		if (r > 0) {
			off += (size_t)r;
		} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			return (-1);
		} else if (wait_fd(fd, POLLOUT, deadline) != 0) {
			return (-1);
		}
	}
	return (0);
}

/* Reads until EOF; 0, -1 on error, -2 on timeout, -3 when too long. */
static int
recv_all(int fd, struct buf *b, int64_t deadline)
{
	char chunk[8192];

	for (;;) {
		ssize_t r = recv(fd, chunk, sizeof(chunk), 0);
		if (r > 0) {
			buf_append(b, chunk, (size_t)r);
			if (b->len > HP_REPLY_MAX) {
				return (-3);
			}
		} else if (r == 0 || (errno == ECONNRESET && b->len > 0)) {
			return (0);
		} else if (errno != EAGAIN && errno != EINTR) {
			return (-1);
		} else if (wait_fd(fd, POLLIN, deadline) != 0) {
			return (-2);
		}
	}
}

int
ctl_call(const char *path, const struct hp_req *req, int64_t timeout_ms,
        json_object **reply, struct buf *raw, char *err, size_t errlen)
{
	int64_t deadline = timefmt_now_ms_mono() + timeout_ms;
	char *line = hp_req_encode(req);
	struct buf b;
	int fd, rc;

	*reply = NULL;
	if ((fd = open_socket(path, err, errlen)) < 0) {
		free(line);
		return (CTL_EXIT_CONNECT);
	}
	buf_init(&b);
	rc = send_all(fd, line, strlen(line), deadline) != 0
	        ? -1
	        : recv_all(fd, &b, deadline);
	free(line);
	close(fd);
	if (rc == 0 && b.len == 0) {
		snprintf(err, errlen,
		        "%s: the supervisor closed the connection "
		        "without answering",
		        path);
		rc = -4;
	} else if (rc == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	} else if (rc == -2) {
		snprintf(err, errlen, "%s: no answer within %lld ms", path,
		        (long long)timeout_ms);
	} else if (rc == -3) {
		snprintf(err, errlen, "%s: reply too long", path);
	} else if (raw != NULL) {
		buf_append(raw, b.data, b.len);
	}
	if (rc != 0) {
		buf_fini(&b);
		return (CTL_EXIT_CONNECT);
	}
	rc = hp_reply_decode(b.data, b.len, reply, err, errlen);
	buf_fini(&b);
	return (rc == 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR);
}
