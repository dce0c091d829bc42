/*
 * kapi_token.c: the bearer-token source of kapi_conf.h.  A token file is
 * never cached for the life of the process: it is re-read at most every
 * KAPI_TOKEN_REFRESH_MS, and at the next use after a 401 marked it stale
 * (client-go's cachingTokenSource).  A failed read keeps the last good
 * token, so a kubelet caught mid-rewrite does not break requests.  An exec
 * credential plugin's credential (kapi_exec.h) is refreshed here too.
 */
#include "common/kapi_conf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/timefmt.h"

/* A service-account token is about 1 KiB; anything past this is not one. */
#define TOKEN_MAX (64 * 1024)

/* Reads the whole file and trims surrounding whitespace; NULL on failure
 * or when the file is empty. */
static char *
read_token(const char *path)
{
	struct buf b = BUF_INIT;
	size_t start = 0;

	if (buf_read_file(&b, path, TOKEN_MAX) != 0) {
		buf_fini(&b);
		return (NULL);
	}
	while (b.len > 0 && isspace((unsigned char)b.data[b.len - 1])) {
		b.data[--b.len] = '\0';
	}
	while (start < b.len && isspace((unsigned char)b.data[start])) {
		start++;
	}
	buf_consume(&b, start);
	if (b.len == 0) {
		buf_fini(&b);
		return (NULL);
	}
	return (buf_detach(&b, NULL));
}

/* The plugin's credential into conf. */
static void
take_cred(struct kapi_conf *conf, struct kapi_exec_cred *c)
{
	free(conf->token);
	conf->token = c->token;
	if (c->cert_pem != NULL) {
		free(conf->cert_pem);
		free(conf->key_pem);
		conf->cert_pem = c->cert_pem;
		conf->key_pem = c->key_pem;
		conf->cert_len = strlen(c->cert_pem);
		conf->key_len = strlen(c->key_pem);
	}
	conf->exec_expires_ms = c->expires_ms;
	conf->exec_have = true;
	conf->token_stale = false;
}

int
kapi_conf_refresh(struct kapi_conf *conf)
{
	struct kapi_exec_cred c;
	char err[640], *info;
	int64_t now = timefmt_now_us_real() / 1000;

	if (conf->exec == NULL) {
		return (0);
	}
	if (conf->exec_have && !conf->token_stale
	        && (conf->exec_expires_ms == 0
	                || now < conf->exec_expires_ms)) {
		return (0);
	}
	info = kapi_exec_info(conf->exec, conf->server, conf->ca_pem,
	        conf->ca_len, conf->insecure, conf->tls_server_name);
	if (kapi_exec_run(conf->exec, info, &c, err, sizeof(err)) != 0) {
		free(info);
		log_warnx("%s%s", err,
		        conf->exec_have ? "; keeping the last credential"
		                        : "");
		conf->token_stale = false; /* one run per 401 */
		return (conf->exec_have ? 0 : -1);
	}
	free(info);
	take_cred(conf, &c);
	return (0);
}

const char *
kapi_conf_token(struct kapi_conf *conf, int64_t now_ms)
{
	char *t;

	if (conf->exec != NULL) {
		kapi_conf_refresh(conf);
		return (conf->token);
	}
	if (conf->token_file == NULL) {
		return (conf->token);
	}
	if (conf->token != NULL && !conf->token_stale
	        && now_ms - conf->token_read_ms < KAPI_TOKEN_REFRESH_MS) {
		return (conf->token);
	}
	t = read_token(conf->token_file);
	conf->token_read_ms = now_ms;
	conf->token_stale = false;
	if (t == NULL) {
		log_warnx("cannot read token file %s; keeping the last token",
		        conf->token_file);
		return (conf->token);
	}
	free(conf->token);
	conf->token = t;
	return (conf->token);
}

void
kapi_conf_token_invalidate(struct kapi_conf *conf)
{
	conf->token_stale = true;
}
