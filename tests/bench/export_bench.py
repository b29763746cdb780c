"""Exports, pictures and profiles against opening the same trace (targets: the
Perfetto export of a 1% window, wait states included, takes less than the open;
a timeline PNG of about 100,000 events takes less than 2 s; the profiles are
printed as ratios to the open).

    python3 tests/bench/export_bench.py TRACE SMALL_TRACE [REPEATS]

TRACE is the large bench trace; SMALL_TRACE one of about 100,000 events for the
timeline picture.  Prints "key value" lines for tests/bench/run.py; the best of
the repetitions is kept for each phase.  Each export starts from a freshly opened
trace (opened with one thread, the open the targets compare with), so the EARL
layer it needs (message matching, enter/leave pointers) is counted in the
export; the wait states come from the window's own analysis, and once, for
comparison, from the whole analysis.
"""
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import earlc  # noqa: E402


PROFILES = ("flat_profile", "time_profile", "call_tree", "load_imbalance", "idle_time",
            "comm_matrix", "message_histogram")


def profiles(path, repeats):
    """Seconds of each pipit-style profile on a trace opened with one thread (best
    of the repetitions), after the EARL layer and the call tree they share were
    built once ("shared")."""
    trace = earlc.open(path, threads=1)
    t0 = time.perf_counter()
    trace.states.leaveptr
    from earlc.profiles import _calltree

    _calltree(trace)
    out = {"shared": time.perf_counter() - t0}
    for name in PROFILES:
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            getattr(trace, name)()
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    del trace
    gc.collect()
    return out


def main() -> int:
    path, small = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    out = tempfile.mkdtemp(prefix="earlc-export-bench-")
    best = {"open": float("inf"), "perfetto": float("inf"), "perfetto_waits": float("inf")}
    written = written_waits = {}
    window = os.path.join(out, "w.json")
    for k in range(repeats):
        # each export from a freshly opened trace (one thread, as the target's open)
        for key in ("perfetto", "perfetto_waits"):
            t0 = time.perf_counter()
            trace = earlc.open(path, threads=1)
            t1 = time.perf_counter()
            d = trace.duration
            got = trace.to_perfetto(window, start=0.5 * d, end=0.51 * d,
                                    wait_states=key == "perfetto_waits")
            t2 = time.perf_counter()
            best["open"] = min(best["open"], t1 - t0)
            best[key] = min(best[key], t2 - t1)
            if key == "perfetto":
                written = got
            else:
                written_waits = got
            n = len(trace)
            del trace
            gc.collect()
    # the wait states from the whole analysis instead (as before the window's own
    # analysis): once is enough to see it
    trace = earlc.open(path, threads=1)
    t0 = time.perf_counter()
    whole = trace.to_perfetto(window, start=0.5 * d, end=0.51 * d, report=earlc.analyze(trace))
    best["perfetto_whole_analysis"] = time.perf_counter() - t0
    assert whole == written_waits, (whole, written_waits)
    del trace
    gc.collect()
    size = os.path.getsize(os.path.join(out, "w.json"))
    profile_seconds = profiles(path, repeats)

    from earlc.plot import plot_timeline

    small_trace = earlc.open(small)
    report = earlc.analyze(small_trace)
    first = steady = float("inf")
    for k in range(repeats):
        t0 = time.perf_counter()
        plot_timeline(small_trace, os.path.join(out, "t.png"), report=report)
        dt = time.perf_counter() - t0
        if k == 0:
            first = dt  # includes importing matplotlib
        steady = min(steady, dt)
    t0 = time.perf_counter()
    small2 = earlc.open(small)
    plot_timeline(small2, os.path.join(out, "t.png"))  # its wait states included
    whole = time.perf_counter() - t0
    for name in ("w.json", "t.png"):
        os.unlink(os.path.join(out, name))
    os.rmdir(out)
    print("events %d" % n)
    print("open_seconds %.4f" % best["open"])
    print("perfetto_seconds %.4f" % best["perfetto"])
    print("perfetto_waits_seconds %.4f" % best["perfetto_waits"])
    print("perfetto_whole_analysis_seconds %.4f" % best["perfetto_whole_analysis"])
    print("perfetto_slices %d" % written["slices"])
    print("perfetto_flows %d" % written["flows"])
    print("perfetto_wait_states %d" % written_waits["wait_states"])
    print("perfetto_bytes %d" % size)
    for name, seconds in profile_seconds.items():
        print("profile_%s_seconds %.4f" % (name, seconds))
    print("small_events %d" % len(small_trace))
    print("timeline_first_seconds %.4f" % first)
    print("timeline_seconds %.4f" % steady)
    print("timeline_open_analysis_plot_seconds %.4f" % whole)
    return 0


if __name__ == "__main__":
    sys.exit(main())
