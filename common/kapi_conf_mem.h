/*
 * kapi_conf_mem.h: the kubeconfig loader's in-memory entry point, for the
 * fuzzer and for tests.  Not part of the client's public contract
 * (kapi_conf.h).
 */
#ifndef KAPI_CONF_MEM_H
#define KAPI_CONF_MEM_H

#include <stddef.h>

#include "common/kapi_conf.h"

/*
 * Loads a kubeconfig held in memory (text, len bytes, YAML or JSON) as if
 * it were a file in directory dir (relative paths in it resolve there;
 * NULL = the current directory).  context overrides current-context when
 * non-NULL.  Returns a configuration the caller frees with
 * kapi_conf_free(), or NULL with a one-line reason in err.
 */
struct kapi_conf *kapi_conf_from_memory(const char *text, size_t len,
        const char *dir, const char *context, char *err, size_t errlen);

#endif
