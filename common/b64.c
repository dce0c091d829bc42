/*
 * b64.c: base64 encoding (b64.h), by OpenSSL's EVP_EncodeBlock.
 */
#include <openssl/evp.h>

#include "common/b64.h"
#include "common/xmalloc.h"

char *
b64_encode(const void *data, size_t n)
{
	unsigned char *out = xmalloc(4 * ((n + 2) / 3) + 1);

	EVP_EncodeBlock(out, data, (int)n);
	return ((char *)out);
}
