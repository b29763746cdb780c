"""The whole analysis on every core against the bare libotf2 read of the same trace,
each in fresh processes of the same run.

    python3 tests/bench/cores_bench.py TRACE [REPEATS]

Per repetition, one after the other: the bare read (`open_bench --bare`: every event
through libotf2's reader with empty callbacks, one thread, in a process of its own),
then fresh Python processes that import earlc (timed apart) and run
`earlc.analyze(earlc.open(T), properties=P, threads=N)`: the default catalog and
properties="all" (with the root causes), on all cores (N=0) and on one thread (N=1).
A run's time goes from the start of the open to the end of the analysis; its memory is
the peak resident set above the one after the import.  The children run with the
modules' bytecode written and reused (as an installed package has it), after one run on
a small trace that writes it.  EARLC_BENCH_PYTHON names the
folder of the earlc package to measure (default: this tree's), for comparing two trees
on one machine.  Prints "key value" lines for
tests/bench/run.py, the best of the repetitions for each key:

    events, bare_seconds, import_seconds,
    {catalog,rootcause}_{all,one}_seconds   open + analysis
    {catalog,rootcause}_{all,one}_open_seconds
    {catalog,rootcause}_{all,one}_peak_bytes
"""
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", ROOT / "build"))

CHILD = r"""
import resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, %(python)r)
import earlc
t1 = time.perf_counter()
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
base = resident()
t2 = time.perf_counter()
trace = earlc.open(%(trace)r, threads=%(threads)d)
t3 = time.perf_counter()
import inspect
threads = {"threads": %(threads)d} if "threads" in inspect.signature(earlc.analyze).parameters \
    else {}  # a tree from before the analysis had threads
earlc.analyze(trace, properties=%(properties)r, **threads)
t4 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(len(trace), t1 - t0, t3 - t2, t4 - t2, peak - base)
"""


def bare(trace: str) -> float:
    out = subprocess.run([str(BUILD / "bench" / "open_bench"), "--bare", trace, "1"],
                         check=True, capture_output=True, text=True).stdout
    return float(dict(line.split() for line in out.splitlines())["bare_seconds"])


def child(trace: str, properties, threads: int) -> list:
    python = os.environ.get("EARLC_BENCH_PYTHON", str(ROOT / "python"))
    code = CHILD % {"python": python, "trace": trace, "properties": properties,
                    "threads": threads}
    # with the modules' bytecode, as an installed package has it: without, every module
    # the analysis imports on first use is compiled again in each fresh process
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.split()
    return [int(out[0])] + [float(x) for x in out[1:]]


def main() -> int:
    trace = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    best = {}

    def keep(key, value):
        best[key] = min(best.get(key, float("inf")), value)

    # once before measuring, so that the bytecode of every module the analysis uses exists
    child(str(ROOT / "traces" / "ring-late-sender" / "traces.otf2"), "all", 1)
    for _ in range(repeats):
        keep("bare_seconds", bare(trace))
        for label, properties in (("catalog", None), ("rootcause", "all")):
            for cores, threads in (("all", 0), ("one", 1)):
                n, imported, opened, whole, peak = child(trace, properties, threads)
                best["events"] = n
                keep("import_seconds", imported)
                key = "%s_%s" % (label, cores)
                keep(key + "_seconds", whole)
                keep(key + "_open_seconds", opened)
                keep(key + "_peak_bytes", peak)
        time.sleep(0.5)
    for key, value in best.items():
        print(key, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
