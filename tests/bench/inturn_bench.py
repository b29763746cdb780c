"""A trace bigger than the memory budget, analysed in parts one after another
(earlc.parts.inturn, docs/memory.md), against the in-memory analysis of the same
program with a tenth of the events.

    python3 tests/bench/inturn_bench.py BIG SMALL MEMORY SCRATCH [PROPERTIES]
    python3 tests/bench/inturn_bench.py races TRACE MEMORY SCRATCH [REPEATS]

BIG and SMALL are archives written by `earlc synth` (expected.json beside them),
SMALL with a tenth of BIG's events (or BIG itself: the same trace in memory).
PROPERTIES (default: the default catalog) is what both analyse: `all` for the
root causes in turn.  Each analysis runs in a fresh process:
BIG as `earlc analyze BIG --memory MEMORY --scratch SCRATCH` runs it (the parts
chosen from the budget), SMALL in one piece (`earlc.analyze(earlc.open(SMALL))`).
Prints "key value" lines for tests/bench/run.py: each run's wall time, processor
time (user and system, every thread; and of the calling thread alone, which
the other threads took no work off) and peak resident memory, the parts and plans of the analysis in turn, the bytes it wrote
to and read from its scratch folder (and the process's block-device traffic,
/proc/self/io), and, per wait state the generator computes, the difference
between the analysis's total and expected.json's (ticks; 0 when exact).

`races`: the race analysis of TRACE (every receive a wildcard) in parts one after
another within MEMORY (earlc.parts.races_inturn) against the same trace's in one
piece (`earlc.races(earlc.open(TRACE))`), each in a fresh process, alternated
REPEATS times (default 2): the best wall and processor time of each, their peaks,
the parts, the sweeps and part runs, the scratch bytes, and whether the results
are equal (their JSON).
"""
import json
import subprocess
import sys
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[2] / "python"

#: the wait states whose totals the generator computes exactly (docs/generator.md)
WAIT_STATES = ("late_sender", "late_receiver", "wait_at_nxn", "nxn_completion",
               "wait_at_barrier", "barrier_completion", "late_broadcast", "early_reduce")

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, %(python)r)
t0 = time.perf_counter()
import earlc
from earlc.parts.inturn import InTurn, needs_parts
path, memory, scratch, props = %(trace)r, %(memory)r, %(scratch)r, %(properties)r
out = {}
if memory:
    need = needs_parts(path, memory, props)
    if need is None:
        sys.exit("%%s fits in %%s: nothing to analyse in parts" %% (path, memory))
    # how the collectives travel (need.collectives; before it, a flag)
    how = {"collectives": need.collectives} if hasattr(need, "collectives") else \
        {"representatives": need.representatives}
    with InTurn(path, need.budget, scratch=scratch, model=need.model, **how) as it:
        report = it.analyze(properties=props)
        out.update(parts=it.pp.parts, plans=it.passes, scratch_written=it.scratch.written,
                   steps=it.steps_taken, ghosts=int(it.pp.ghosts.sum()),
                   scratch_read=it.scratch.read, whole_need=need.whole)
else:
    report = earlc.analyze(earlc.open(path), properties=props)
out["seconds"] = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
with open("/proc/self/status") as f:  # VmHWM: ru_maxrss starts at the parent's (fork, exec)
    out["peak"] = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM")][0]
out["cpu"] = usage.ru_utime + usage.ru_stime
# the calling thread's processor time: what the other threads (readings, the
# catalog's pool, the part read ahead) did not take off it; unlike the wall
# time, it does not depend on the load of a shared machine
out["main_thread"] = time.thread_time()
with open("/proc/self/io") as f:
    io = dict(line.split(": ") for line in f.read().splitlines())
