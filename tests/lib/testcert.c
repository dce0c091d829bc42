/*
 * testcert.c: the certificate checks of testcert.h with OpenSSL 3's X509
 * API.  Used by the TLS test server (testsrv.c) to check client
 * certificates against the CA it trusts.
 */
#include "tests/lib/testcert.h"

#include <stdlib.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/xmalloc.h"

static X509 *
read_pem(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);

	BIO_free(bio);
	return (x);
}

static char *
cn_of(X509 *x)
{
	char cn[256];

	if (X509_NAME_get_text_by_NID(
	            X509_get_subject_name(x), NID_commonName, cn, sizeof(cn))
	        < 0) {
		return (NULL);
	}
	return (xstrdup(cn));
}

char *
testcert_subject_cn(const char *pem)
{
	X509 *x = read_pem(pem);
	char *cn;

	if (x == NULL) {
		return (NULL);
	}
	cn = cn_of(x);
	X509_free(x);
	return (cn);
}

char *
testcert_verify_der(const unsigned char *der, long len, const char *ca_pem)
{
	X509 *x, *ca;
	EVP_PKEY *pub;
	char *cn = NULL;

	if ((x = d2i_X509(NULL, &der, len)) == NULL) {
		return (NULL);
	}
	if ((ca = read_pem(ca_pem)) != NULL
	        && (pub = X509_get0_pubkey(ca)) != NULL
	        && X509_verify(x, pub) == 1
	        && X509_cmp_current_time(X509_get0_notBefore(x)) < 0
	        && X509_cmp_current_time(X509_get0_notAfter(x)) > 0) {
		cn = cn_of(x);
	}
	X509_free(ca);
	X509_free(x);
	return (cn);
}
