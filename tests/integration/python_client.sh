#!/usr/bin/env bash
# python_client.sh: Debian's python3-kubernetes (a client we did not write)
# against bin/kubesim over TLS with a bearer token.  The checks live in
# python_client.py; this wrapper picks Debian's interpreter (the package
# installs into /usr/lib/python3/dist-packages, which another python3
# first on PATH would not see) and bounds the run.  `make deps` installs
# python3-kubernetes; when it is missing the test fails (never skips).
set -u
cd "$(dirname "$0")/../.." || exit 1
PYTHON=${PYTHON:-/usr/bin/python3}
export KUBESIM=${KUBESIM:-$PWD/bin/kubesim}
if [ ! -x "$PYTHON" ]; then
	echo "[==========] Running 1 test(s)."
	echo "[  FAILED  ] python_interpreter"
	echo "$PYTHON not found: install python3-kubernetes (make deps)" >&2
	exit 1
fi
exec timeout -k 10 240 "$PYTHON" tests/integration/python_client.py
