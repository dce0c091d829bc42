/*
 * result.h: the machine-readable result line every benchmark driver
 * (tests/bench/bench_*.c) prints on stdout, one per figure that matters,
 * besides its human table.  tests/bench/report.py collects them from the
 * output `make bench` keeps in build/bench/NAME.out and writes the table in
 * docs/benchmarks.md.  One line, fields separated by tabs:
 *
 *   RESULT bench figure value unit baseline ratio target verdict
 *
 * value, baseline and ratio are plain decimals, or "-" when there is none
 * (NAN); unit and target are free text without tabs ("-" when empty);
 * verdict is PASS, MISS, "-" (no target) or SKIP (the phase could not
 * run: value "-").  Header-only (static), since each driver is one file.
 */
#ifndef BENCH_RESULT_H
#define BENCH_RESULT_H

#include <math.h>
#include <stdio.h>

enum bench_verdict {
	BV_NONE = -1, /* no target */
	BV_MISS = 0,
	BV_PASS = 1,
	BV_SKIP = 2, /* the phase did not run */
};

static inline void
bench_num(double v, int decimals)
{
	if (isnan(v)) {
		fputs("\t-", stdout);
	} else {
		printf("\t%.*f", decimals, v);
	}
}

static inline const char *
bench_text(const char *s)
{
	return (s != NULL && s[0] != '\0' ? s : "-");
}

/* Prints one RESULT line; bench, figure, unit and target are borrowed.
 * baseline or ratio NAN: none.  verdict a bool (0/1) or BV_*. */
static inline void
bench_result(const char *bench, const char *figure, double value,
        const char *unit, double baseline, double ratio, const char *target,
        int verdict)
{
	static const char *const vname[] = { "-", "MISS", "PASS", "SKIP" };

	if (verdict < BV_NONE || verdict > BV_SKIP) {
		verdict = BV_NONE;
	}
	printf("RESULT\t%s\t%s", bench, figure);
	bench_num(value, 3);
	printf("\t%s", bench_text(unit));
	bench_num(baseline, 3);
	bench_num(ratio, 4);
	printf("\t%s\t%s\n", bench_text(target), vname[verdict + 1]);
}

/* The ratio value / baseline, NAN when the baseline is not positive. */
static inline double
bench_ratio(double value, double baseline)
{
	return (baseline > 0 ? value / baseline : NAN);
}

#endif
