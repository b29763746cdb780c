"""Where the memory of the analysis in parts goes (docs/parallel.md, "Memory"):
per phase, the resident memory of each MPI process, and what a part holds.

    python3 tests/bench/parts_profile.py TRACE PROPERTIES P

`mpiexec -n P` runs `earlc.analyze(TRACE)` as a script under mpiexec does (with
the collectives earlc.analyze would open the parts with; PROPERTIES: default,
all or a list), while a thread of each process samples its resident memory
every 5 ms.  The phases are the open, each property of the catalog (the engine's
evaluation of it, with what it computes for the properties after it) and the
merge of the report.  For the process with the highest peak it prints the
phase of its peak, the resident memory after the open beside the event store's
bytes (Trace.memory), its own events and ghosts (the ghosts by kind), and every
phase that raised the memory by 1 MB or more: how much it left held and how
high it went meanwhile.  Memory is above the interpreter's (numpy and earlc
imported), in MiB.  Not a test: a tool for finding what to cut, whose numbers
docs/parallel.md quotes.
"""
import os
import subprocess
import sys
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[2] / "python"

CHILD = r"""
import resource, sys, threading, time
sys.path.insert(0, %(python)r)
import numpy as np
import earlc
from earlc import _core
from earlc.analysis import engine
from earlc.parts import collectives_for, mpi_exchange

MIB = 1 << 20
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

phase, peaks, steps = ["open"], {}, []
def sample():
    while True:
        r, p = resident(), phase[0]
        if r > peaks.get(p, 0):
            peaks[p] = r
        time.sleep(0.005)

ex = mpi_exchange()
base = resident()
threading.Thread(target=sample, daemon=True).start()
evaluate = engine.Evaluation._evaluate
def profiled(self, k, p, value):  # each property as a phase of its own
    phase[0] = p.name
    try:
        return evaluate(self, k, p, value)
    finally:
        steps.append((p.name, resident()))
        phase[0] = "after " + p.name  # its instances let go; after the last, the merge
engine.Evaluation._evaluate = profiled

trace = earlc.open(%(trace)r, parts="mpi", collectives=collectives_for(%(properties)r))
time.sleep(0.02)
opened = resident()
store = trace.memory()
ev = trace.events
ghost = ~trace.part.own[ev.location] if len(ev) else np.zeros(0, bool)
kinds = np.bincount(ev.kind[ghost], minlength=256)
report = earlc.analyze(trace, properties=%(properties)r)
last = steps[-1][0] if steps else None
steps.append(("merge", resident()))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if last is not None:
    peaks["merge"] = peaks.pop("after " + last, 0)
def highest(name, held):
    return max(peaks.get(name, 0), peaks.get("after " + name, 0), held)
top = max(peaks, key=peaks.get)
top = top[len("after "):] if top.startswith("after ") else top
mine = dict(rank=ex.rank, peak=(peak - base) / MIB, phase=top, opened=(opened - base) / MIB,
            open_peak=(peaks.get("open", base) - base) / MIB, store=store["total"] / MIB,
            core=store["core"] / MIB, own=int((~ghost).sum()), ghosts=int(ghost.sum()),
            kinds={_core.KIND_NAMES[k]: int(n) for k, n in enumerate(kinds) if n},
            steps=[(n, (r - base) / MIB, (highest(n, r) - base) / MIB) for n, r in steps])
every = ex.allgather(mine)
if ex.rank == 0:
    for m in every:
        print("process %%d: peak %%.0f MiB in %%s (open: %%.0f, after it %%.0f)"
              %% (m["rank"], m["peak"], m["phase"], m["open_peak"], m["opened"]))
    m = max(every, key=lambda m: m["peak"])
    print()
    print("process %%d: %%d own events, %%d ghosts; event store %%.0f MiB (core columns %%.0f)"
          %% (m["rank"], m["own"], m["ghosts"], m["store"], m["core"]))
    print("ghosts by kind: " + ", ".join("%%s %%d" %% kv for kv in m["kinds"].items()))
    print("%%-40s %%8s %%8s %%8s" %% ("phase", "held", "+", "highest"))
    before = m["opened"]
    print("%%-40s %%8.0f %%8.0f %%8.0f" %% ("open", before, before, m["open_peak"]))
    for name, held, high in m["steps"]:
        if abs(held - before) >= 1 or high - max(held, before) >= 1:
            print("%%-40s %%8.0f %%+8.0f %%8.0f" %% (name, held, held - before, high))
        before = held
"""


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    trace, properties, processes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    properties = None if properties == "default" else properties
    code = CHILD % {"python": str(PYTHON), "trace": trace, "properties": properties}
    return subprocess.run(["mpiexec", "-n", str(processes), sys.executable, "-c", code],
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1")).returncode


if __name__ == "__main__":
    sys.exit(main())
