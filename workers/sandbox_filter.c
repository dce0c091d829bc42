/*
 * sandbox_filter.c: the worker sandbox's seccomp filter (sandbox.h): the
 * lists of system calls (allowed, allowed with conditions, deadly), the
 * SIGSYS handler that every call outside the allowed ones reaches
 * (SCMP_ACT_TRAP), and the once-per-call log of refused calls.  The lists
 * come from an audit of every suite (workers/README.md "The sandbox's
 * system calls" has the reason of each entry).
 *
 * A call that is not allowed never runs.  The handler then either kills
 * the worker (a deadly call in mode on: it writes the kill report of
 * ipc/sbxrep.h to the supervisor's pipe, puts SIGSYS back to its default
 * action and raises it, so the process still dies by SIGSYS) or makes the
 * call fail with ENOSYS and notes its number for sbx_log_refused() (every
 * other call; every call in mode log).  libc copes with ENOSYS where a
 * call of its own is refused (sorting, time zones, sysconf, stdio).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <seccomp.h>

#include "common/errmsg.h"
#include "common/log.h"
#include "ipc/sbxrep.h"
#include "workers/sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif
#ifndef SBX_ASAN
#define SBX_ASAN 0
#endif

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* siginfo's si_code for a seccomp trap */
#endif

/* System call numbers the handler keeps a bit for (x86_64 and aarch64
 * numbers are below 512). */
#define NR_MAX 1024

/* Allowed without conditions.  Names unknown on this architecture (poll,
 * epoll_wait on aarch64, ...) are skipped. */
static const char *const allowed[] = {
	/* the pipe: nng's ipc transport and its epoll-based poller */
	"read", "write", "readv", "writev", "recvmsg", "sendmsg", "recvfrom",
	"sendto", "shutdown", "close", "fcntl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "epoll_ctl", "poll", "ppoll", "pselect6", "select",
	/* nng's threads: locks, condition variables, timers */
	"futex", "sched_yield", "clock_gettime", "clock_getres",
	"gettimeofday", "time", "nanosleep", "clock_nanosleep",
	"restart_syscall", "pause", "rt_sigsuspend",
	/* malloc and thread stacks */
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise",
	/* signals: abort(), raise(), returns from handlers */
	"rt_sigreturn", "rt_sigprocmask", "rt_sigaction",
	/* a new thread's start (nng's threads all exist before entry;
	 * pthread_create still works): glibc registers these */
	"set_robust_list", "rseq",
	/* identity and the end */
	"getpid", "gettid", "getrandom", "exit", "exit_group",
	/* read-only figures about the machine and this process, no
	 * descriptor, no path: qsort() of 1 KiB or more asks
	 * sysconf(_SC_PHYS_PAGES) (sysinfo), malloc's arena count
	 * (sched_getaffinity), sysconf's limits (getrlimit), uname */
	"sysinfo", "sched_getaffinity", "getrlimit", "uname", "getuid",
	"geteuid", "getgid", "getegid", "getppid", "getrusage", "times",
	/* descriptors the worker already has (stdout, stderr, the pipe):
	 * stdio's buffer size and position */
	"fstat", "lseek", NULL
};

/* Killing calls: they open files or sockets, change the file system,
 * create processes, run programs, signal or trace other processes,
 * change identity or reach into the kernel.  kill, tgkill and clone reach
 * the handler only in their forbidden forms (another pid; a process). */
static const char *const deadly[] = {
	/* files */
	"open", "openat", "openat2", "creat", "open_by_handle_at",
	"name_to_handle_at", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink",
	"symlinkat", "mknod", "mknodat", "chmod", "fchmod", "fchmodat",
	"chown", "fchown", "lchown", "fchownat", "truncate", "ftruncate",
	"utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
	"fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "chroot",
	"mount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig",
	"fspick", "move_mount", "open_tree", "mount_setattr", "swapon",
	"swapoff", "quotactl", "acct", "memfd_create", "memfd_secret",
	/* sockets */
	"socket", "socketpair", "connect", "bind", "listen", "accept",
	"accept4",
	/* processes and programs */
	"execve", "execveat", "fork", "vfork", "clone", "ptrace",
	"process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
	"pidfd_send_signal", "kill", "tgkill", "tkill", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "unshare", "setns",
	/* the kernel */
	"bpf", "perf_event_open", "seccomp", "init_module", "finit_module",
	"delete_module", "kexec_load", "kexec_file_load", "reboot",
	"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key", "iopl", "ioperm", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "sethostname",
	"setdomainname",
	/* identity */
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setfsuid", "setfsgid", "setgroups", "capset", NULL
};

