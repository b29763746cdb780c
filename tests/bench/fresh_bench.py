"""The whole analysis as a user runs it: one fresh process per run, so that nothing
is warm but the page cache (memory that an earlier trace left to the process would
hide the kernel's page zeroing, a large part of a first analysis).

    python3 tests/bench/fresh_bench.py TRACE [REPEATS]

Per repetition, two child processes: the default catalog, and the catalog with the
root causes (properties="all").  Each child opens the trace with one reading thread,
builds the EARL layer, analyses, and prints its phases' times and its peak resident
memory above the interpreter's (numpy and earlc imported).  Then the command users
type, `python -c "import earlc; earlc.analyze(earlc.open(T))"` (all cores, import
included), is timed as a whole, with and without root causes.  Prints "key value"
lines for tests/bench/run.py, the best of the repetitions for each key.
"""
import subprocess
import sys
import time
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[2] / "python"

CHILD = r"""
import resource, sys, time
sys.path.insert(0, %(python)r)
import earlc
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
base = resident()
t0 = time.perf_counter()
trace = earlc.open(%(trace)r, threads=1)
t1 = time.perf_counter()
trace.states
t2 = time.perf_counter()
earlc.analyze(trace, properties=%(properties)r)
t3 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(len(trace), t1 - t0, t2 - t1, t3 - t2, peak - base)
"""

WHOLE = "import earlc; earlc.analyze(earlc.open(%r), properties=%r)"


def child(trace: str, properties) -> list:
    code = CHILD % {"python": str(PYTHON), "trace": trace, "properties": properties}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    return [int(out[0])] + [float(x) for x in out[1:]]


def whole(trace: str, properties) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", WHOLE % (trace, properties)], check=True,
                   capture_output=True, cwd=str(PYTHON))
    return time.perf_counter() - t0


def main() -> int:
    trace = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    best = {}

    def keep(key, value):
        best[key] = min(best.get(key, float("inf")), value)

    for _ in range(repeats):
        for label, properties in (("catalog", None), ("rootcause", "all")):
            n, opened, states, analysed, peak = child(trace, properties)
            best["events"] = n
            keep("open_seconds", opened)
            keep("states_seconds", states)
            keep(label + "_seconds", analysed)
            keep(label + "_peak_bytes", peak)
            keep(label + "_whole_seconds", whole(trace, properties))
    for key, value in best.items():
        print(key, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
