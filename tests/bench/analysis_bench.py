"""The whole catalog on one trace, as a ratio to opening it (issue 5's target: at
most 1.5x the open time, single-threaded), events per second and peak memory;
and the whole analysis with the root causes of wait states included
(properties=["all"]: target at most 2x the open time).

    python3 tests/bench/analysis_bench.py TRACE [REPEATS]

Prints "key value" lines for tests/bench/run.py.  Each repetition opens the trace
with one reading thread, then builds the EARL layer, evaluates the catalog, and
evaluates every property (catalog and root causes) in a second analysis of the
same trace; the best of the repetitions is kept for each phase.
"""
import gc
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import earlc  # noqa: E402


def main() -> int:
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    best_open = best_states = best_catalog = best_all = float("inf")
    n = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        trace = earlc.open(path, threads=1)
        t1 = time.perf_counter()
        trace.states  # the EARL layer
        t2 = time.perf_counter()
        report = earlc.analyze(trace)
        t3 = time.perf_counter()
        del report
        report = earlc.analyze(trace, properties=["all"])  # root causes included
        t4 = time.perf_counter()
        n = len(trace)
        best_open = min(best_open, t1 - t0)
        best_states = min(best_states, t2 - t1)
        best_catalog = min(best_catalog, t3 - t2)
        best_all = min(best_all, t4 - t3)
        del report, trace
        gc.collect()  # release the previous trace before the next open
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print("events %d" % n)
    print("open_seconds %.4f" % best_open)
    print("states_seconds %.4f" % best_states)
    print("catalog_seconds %.4f" % best_catalog)
    print("all_seconds %.4f" % best_all)
    print("peak_rss_bytes %d" % peak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
