/*
 * kcert.c: the run-time CA and leaf certificates of kcert.h, built with
 * OpenSSL 3's EVP and X509 APIs.  Used by kubesim's --tls mode and by the
 * TLS test server (tests/lib/testsrv.c) and its clients.
 */
#include "kubesim/kcert.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/xmalloc.h"

#define VALID_SECS (24L * 3600)

static char *
bio_string(BIO *bio)
{
	char *data;
	long n;

	n = BIO_get_mem_data(bio, &data);
	return (n > 0 ? xstrndup(data, (size_t)n) : NULL);
}

static char *
key_pem(EVP_PKEY *key)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)) {
		s = bio_string(bio);
	}
	BIO_free(bio);
	return (s);
}

static char *
cert_pem(X509 *x)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (PEM_write_bio_X509(bio, x)) {
		s = bio_string(bio);
	}
	BIO_free(bio);
	return (s);
}

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL) {
		return (-1);
	}
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return (ok ? 0 : -1);
}

static X509_NAME *
make_name(const char *cn, const char *org)
{
	X509_NAME *n = X509_NAME_new();

	if (org != NULL) {
		X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
		        (const unsigned char *)org, -1, -1, 0);
	}
	X509_NAME_add_entry_by_txt(
	        n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
	return (n);
}

/* A certificate for key named cn/org, signed by issuer/ikey (self-signed
 * when issuer is NULL), with the given extensions (nid, value pairs). */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, const char *org, X509 *issuer,
        EVP_PKEY *ikey, const int *nids, const char *const *values, int next)
{
	static long serial = 1;
	X509 *x = X509_new();
	X509_NAME *name = make_name(cn, org);
	int i, ok = 1;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), VALID_SECS);
	X509_set_subject_name(x, name);
	X509_set_issuer_name(
	        x, issuer != NULL ? X509_get_subject_name(issuer) : name);
	X509_set_pubkey(x, key);
	for (i = 0; i < next && ok; i++) {
		ok = add_ext(x, issuer != NULL ? issuer : x, nids[i],
		             values[i])
		        == 0;
	}
	X509_NAME_free(name);
	if (!ok || !X509_sign(x, issuer != NULL ? ikey : key, EVP_sha256())) {
		X509_free(x);
		return (NULL);
	}
	return (x);
}

static int
leaf(struct kcert *tc, X509 *ca, EVP_PKEY *cakey, const char *cn,
        const char *org, int server)
{
	static const int nids[] = { NID_basic_constraints, NID_key_usage,
		NID_ext_key_usage, NID_subject_alt_name };
	const char *values[] = { "critical,CA:FALSE",
		"critical,digitalSignature,keyEncipherment",
		server ? "serverAuth" : "clientAuth",
		"IP:127.0.0.1,DNS:localhost" };
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x;

	if (key == NULL) {
		return (-1);
	}
	x = make_cert(key, cn, org, ca, cakey, nids, values, server ? 4 : 3);
	if (x == NULL) {
		EVP_PKEY_free(key);
		return (-1);
	}
	if (server) {
		tc->server_cert = cert_pem(x);
		tc->server_key = key_pem(key);
	} else {
		tc->client_cert = cert_pem(x);
		tc->client_key = key_pem(key);
	}
	X509_free(x);
	EVP_PKEY_free(key);
	return (0);
}

int
kcert_generate(struct kcert *tc, const char *client_cn, const char *client_org)
{
	static const int nids[] = { NID_basic_constraints, NID_key_usage,
		NID_subject_key_identifier };
	static const char *const values[] = { "critical,CA:TRUE",
		"critical,keyCertSign,cRLSign", "hash" };
	static int generation;
	char ca_name[64];
	EVP_PKEY *cakey;
	X509 *ca;
	int rc = -1;

	/* Distinct CA names, so that a client trusting another test CA
	 * fails on the issuer, as with a real wrong CA. */
	snprintf(ca_name, sizeof(ca_name), "kubesim-ca-%d-%d", (int)getpid(),
	        ++generation);

	memset(tc, 0, sizeof(*tc));
	if ((cakey = EVP_EC_gen("P-256")) == NULL) {
		return (-1);
	}
	ca = make_cert(cakey, ca_name, NULL, NULL, NULL, nids, values, 3);
	if (ca != NULL && leaf(tc, ca, cakey, "localhost", NULL, 1) == 0
	        && leaf(tc, ca, cakey, client_cn, client_org, 0) == 0) {
		tc->ca_cert = cert_pem(ca);
		tc->ca_key = key_pem(cakey);
		rc = 0;
	}
	X509_free(ca);
	EVP_PKEY_free(cakey);
	if (rc == 0
	        && (tc->ca_cert == NULL || tc->ca_key == NULL
	                || tc->server_cert == NULL || tc->server_key == NULL
	                || tc->client_cert == NULL
	                || tc->client_key == NULL)) {
		rc = -1;
	}
	if (rc != 0) {
		kcert_free(tc);
	}
	return (rc);
}

void
kcert_free(struct kcert *tc)
{
	free(tc->ca_cert);
	free(tc->ca_key);
	free(tc->server_cert);
	free(tc->server_key);
	free(tc->client_cert);
	free(tc->client_key);
	memset(tc, 0, sizeof(*tc));
}
