# shtest.sh: the cmocka-style output of a shell test for tests/run-tests.sh
# (source it): ok NAME, fail NAME WHY, check NAME CMD... (ok when CMD
# succeeds, else fail with its first 3000 bytes of output), and the
# summary printed at exit (status 1 when a check failed).  $dir is a
# temporary directory, removed at exit.
dir=$(mktemp -d /tmp/shtest.XXXXXX)
npass=0
nfail=0
results=()

ok() {
	results+=("[       OK ] $1")
	npass=$((npass + 1))
}
fail() {
	results+=("[  FAILED  ] $1")
	nfail=$((nfail + 1))
	echo "FAILED $1: $2" >&2
}
check() { # NAME CMD...
	local name=$1
	shift
	if "$@" >"$dir/check.out" 2>&1; then
		ok "$name"
	else
		fail "$name" "$(head -c 3000 "$dir/check.out")"
	fi
}
summary() {
	echo "[==========] Running $((npass + nfail)) test(s)."
	printf '%s\n' "${results[@]}"
	echo "[==========] $((npass + nfail)) test(s) run."
	echo "[  PASSED  ] $npass test(s)."
	[ "$nfail" -eq 0 ] || echo "[  FAILED  ] $nfail test(s)."
	rm -rf "$dir"
}
trap 'summary; [ "$nfail" -eq 0 ] || exit 1' EXIT
trap 'exit 1' INT TERM
