#!/usr/bin/env python3
"""tests/bench/report.py: the table of `make bench` in docs/benchmarks.md.

Reads the outputs `make bench` keeps (build/bench/NAME.out, each a
benchmark script's stdout), collects their RESULT lines (format in
tests/bench/result.h: RESULT, bench, figure, value, unit, baseline, ratio,
target, verdict, tab-separated), and rewrites the block between
<!-- bench:begin --> and <!-- bench:end --> of the document (default
docs/benchmarks.md, relative to the current directory) with a Markdown
table, preceded by a line giving the date, the machine (CPUs, model) and
the load average at the start and the end of the run.  Nothing else of the
document changes.  Without both markers (begin before end), the document
is left alone: the table is printed and the script says so.  NAME.rc beside
NAME.out, if present, holds the script's exit status; a non-zero one is
named in the block.

Usage: report.py [--doc PATH] [--quick] [--load-start "L1 L5 L15"]
                 [--load-end ...] [--date TEXT] [--machine TEXT] OUT...
--quick (or BENCH_QUICK=1) marks the table as a quick run.  --load-end,
--date and --machine default to /proc/loadavg now, the UTC time and
/proc/cpuinfo (tests fix them).  Exit status: 0 on success (also without
markers), 1 when no RESULT line was found (document untouched) or on I/O
errors, 2 on usage.
"""

import argparse
import datetime
import os
import sys
import tempfile

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
NFIELDS = 9  # RESULT and eight fields


def parse_results(path):
    """The RESULT lines of one output file, as lists of 8 fields."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("RESULT\t"):
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != NFIELDS:
                print(f"report: {path}:{n}: malformed RESULT line, "
                      "skipped", file=sys.stderr)
                continue
            rows.append(fields[1:])
    return rows


def exit_status(out_path):
    """The exit status in NAME.rc beside NAME.out, None if absent."""
    rc_path = os.path.splitext(out_path)[0] + ".rc"
    try:
        with open(rc_path, encoding="utf-8") as f:
            return int(f.read().strip() or "0")
    except (OSError, ValueError):
        return None


def number(text, ratio=False):
    """A figure formatted for the table; non-numbers are kept."""
    try:
        v = float(text)
    except ValueError:
        return text
    if v != v or v in (float("inf"), float("-inf")):
        return "-"
    a = abs(v)
    if ratio:
        return f"{v:.1f}" if a >= 10 else f"{v:.3f}"
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if v == int(v):
        return f"{v:.0f}"
    return f"{v:.3g}"


def with_unit(value, unit):
    if value == "-" or unit in ("", "-"):
        return value
    return value + unit if unit.startswith("/") else f"{value} {unit}"


def cell(text):
    return text.replace("|", "\\|")


def table_row(r):
    bench, figure, value, unit, base, ratio, target, verdict = r
    cells = [bench, figure, with_unit(number(value), unit),
             with_unit(number(base), unit), number(ratio, ratio=True),
             target, verdict]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        ncpu = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        ncpu = os.cpu_count() or 0
    return f"{ncpu} CPUs ({model})"


def loadavg():
    try:
        with open("/proc/loadavg", encoding="utf-8") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def block(rows, failed, args):
    """The text between the markers, without the markers."""
    kind = "quick run (`BENCH_QUICK=1`, small counts)" if args.quick \
        else "full run"
    lines = [
        f"Latest `make bench`, {kind}: {args.date}, {args.machine}, "
        f"load average {args.load_start} at the start, "
        f"{args.load_end} at the end.",
        "",
        "| benchmark | figure | value | baseline (same run) | ratio "
        "| target | result |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [table_row(r) for r in rows]
    if failed:
        lines += ["", "Errors: " + ", ".join(
            f"{name} exited with status {rc}" for name, rc in failed)
            + " (its figures may be missing)."]
    return "\n".join(lines)


def replace_block(text, new):
    """text with the block between the markers replaced; None without
    both markers in order."""
    b = text.find(BEGIN)
    if b < 0:
        return None
    e = text.find(END, b + len(BEGIN))
    if e < 0:
        return None
    return text[:b + len(BEGIN)] + "\n" + new + "\n" + text[e:]


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".bench-doc.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def options(argv):
    p = argparse.ArgumentParser(prog="report.py",
                                description="the table of make bench")
    p.add_argument("--doc", default="docs/benchmarks.md")
    p.add_argument("--quick", action="store_true",
                   default=os.environ.get("BENCH_QUICK", "0") == "1")
    p.add_argument("--load-start", default="unknown")
    p.add_argument("--load-end", default=None)
    p.add_argument("--date", default=None)
    p.add_argument("--machine", default=None)
    p.add_argument("outputs", nargs="+", metavar="OUT")
    args = p.parse_args(argv)
    if args.load_end is None:
        args.load_end = loadavg()
    if args.date is None:
        now = datetime.datetime.now(datetime.timezone.utc)
        args.date = now.strftime("%Y-%m-%d %H:%M UTC")
    if args.machine is None:
        args.machine = machine()
    return args


def main(argv):
    args = options(argv)
    rows, failed = [], []
    try:
        for path in args.outputs:
            rows += parse_results(path)
            rc = exit_status(path)
            if rc:
                name = os.path.splitext(os.path.basename(path))[0]
                failed.append((name, rc))
        if not rows:
            print("report: no RESULT lines in " + " ".join(args.outputs)
                  + f"; {args.doc} not changed", file=sys.stderr)
            return 1
        new = block(rows, failed, args)
        print(new, flush=True)
        with open(args.doc, encoding="utf-8", newline="") as f:
            text = f.read()
        out = replace_block(text, new)
        if out is None:
            print(f"report: {args.doc} has no {BEGIN} ... {END} "
                  "block; the table above was not written", file=sys.stderr)
            return 0
        if out != text:
            write_atomic(args.doc, out)
        print(f"report: {len(rows)} figures written to {args.doc}",
              file=sys.stderr)
    except OSError as e:
        print(f"report: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
