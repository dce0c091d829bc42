/*
 * main.c: bin/sympoziumd, the supervisor.  Parses the flags (config.c),
 * finds the worker binary beside itself unless told, builds the
 * supervisor (sup.c) and runs it until SIGTERM.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mtune.h"
#include "supervisor/sup.h"

/* glibc malloc arenas (mtune.h); MALLOC_ARENA_MAX in the environment
 * wins. */
#define SUP_ARENAS 2

static char worker_path[PATH_MAX];

/* sympozium-worker in the directory of this executable. */
static const char *
default_worker(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		return ("sympozium-worker");
	}
	self[n] = '\0';
	snprintf(worker_path, sizeof(worker_path), "%s/sympozium-worker",
	        dirname(self));
	return (worker_path);
}

int
main(int argc, char **argv)
{
	struct sup_config cfg;
	enum log_format fmt;
	char err[512];

	/* before nng's and libcurl's threads exist: one arena each would
	 * keep its own freed pages (supervisor/README.md, Memory) */
	mtune_arenas(SUP_ARENAS);
	if (cfg_parse(argc, argv, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "sympoziumd: %s\n", err);
		return (2);
	}
	if (cfg.help) {
		fputs(cfg_usage(), stdout);
		return (0);
	}
	log_parse_format(cfg.log_format, &fmt);
	log_init("sympoziumd", fmt);
	log_setverbose(cfg.verbose);
	if (cfg.worker_binary == NULL) {
		cfg.worker_binary = default_worker();
	}
	struct sup *s = sup_new(&cfg, err, sizeof(err));
	if (s == NULL) {
		log_error("%s", err);
		return (1);
	}
	int rc = sup_run(s);
	sup_free(s);
	return (rc);
}
