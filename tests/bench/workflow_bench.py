"""The workflow commands against what they are made of, on one trace, as ratios taken
in one run:

- `earlc.check` with five rules (four properties, one pattern) against the analysis
  of those four properties plus the search of the pattern, run directly;
- `earlc.annotate` of a pattern's matches into a copy of the archive against copying
  the archive's files plus searching the pattern.

    python3 tests/bench/workflow_bench.py TRACE [REPEATS] [SCRATCH]

Prints "key value" lines for tests/bench/run.py.  The trace is opened once (one
thread) and its EARL layer built before anything is timed; every measurement is the
best of REPEATS, the alternatives interleaved.  Copies go to SCRATCH (default: beside
the trace) and are removed.
"""
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import earlc  # noqa: E402
from earlc.checks import check  # noqa: E402
from earlc.markers import _archive_files, annotate  # noqa: E402

PROPERTIES = ["late_sender", "wait_at_nxn", "late_receiver", "messages_in_wrong_order"]
PATTERN = 'S := ["", "MPI_ISEND", ""];\nS $a;\nIsend := $a;\n'
RULES = """
[[rule]]
property = "late_sender"
max_percent = 5

[[rule]]
property = "wait_at_nxn"
max_seconds = 0.1

[[rule]]
property = "late_receiver"
max_occurrences = 0

[[rule]]
property = "messages_in_wrong_order"
max_percent = 1

[[rule]]
name = "no isend"
pattern_text = '''%s'''
max_matches = 0
""" % PATTERN
MATCHES = 1000


def best(fn, repeats):
    out = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def main() -> int:
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    scratch = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(path).resolve().parent.parent
    trace = earlc.open(path, threads=1)
    trace.states  # the EARL layer, shared by everything below
    result = check(trace, RULES)  # once, to see every rule ran
    assert len(result) == 5
    needed, checked = float("inf"), float("inf")
    for _ in range(repeats):
        needed = min(needed, best(lambda: (earlc.analyze(trace, properties=PROPERTIES),
                                           trace.search(PATTERN, limit=3)), 1))
        checked = min(checked, best(lambda: check(trace, RULES), 1))
    print("events %d" % len(trace))
    print("check_seconds %.4f" % checked)
    print("needed_seconds %.4f" % needed)

    anchor = trace.path
    copy_s, search_s, annotate_s = float("inf"), float("inf"), float("inf")
    target = scratch / "earlc-annotate-bench"
    for _ in range(repeats):
        shutil.rmtree(target, ignore_errors=True)
        t0 = time.perf_counter()
        os.makedirs(target)
        for f in _archive_files(anchor):
            dest = target / os.path.basename(f)
            shutil.copytree(f, dest) if os.path.isdir(f) else shutil.copy2(f, dest)
        copy_s = min(copy_s, time.perf_counter() - t0)
        shutil.rmtree(target)
        search_s = min(search_s, best(lambda: trace.search(PATTERN, limit=MATCHES), 1))
        t0 = time.perf_counter()
        written = annotate(trace, out=target, pattern=PATTERN, limit=MATCHES)
        annotate_s = min(annotate_s, time.perf_counter() - t0)
        shutil.rmtree(target)
    print("copy_seconds %.4f" % copy_s)
    print("search_seconds %.4f" % search_s)
    print("annotate_seconds %.4f" % annotate_s)
    print("markers %d" % written.written)
    print("archive_bytes %d" % sum(
        sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)
        if os.path.isdir(p) else os.path.getsize(p) for p in _archive_files(anchor)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
