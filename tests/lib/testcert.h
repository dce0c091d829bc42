/*
 * testcert.h: checks of X.509 material for TLS tests (the material itself
 * comes from kubesim/kcert.h): a certificate's subject CN, and whether a
 * peer's certificate was signed by a given CA.
 */
#ifndef TESTCERT_H
#define TESTCERT_H

/* Subject CN of a PEM certificate, or NULL.  Caller frees with free(). */
char *testcert_subject_cn(const char *cert_pem);
/* When the DER certificate der/len was signed by the PEM CA ca_pem and is
 * within its validity period, its subject CN (caller frees with free()),
 * else NULL. */
char *testcert_verify_der(
        const unsigned char *der, long len, const char *ca_pem);

#endif