/* Also allowed in ASan builds: the reporter (/proc/self/maps, the binary's
 * path), LeakSanitizer's exit check (a tracer task that ptraces the
 * threads listed from /proc/self/task), the allocator's probes. */
static const char *const allowed_asan[] = { "open", "openat", "readlink",
	"readlinkat", "getdents64", "fstat", "newfstatat", "stat", "lstat",
	"statx", "lseek", "pread64", "ptrace", "wait4", "waitid", "prctl",
	"sigaltstack", "sched_getaffinity", "mincore", "getppid", "dup",
	"dup2", "dup3", "pipe", "pipe2", "kill", "tgkill", "tkill",
	"getrlimit", "prlimit64", "uname", "setrlimit", "access", "faccessat",
	"faccessat2", "ioctl", "unshare", "getuid", "geteuid", "getgid",
	"getegid", NULL };

/* The handler's state: set before the filter, read-only after (but the
 * refused bits). */
static struct {
	int report_fd;    /* the kill report's pipe, -1 none */
	bool kill_deadly; /* mode on (log: deadly calls are refused) */
	unsigned char deadly[NR_MAX / 8];
	atomic_uchar refused[NR_MAX / 8];
	atomic_int refused_other; /* a number >= NR_MAX, +1 (0: none) */
	atomic_bool any;          /* a refusal since the last log */
	unsigned char logged[NR_MAX / 8];
	bool logged_other;
} sbx = { .report_fd = -1 };

static bool
bit(const unsigned char *set, int nr)
{
	return (nr >= 0 && nr < NR_MAX && (set[nr / 8] & (1u << (nr % 8))));
}

static void
set_bit(unsigned char *set, int nr)
{
	if (nr >= 0 && nr < NR_MAX) {
		set[nr / 8] |= (unsigned char)(1u << (nr % 8));
	}
}

bool
sbx_relaxed(void)
{
	return (SBX_ASAN != 0);
}

void
sbx_set_report_fd(int fd)
{
	sbx.report_fd = fd;
}

/* In the handler: the kill report, then death by SIGSYS. */
static void
die(int nr, uint32_t arch)
{
	unsigned char rec[SBXREP_LEN];
	struct sigaction sa;
	sigset_t set;

	if (sbx.report_fd >= 0 && nr >= 0) {
		sbxrep_encode(rec, (uint32_t)nr, arch);
		(void)!write(sbx.report_fd, rec, sizeof(rec));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(SIGSYS, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	(void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	(void)raise(SIGSYS);
	_exit(128 + SIGSYS);
}

/* In the handler: the trapped call returns -ENOSYS. */
static bool
fail_call(void *uctx)
{
	ucontext_t *uc = uctx;

#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
	return (true);
#elif defined(__aarch64__)
	uc->uc_mcontext.regs[0] = (unsigned long long)-ENOSYS;
	return (true);
#else
	(void)uc;
	return (false);
#endif
}

/* The SIGSYS handler: async-signal-safe, errno kept. */
static void
on_sigsys(int sig, siginfo_t *si, void *uctx)
{
	int saved = errno, nr = si->si_syscall;

	(void)sig;
	if (si->si_code != SYS_SECCOMP) {
		die(-1, 0); /* a SIGSYS someone sent: its default action */
	}
	if ((sbx.kill_deadly && bit(sbx.deadly, nr)) || !fail_call(uctx)) {
		die(nr, si->si_arch);
	}
	if (nr >= 0 && nr < NR_MAX) {
		atomic_fetch_or(
		        &sbx.refused[nr / 8], (unsigned char)(1u << (nr % 8)));
	} else {
		atomic_store(&sbx.refused_other, nr + 1);
	}
	atomic_store(&sbx.any, true);
	errno = saved;
}

static void
log_one(int nr, const char *key)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	log_warnx("sandbox: system call %s (%d) refused with ENOSYS%s%s%s",
	        name != NULL ? name : "unknown", nr,
	        bit(sbx.deadly, nr) ? " (in mode on it kills)" : "",
	        key != NULL ? ", reconciling " : "", key != NULL ? key : "");
	free(name);
}

int
sbx_log_refused(const char *key)
{
	int n = 0, other;

	if (!atomic_exchange(&sbx.any, false)) {
		return (0);
	}
	for (int i = 0; i < NR_MAX; i++) {
		unsigned char b = (unsigned char)(1u << (i % 8));
		if ((atomic_load(&sbx.refused[i / 8]) & b) != 0
		        && !bit(sbx.logged, i)) {
			set_bit(sbx.logged, i);
			log_one(i, key);
			n++;
		}
	}
	other = atomic_load(&sbx.refused_other);
	if (other != 0 && !sbx.logged_other) {
		sbx.logged_other = true;
		log_one(other - 1, key);
		n++;
	}
	return (n);
}

/* Adds action for every name of list that this architecture knows;
 * bits (may be NULL) gets their numbers. */
static int
add_list(scmp_filter_ctx ctx, uint32_t action, const char *const *list,
        unsigned char *bits)
{
	for (size_t i = 0; list[i] != NULL; i++) {
		int nr = seccomp_syscall_resolve_name(list[i]);
		if (nr == __NR_SCMP_ERROR) {
			continue;
		}
		if (bits != NULL) {
			set_bit(bits, nr);
		}
		if (action != SCMP_ACT_TRAP
		        && seccomp_rule_add(ctx, action, nr, 0) != 0) {
			return (-1);
		}
	}
	return (0);
}

/* The calls allowed with conditions on their arguments. */
static int
conditional(scmp_filter_ctx ctx)
{
	scmp_datum_t self = (scmp_datum_t)getpid();
	int rc = 0;

	/* new threads only (pthread_create); a process (fork: no
	 * CLONE_THREAD) is killed.  glibc tries clone3 first: ENOSYS sends
	 * it back to clone, whose flags the filter can read. */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	        SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	rc |= seccomp_rule_add(
	        ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* raise() and abort(): signals to this process only */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
	        SCMP_A0(SCMP_CMP_EQ, self));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
	        SCMP_A0(SCMP_CMP_EQ, self));
	/* isatty() (stdio's buffering of a terminal): TCGETS reads only */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	        SCMP_A1(SCMP_CMP_EQ, TCGETS));
	/* getrlimit() is prlimit64(0, res, NULL, &old): reading only */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
	        SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0));
	return (rc != 0 ? -1 : 0);
}