out["disk_read"], out["disk_written"] = int(io["read_bytes"]), int(io["write_bytes"])
out["events"] = len(report.trace) if hasattr(report.trace, "__len__") else 0
out["totals"] = {m["name"]: m["value"] for m in json.loads(report.to_json())["metrics"]}
print(json.dumps(out))
"""


CHILD_RACES = r"""
import hashlib, json, resource, sys, time
sys.path.insert(0, %(python)r)
t0 = time.perf_counter()
import earlc
from earlc.parts.inturn import InTurn, needs_parts
path, memory, scratch = %(trace)r, %(memory)r, %(scratch)r
out = {}
if memory:
    need = needs_parts(path, memory)
    if need is None:
        sys.exit("%%s fits in %%s: nothing to analyse in parts" %% (path, memory))
    with InTurn(path, need.budget, scratch=scratch, model=need.model,
                representatives=False) as it:
        r = it.races(wildcard="all")
        out.update(parts=it.pp.parts, scratch_written=it.scratch.written,
                   scratch_read=it.scratch.read, sweeps=r.replay.extra["sweeps"],
                   part_runs=r.replay.extra["part_runs"], crossing=r.replay.extra["crossing"],
                   plans=r.replay.extra.get("plans", 1), passes=it.passes)
else:
    r = earlc.races(earlc.open(path), wildcard="all")
out["json"] = hashlib.sha256(r.to_json().encode()).hexdigest()
out["pairs"] = len(r)
out["seconds"] = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
with open("/proc/self/status") as f:
    out["peak"] = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM")][0]
out["cpu"] = usage.ru_utime + usage.ru_stime
print(json.dumps(out))
"""


def run_races(trace: str, memory: str = "", scratch: str = "") -> dict:
    code = CHILD_RACES % {"python": str(PYTHON), "trace": trace, "memory": memory,
                          "scratch": scratch}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode:
        sys.exit("inturn_bench: races of %s failed: %s" % (trace, r.stderr.strip()[-500:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def races_main(trace: str, memory: str, scratch: str, repeats: int) -> int:
    import os

    runs = {"inturn": [], "whole": []}
    for _ in range(repeats):  # alternated: the load of the shared machine hits both
        runs["inturn"].append(run_races(trace, memory, scratch))
        runs["whole"].append(run_races(trace))
    print("load_average", os.getloadavg()[0])
    for name, rs in runs.items():
        print("races_%s_seconds" % name, min(r["seconds"] for r in rs))
        print("races_%s_cpu" % name, min(r["cpu"] for r in rs))
        print("races_%s_peak" % name, max(r["peak"] for r in rs))
    b = runs["inturn"][0]
    for key in ("parts", "plans", "passes", "sweeps", "part_runs", "crossing",
                "scratch_written", "scratch_read", "pairs"):
        print("races_inturn_%s" % key, b[key])
    print("races_equal", int(len({r["json"] for rs in runs.values() for r in rs}) == 1))
    return 0


def run(trace: str, memory: str = "", scratch: str = "", properties=None) -> dict:
    code = CHILD % {"python": str(PYTHON), "trace": trace, "memory": memory,
                    "scratch": scratch, "properties": properties}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode:
        sys.exit("inturn_bench: %s failed: %s" % (trace, r.stderr.strip()[-500:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def expected(trace: str) -> dict:
    folder = Path(trace).parent if trace.endswith(".otf2") else Path(trace)
    with open(folder / "expected.json") as f:
        exp = json.load(f)
    return {"events": exp["events"]["total"],
            "totals": {k: v["total"] for k, v in exp["properties"].items()}}


def main() -> int:
    if sys.argv[1] == "races":
        return races_main(sys.argv[2], sys.argv[3], sys.argv[4],
                          int(sys.argv[5]) if len(sys.argv) > 5 else 2)
    big, small, memory, scratch = sys.argv[1:5]
    props = sys.argv[5] if len(sys.argv) > 5 else None
    b = run(big, memory, scratch, props)
    s = run(small, properties=props)
    eb = expected(big)
    print("big_events", eb["events"])
    print("small_events", expected(small)["events"])
    for key in ("seconds", "cpu", "main_thread", "peak", "parts", "plans", "scratch_written",
                "scratch_read", "disk_read", "disk_written", "whole_need", "steps", "ghosts"):
        print("big_%s" % key, b[key])
    print("small_seconds", s["seconds"])
    print("small_cpu", s["cpu"])
    print("small_main_thread", s["main_thread"])
    print("small_peak", s["peak"])
    for name in WAIT_STATES:
        if name in eb["totals"]:
            print("diff_%s" % name, int(b["totals"].get(name, 0)) - int(eb["totals"][name]))
            print("expected_%s" % name, int(eb["totals"][name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
