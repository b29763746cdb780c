"""The analysis in parts on P MPI processes (docs/parallel.md): wall time and the
peak resident memory of the largest process, against one process.

    python3 tests/bench/parts_bench.py TRACE PROPERTIES P [P ...]

For each P, `mpiexec -n P` runs `earlc.analyze(TRACE)` as a script under mpiexec
does (P = 1: the single-process analysis).  Every process reports its peak
resident memory above the interpreter's (numpy and earlc imported), its events
(own and ghosts) and the ghost bytes it received; rank 0 the wall time from
before the open to the merged report.  Prints "key value" lines for
tests/bench/run.py: for each P, the largest process's peak, the wall time, the
events and ghosts of the largest part, the ghost bytes exchanged in all, and
what the root causes exchanged (with properties all): the long-term replay's
rounds and the bytes all processes sent.
"""
import os
import subprocess
import sys
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[2] / "python"

CHILD = r"""
import resource, sys, time
sys.path.insert(0, %(python)r)
import earlc
from earlc.parts import collectives_for, mpi_exchange
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
ex = mpi_exchange()
base = resident()
t0 = time.perf_counter()
if ex.size > 1:  # with the collectives earlc.analyze(TRACE) would take
    trace = earlc.open(%(trace)r, parts="mpi",
                       collectives=collectives_for(%(properties)r))
    own = int(trace.part.own[trace.events.location].sum()) if len(trace) else 0
    ghosts = trace.part.ghosts_received
else:
    trace = earlc.open(%(trace)r)
    own, ghosts = len(trace), 0
report = earlc.analyze(trace, properties=%(properties)r)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
rc = trace.part.stats.get("rootcause", {}) if trace.part is not None else {}
every = ex.allgather((peak, own, ghosts, rc.get("replay_rounds", 0), rc.get("bytes_sent", 0)))
if ex.rank == 0:
    print("wall", wall)
    print("events", report.summary["events"])
    print("peak", max(e[0] for e in every))
    largest = max(range(len(every)), key=lambda r: every[r][1])
    print("largest_own", every[largest][1])
    print("largest_ghosts", every[largest][2])
    print("ghosts", sum(e[2] for e in every))
    print("rc_rounds", max(e[3] for e in every))
    print("rc_bytes", sum(e[4] for e in every))
"""


def run(trace: str, properties, processes: int) -> dict:
    code = CHILD % {"python": str(PYTHON), "trace": trace, "properties": properties}
    out = subprocess.run(["mpiexec", "-n", str(processes), sys.executable, "-c", code],
                         check=True, capture_output=True, text=True,
                         env=dict(os.environ, OPENBLAS_NUM_THREADS="1")).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def main() -> int:
    trace, properties = sys.argv[1], sys.argv[2]
    properties = None if properties == "default" else properties
    for p in [int(x) for x in sys.argv[3:]]:
        m = run(trace, properties, p)
        for key, value in m.items():
            print("p%d_%s %s" % (p, key, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