static int
relaxed(scmp_filter_ctx ctx)
{
	/* first, so that kill and tgkill are allowed unconditionally and
	 * clone with any flags (LeakSanitizer's tracer) */
	int rc = add_list(ctx, SCMP_ACT_ALLOW, allowed_asan, NULL);

	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 0);
	rc |= seccomp_rule_add(
	        ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	return (rc != 0 ? -1 : 0);
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return ((x > y) - (x < y));
}

/* Fills glibc's caches that some calls fill on first use with a system
 * call: qsort()'s physical memory size (sysconf(_SC_PHYS_PAGES), read by
 * its merge sort for arrays of 1 KiB or more); the time zone, which
 * gmtime_r(), localtime_r(), mktime() and strftime() read once (opening
 * /etc/localtime or $TZ's file: a deadly call). */
static void
prewarm(void)
{
	long v[256];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		v[i] = (long)(sizeof(v) / sizeof(v[0]) - i);
	}
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp_long);
	(void)sysconf(_SC_PHYS_PAGES);
	tzset();
}

/* SIGSYS to on_sigsys, unblocked in this thread (nng's threads, started
 * earlier, block only SIGPIPE). */
static int
install_handler(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	if (sigaction(SIGSYS, &sa, NULL) != 0
	        || pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0) {
		return (-1);
	}
	return (0);
}

static int
build(scmp_filter_ctx ctx)
{
	int rc = seccomp_attr_set(
	        ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

	rc |= add_list(ctx, SCMP_ACT_ALLOW, allowed, NULL);
	rc |= add_list(ctx, SCMP_ACT_TRAP, deadly, sbx.deadly);
	if (rc == 0) {
		rc = SBX_ASAN ? relaxed(ctx) : conditional(ctx);
	}
	return (rc);
}

int
sbx_filter_install(bool log, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int rc;

	prewarm();
	sbx.kill_deadly = !log;
	if (install_handler() != 0) {
		errmsg(err, errlen, "SIGSYS handler: %s", strerror(errno));
		return (-1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		errmsg(err, errlen, "PR_SET_NO_NEW_PRIVS: %s",
		        strerror(errno));
		return (-1);
	}
	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (ctx == NULL) {
		errmsg(err, errlen, "seccomp_init failed");
		return (-1);
	}
	rc = build(ctx);
	if (rc == 0) {
		rc = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	if (rc != 0) {
		errmsg(err, errlen, "seccomp filter: %s", strerror(-rc));
		return (-1);
	}
	return (0);
}
