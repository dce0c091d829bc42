/*
 * crd_digest.c: bin/tests/crd-digest DIR: prints the CRD digest
 * (tests/lib/crddigest.h) of the YAML files in DIR.  `make crd-digest` runs it
 * on the upstream reference tree and writes
 * tests/unit/data/upstream-crds.digest. Exit status: 0, 1 on an error (said on
 * stderr), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/xmalloc.h"
#include "tests/lib/crddigest.h"

int
main(int argc, char **argv)
{
	char err[512] = "", *pat, *d;

	if (argc != 2) {
		fprintf(stderr, "usage: crd-digest DIR\n");
		return (2);
	}
	pat = xasprintf("%s/*.yaml", argv[1]);
	d = crddigest_files(pat, err, sizeof(err));
	free(pat);
	if (d == NULL) {
		fprintf(stderr, "crd-digest: %s\n", err);
		return (1);
	}
	fputs(d, stdout);
	free(d);
	return (fflush(stdout) == 0 ? 0 : 1);
}
