/*
 * kcert.h: throw-away X.509 material for kubesim's --tls mode and for TLS
 * tests, generated at run time with libcrypto: a CA, a server certificate
 * for 127.0.0.1 / localhost signed by it, and a client certificate signed
 * by it.  Keys are EC P-256.  Everything is PEM text; nothing touches the
 * disk.  Checking a certificate against a CA is test code
 * (tests/lib/testcert.h).
 */
#ifndef KCERT_H
#define KCERT_H

struct kcert {
	char *ca_cert;     /* CA certificate (PEM) */
	char *ca_key;      /* CA private key (PEM, PKCS#8) */
	char *server_cert; /* CN=localhost, SAN IP:127.0.0.1, DNS:localhost */
	char *server_key;
	char *client_cert; /* CN=client_cn, O=client_org, clientAuth */
	char *client_key;
};

/* Fills tc with fresh material; client_cn / client_org name the client
 * (client_org may be NULL).  Returns 0, or -1 (tc left empty).  The caller
 * frees with kcert_free(). */
int kcert_generate(
        struct kcert *tc, const char *client_cn, const char *client_org);
void kcert_free(struct kcert *tc);

#endif
