#!/usr/bin/env bash
# bench_report.sh: tests/bench/report.py, the table of `make bench` in
# docs/benchmarks.md, over fixture outputs of RESULT lines (written here)
# and copies of a document: the block between <!-- bench:begin --> and <!-- bench:end --> is
# replaced exactly and every other byte is kept; without both markers the
# document is untouched, the table is printed and the script says so; no
# RESULT line leaves the document alone and fails; a quick run and a
# failed benchmark are marked; without --doc the script writes
# docs/benchmarks.md, and the repository's docs/benchmarks.md has the
# markers.  Output is cmocka-style for tests/run-tests.sh.
set -u

REPORT=${REPORT:-$PWD/tests/bench/report.py}
# ok, fail, check, the summary at exit and $dir (a temporary directory)
. "$(dirname "$0")/../lib/shtest.sh"

T=$(printf '\t')

# Two benchmark outputs: human lines, RESULT lines, one malformed line.
fixtures() {
	mkdir -p "$dir/out"
	rm -f "$dir/out"/*
	cat >"$dir/out/alpha.out" <<-EOF
	== alpha benchmark (full), load average: 1.00 2.00 3.00
	name       figure unit  baseline ratio target result
	create      26737 req/s   113542 0.235   5000 PASS
	RESULT${T}alpha${T}create${T}26737.400${T}req/s${T}113542.000${T}0.2354${T}>= 5,000 req/s${T}PASS
	RESULT${T}alpha${T}latency | p99${T}0.424${T}ms${T}0.805${T}-${T}< 1 ms${T}PASS
	RESULT${T}alpha${T}too few fields${T}1
	RESULT${T}alpha${T}no-op reconciles${T}13060.000${T}/s${T}186811.000${T}0.0699${T}>= 20,000/s${T}MISS
	EOF
	cat >"$dir/out/beta.out" <<-EOF
	RESULT${T}beta${T}supervisor PSS${T}170.400${T}MiB${T}64.900${T}2.6254${T}< 1.5 raw + 8 MiB${T}MISS
	RESULT${T}beta${T}no-op writes${T}0.000${T}writes${T}-${T}-${T}0${T}PASS
	RESULT${T}beta${T}watch-events${T}148392.000${T}ev/s${T}14839.000${T}10.0001${T}-${T}-
	RESULT${T}beta${T}isolation${T}-${T}packs/s${T}-${T}-${T}ratio >= 0.9${T}SKIP
	== load average after: 4.00 5.00 6.00
	EOF
}

# The expected block (between the markers) for the fixtures; $1 the run.
expected_block() {
	cat <<-EOF
	Latest \`make bench\`, $1: 2026-01-02 03:04 UTC, 2 CPUs (Test CPU @ 1 GHz), load average 1.00 2.00 3.00 at the start, 4.00 5.00 6.00 at the end.

	| benchmark | figure | value | baseline (same run) | ratio | target | result |
	|---|---|---|---|---|---|---|
	| alpha | create | 26,737 req/s | 113,542 req/s | 0.235 | >= 5,000 req/s | PASS |
	| alpha | latency \\| p99 | 0.424 ms | 0.805 ms | - | < 1 ms | PASS |
	| alpha | no-op reconciles | 13,060/s | 186,811/s | 0.070 | >= 20,000/s | MISS |
	| beta | supervisor PSS | 170 MiB | 64.9 MiB | 2.625 | < 1.5 raw + 8 MiB | MISS |
	| beta | no-op writes | 0 writes | - | - | 0 | PASS |
	| beta | watch-events | 148,392 ev/s | 14,839 ev/s | 10.0 | - | - |
	| beta | isolation | - | - | - | ratio >= 0.9 | SKIP |
	EOF
}

# A README around the markers: text before, an old block, text after
# (with a second pair of marker-like lines and no final newline).
readme_head() {
	printf '# Title\n\nSome text | with a pipe, ünïcode, and\ttabs.\n\n'
}
readme_tail() {
	printf '\nAfter the block.\n\n## Next\n\n<!-- bench:end -->\nlast line'
}
make_readme() {
	{
		readme_head
		printf '<!-- bench:begin -->\nold table\n| a | b |\n'
		printf '<!-- bench:end -->'
		readme_tail
	} >"$dir/README.md"
}

report() { # extra options...
	python3 "$REPORT" --doc "$dir/README.md" --date "2026-01-02 03:04 UTC" \
		--machine "2 CPUs (Test CPU @ 1 GHz)" --load-start "1.00 2.00 3.00" \
		--load-end "4.00 5.00 6.00" "$@" "$dir/out/alpha.out" \
		"$dir/out/beta.out" >"$dir/stdout" 2>"$dir/stderr"
}

expect_readme() { # RUN-TEXT [errors line]
	{
		readme_head
		printf '<!-- bench:begin -->\n'
		expected_block "$1"
		[ -z "${2:-}" ] || printf '\n%s\n' "$2"
		printf '<!-- bench:end -->'
		readme_tail
	} >"$dir/expected.md"
	cmp "$dir/expected.md" "$dir/README.md" ||
		diff "$dir/expected.md" "$dir/README.md"
}

t_replace() {
	fixtures && make_readme && BENCH_QUICK=0 report || return 1
	expect_readme "full run" || return 1
	grep -q "7 figures written" "$dir/stderr" &&
		grep -q "malformed RESULT line" "$dir/stderr" &&
		grep -q '^| beta | isolation |' "$dir/stdout"
}

t_idempotent() {
	fixtures && make_readme && BENCH_QUICK=0 report && BENCH_QUICK=0 report ||
		return 1
	expect_readme "full run"
}

t_replace_twice_changes_block_only() {
	fixtures && make_readme && BENCH_QUICK=0 report || return 1
	sed -i "s/26737.400/30000.000/" "$dir/out/alpha.out"
	BENCH_QUICK=0 report || return 1
	grep -q '^| alpha | create | 30,000 req/s |' "$dir/README.md" &&
		[ "$(grep -c '^| alpha | create |' "$dir/README.md")" -eq 1 ] &&
		[ "$(grep -c 'bench:begin' "$dir/README.md")" -eq 1 ]
}

t_quick() {
	fixtures && make_readme && BENCH_QUICK=1 report || return 1
	expect_readme 'quick run (`BENCH_QUICK=1`, small counts)' || return 1
	make_readme && BENCH_QUICK=0 report --quick &&
		expect_readme 'quick run (`BENCH_QUICK=1`, small counts)'
}

t_failed_benchmark() {
	fixtures && make_readme && echo 1 >"$dir/out/beta.rc" &&
		echo 0 >"$dir/out/alpha.rc" && BENCH_QUICK=0 report || return 1
	expect_readme "full run" \
		"Errors: beta exited with status 1 (its figures may be missing)."
}

t_no_markers() {
	local rc
	fixtures || return 1
	{ readme_head; readme_tail; } >"$dir/README.md"
	cp "$dir/README.md" "$dir/orig.md"
	BENCH_QUICK=0 report
	rc=$?
	[ $rc -eq 0 ] && cmp "$dir/orig.md" "$dir/README.md" &&
		expected_block "full run" | cmp - "$dir/stdout" &&
		grep -q 'has no <!-- bench:begin --> ... <!-- bench:end --> block' \
			"$dir/stderr"
}

t_end_before_begin() {
	local rc
	fixtures || return 1
	printf 'a\n<!-- bench:end -->\nb\n<!-- bench:begin -->\nc\n' \
		>"$dir/README.md"
	cp "$dir/README.md" "$dir/orig.md"
	BENCH_QUICK=0 report
	rc=$?
	[ $rc -eq 0 ] && cmp "$dir/orig.md" "$dir/README.md" &&
		grep -q 'has no' "$dir/stderr"
}

t_no_results() {
	local rc
	fixtures && make_readme || return 1
	grep -v '^RESULT' "$dir/out/alpha.out" >"$dir/a" &&
		mv "$dir/a" "$dir/out/alpha.out" && : >"$dir/out/beta.out"
	cp "$dir/README.md" "$dir/orig.md"
	BENCH_QUICK=0 report
	rc=$?
	[ $rc -eq 1 ] && cmp "$dir/orig.md" "$dir/README.md" &&
		grep -q 'no RESULT lines' "$dir/stderr"
}

t_missing_readme() {
	local rc
	fixtures && rm -f "$dir/README.md" || return 1
	BENCH_QUICK=0 report
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$dir/README.md" ] &&
		expected_block "full run" | cmp - "$dir/stdout"
}

t_mode_kept() {
	fixtures && make_readme && chmod 640 "$dir/README.md" || return 1
	BENCH_QUICK=0 report || return 1
	[ "$(stat -c %a "$dir/README.md")" = 640 ] &&
		[ -z "$(find "$dir" -maxdepth 1 -name '.bench-doc.*')" ]
}

# Without --doc: docs/benchmarks.md of the current directory.
t_default_doc() {
	fixtures && mkdir -p "$dir/repo/docs" && make_readme &&
		mv "$dir/README.md" "$dir/repo/docs/benchmarks.md" || return 1
	(cd "$dir/repo" && BENCH_QUICK=0 python3 "$REPORT" \
		--date "2026-01-02 03:04 UTC" \
		--machine "2 CPUs (Test CPU @ 1 GHz)" --load-start "1.00 2.00 3.00" \
		--load-end "4.00 5.00 6.00" "$dir/out/alpha.out" \
		"$dir/out/beta.out" >"$dir/stdout" 2>"$dir/stderr") || return 1
	mv "$dir/repo/docs/benchmarks.md" "$dir/README.md" &&
		expect_readme "full run" &&
		grep -q "written to docs/benchmarks.md" "$dir/stderr"
}

# The repository's document carries the markers, begin before end, once.
t_repo_doc_markers() {
	local doc=${REPORT%/tests/bench/report.py}/docs/benchmarks.md b e
	b=$(grep -n '^<!-- bench:begin -->$' "$doc" | cut -d: -f1)
	e=$(grep -n '^<!-- bench:end -->$' "$doc" | cut -d: -f1)
	[ -n "$b" ] && [ -n "$e" ] && [ "$(echo "$b" | wc -l)" -eq 1 ] &&
		[ "$(echo "$e" | wc -l)" -eq 1 ] && [ "$b" -lt "$e" ]
}

check replace_block_exactly t_replace
check idempotent t_idempotent
check second_run_replaces_the_block t_replace_twice_changes_block_only
check quick_run_marked t_quick
check failed_benchmark_named t_failed_benchmark
check no_markers_untouched t_no_markers
check end_before_begin_untouched t_end_before_begin
check no_results_untouched t_no_results
check missing_readme_prints_table t_missing_readme
check file_mode_kept t_mode_kept
check default_doc_is_docs_benchmarks t_default_doc
check repository_doc_has_markers t_repo_doc_markers
