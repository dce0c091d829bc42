/*
 * fuzz_kubeconfig.c: libFuzzer target for the kubeconfig loader and the
 * YAML converter.  Each input is loaded as an in-memory kubeconfig
 * (kapi_conf_from_memory, relative paths resolving in a directory that
 * does not exist) and parsed as a multi-document YAML stream; everything
 * is freed, so leaks show up under ASan.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "common/kapi_conf.h"
#include "common/kapi_conf_mem.h"
#include "common/log.h"
#include "common/yamlj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet = -1;
	const char *text = (const char *)data;
	struct kapi_conf *conf;
	json_object *docs;
	char err[256];

	if (quiet == -1) {
		/* Loader warnings would drown libFuzzer's output. */
		quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
		log_setfd(quiet);
	}
	conf = kapi_conf_from_memory(
	        text, size, "/nonexistent-fuzz-dir", NULL, err, sizeof(err));
	if (conf != NULL) {
		(void)kapi_conf_token(conf, 0);
	}
	kapi_conf_free(conf);
	docs = yamlj_parse_all(text, size, err, sizeof(err));
	json_object_put(docs);
	return (0);
}
