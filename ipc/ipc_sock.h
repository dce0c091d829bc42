/*
 * ipc_sock.h: the nng transport of the ipc protocol (ipc.h): one nng pair1
 * socket over ipc://<path> per worker session.  Prefix ipc_sock_.  This is
 * the only module that includes nng.
 *
 * The supervisor listens (ipc_sock_listen()) on a path inside its private
 * runtime directory (created by the caller, mode 0700) and uses only the
 * non-blocking calls: ipc_sock_send() never stalls, ipc_sock_recv() returns
 * at once, and ipc_sock_fd() gives a descriptor for its poll loop that is
 * readable while a message is waiting.  The worker dials (ipc_sock_dial())
 * and may block in ipc_sock_recv_wait().
 *
 * Every received message goes through ipc_decode(): malformed or oversized
 * input is reported as an error, never a crash.  Messages larger than the
 * socket's bound are also dropped by nng itself (NNG_OPT_RECVMAXSZ), which
 * closes the offending connection.
 *
 * Sockets are not thread-safe for our purposes: use one from one thread.
 */
#ifndef IPC_SOCK_H
#define IPC_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/ipc.h"

struct ipc_sock;

/* Outcome of ipc_sock_send(), ipc_sock_recv() and ipc_sock_recv_wait(). */
enum ipc_sock_rc {
	IPC_SOCK_ERR = -1,  /* error (message in err when given) */
	IPC_SOCK_OK = 0,    /* sent / received */
	IPC_SOCK_AGAIN = 1, /* would block / nothing yet / timed out */
};

/* Listens on ipc://path (the socket file gets mode 0600; nng replaces a
 * stale socket file nobody listens on).  max_len bounds inbound messages
 * (0: IPC_MAX_LEN).  Returns a socket (close with ipc_sock_close()), or NULL
 * with a message in err. */
struct ipc_sock *ipc_sock_listen(
        const char *path, size_t max_len, char *err, size_t errlen);

/* Dials ipc://path, retrying until connected or timeout_ms elapsed.  max_len
 * as for ipc_sock_listen().  Returns a socket, or NULL with a message in
 * err. */
struct ipc_sock *ipc_sock_dial(const char *path, size_t max_len,
        int timeout_ms, char *err, size_t errlen);

/* Encodes and queues a message; body is borrowed (NULL sends {}).  Never
 * blocks: up to 64 messages are queued inside nng (also before a peer has
 * connected); IPC_SOCK_AGAIN when that queue is full (nothing was queued;
 * try again later), IPC_SOCK_ERR on other failures (closed socket, unknown
 * type, body not an object). */
enum ipc_sock_rc ipc_sock_send(struct ipc_sock *s, enum ipc_type type,
        uint32_t reqid, json_object *body);

/* Takes one message without blocking.  IPC_SOCK_OK: *msg is filled (free
 * with ipc_msg_fini()); IPC_SOCK_AGAIN: nothing waiting; IPC_SOCK_ERR: a
 * message arrived and was invalid (it is dropped; err says why; the session
 * should be ended) or the socket failed.  *msg is zeroed unless OK. */
enum ipc_sock_rc ipc_sock_recv(
        struct ipc_sock *s, struct ipc_msg *msg, char *err, size_t errlen);

/* Like ipc_sock_recv() but waits up to timeout_ms (< 0: for ever) for a
 * message; IPC_SOCK_AGAIN when the time ran out. */
enum ipc_sock_rc ipc_sock_recv_wait(struct ipc_sock *s, int timeout_ms,
        struct ipc_msg *msg, char *err, size_t errlen);

/* A descriptor that polls readable (POLLIN) while a message is waiting
 * (NNG_OPT_RECVFD).  Owned by the socket: do not read or close it.
 * -1 on failure. */
int ipc_sock_fd(struct ipc_sock *s);

/* The pid of the connected peer process (NNG_OPT_IPC_PEER_PID), or -1 when
 * no peer is connected (yet). */
pid_t ipc_sock_peer_pid(struct ipc_sock *s);

/* Closes the socket and frees it; NULL is accepted.  Queued messages may
 * be dropped. */
void ipc_sock_close(struct ipc_sock *s);
/* The same without waiting: the close runs on a detached thread of its
 * own (nng 1.5.2 can hang in nng_close(); see ipc_sock.c).  NULL is
 * accepted. */
void ipc_sock_close_async(struct ipc_sock *s);
/* How many ipc_sock_close_async() closes have not finished. */
unsigned ipc_sock_closing(void);

#endif
