"""The causal analyses of a trace in parts on MPI processes: vector timestamps
and a pattern search (docs/parallel.md, "Happened-before, search and races"),
with P = 1, 2 and 4 processes side by side on one trace.

    python3 tests/bench/parts_causal_bench.py TRACE [--parts 1,2,4] [--threads N]
        [--methods frontier,gather,rounds]

For each P it runs `mpiexec -n P` on this script in worker mode, where every
process opens its part (earlc.open(path, parts="mpi")), then
  - stamps: the vector timestamps of its own message records (MPI_ISEND, MPI_IRECV,
    MPI_SEND, MPI_RECV), the whole trace's;
  - search: a pattern over two ranks' sends (the sends of the first rank
    concurrent with a send of the last, the first 1000 matches), whose events are
    stamped, gathered on every process and searched block by block;
with each replay method (--methods: "frontier", the stamps in a symbolic pass,
a solve by every process in a few rounds and a final pass; "gather", the same
with the solve on the first process; "rounds", the replay in rounds;
alternated for each P), and reports per
phase the wall time (the slowest process's), the rounds of the
replay, the bytes of clocks the processes sent each other and the bytes of the
gathered events, and the peak resident memory of the largest process.  A table
is printed at the end.  Not a timed test: `make bench` runs it when mpiexec and
mpi4py are there (EARLC_BENCH_PARTS_TRACE names the trace).
"""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PATTERN = ('A := ["rank 0", "MPI_*SEND", ""]; B := ["rank %d", "MPI_*SEND", ""]; A $a; B $b;'
           ' P := $a || $b;')


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(path: str, threads: int, method: str) -> None:
    import numpy as np

    import earlc
    from earlc.parts import replay

    replay.METHOD = method
    from earlc.events import KINDS
    from earlc.parts import mpi_exchange

    ex = mpi_exchange()
    out = {}

    def phase(name, fn):
        ex.allreduce_sum(np.zeros(1, np.int64))  # start together
        t0 = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - t0
        out[name] = {"seconds": seconds, "peak_mb": peak_mb()}
        return result

    trace = phase("open", lambda: earlc.open(path, parts="mpi", threads=threads))
    ev = trace.events
    kinds = [KINDS[k] for k in ("MPI_ISEND", "MPI_IRECV", "MPI_SEND", "MPI_RECV")]
    ids = np.nonzero(np.isin(ev.kind, kinds) & trace.part.own[ev.location])[0]
    clocks = phase("stamps", lambda: trace.vector_clocks(ids, threads=threads))
    out["stamps"].update({k: v for k, v in clocks.replay.extra.items() if k.endswith("seconds")})
    out["stamps"].update(solve_rounds=clocks.replay.extra.get("solve_rounds", 0),
                         solve_held=clocks.replay.extra.get("solve_held", 0),
                         summary_bytes=clocks.replay.extra.get("summary_bytes", 0))
    out["stamps"].update(rounds=clocks.replay.rounds, clock_bytes=clocks.replay.bytes_sent,
                         stamped=int(len(ids)), stamp_bytes=clocks.bytes)
    del clocks
    last = max(l.rank for l in trace.locations if l.rank is not None)
    m = phase("search", lambda: trace.search(PATTERN % last, limit=1000, threads=threads,
                                              root=0))
    out["search"].update(rounds=m.stats["rounds"] if ex.rank == 0 else 0,
                         clock_bytes=m.stats["clock_bytes"] if ex.rank == 0 else 0,
                         table_bytes=m.stats["stamp_bytes"] if ex.rank == 0 else 0,
                         matches=len(m) if ex.rank == 0 else 0,
                         stamped=m.stats["stamped"] if ex.rank == 0 else 0)
    every = ex.gather(out, root=0)
    if ex.rank == 0:
        merged = {}
        for name in out:
            merged[name] = {"seconds": max(o[name]["seconds"] for o in every),
                            "peak_mb": max(o[name]["peak_mb"] for o in every)}
            for k, v in out[name].items():
                if k not in merged[name]:  # rounds, times and what one holds: the largest
                    merged[name][k] = (max if k in ("rounds", "solve_rounds", "solve_held") or
                                       k.endswith("seconds") else sum)(
                        o[name].get(k, 0) for o in every)
        print("RESULT " + json.dumps({"parts": ex.size, "method": method,
                                      "load": os.getloadavg()[0],
                                      "events": trace.part.whole["events"],
                                      "phases": merged}))


def main(argv) -> int:
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--parts", default="1,2,4")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--methods", default="frontier,rounds")
    p.add_argument("--method", default="frontier")
    p.add_argument("--worker", action="store_true")
    args = p.parse_args(argv)
    if args.worker:
        worker(args.trace, args.threads, args.method)
        return 0
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"]
                                                if env.get("PYTHONPATH") else "")
    rows = []
    runs = [(int(p), m) for p in args.parts.split(",") for m in args.methods.split(",")
            if int(p) > 1 or m == args.methods.split(",")[0]]  # one process: no exchange
    for parts, method in runs:
        t0 = time.perf_counter()
        r = subprocess.run(["mpiexec", "-n", str(parts), sys.executable, __file__, args.trace,
                            "--worker", "--threads", str(args.threads), "--method", method],
                           capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if r.returncode:
            print(r.stderr, file=sys.stderr)
            return 1
        line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")][0]
        res = json.loads(line[len("RESULT "):])
        res["wall"] = wall
        rows.append(res)
        print(line, flush=True)
    print("\nparts  method    phase   seconds  rounds  clock MB  gathered MB  peak MB (largest "
          "process)  load")
    for res in rows:
        for name in ("open", "stamps", "search"):
            ph = res["phases"][name]
            print("%5d  %-8s  %-6s  %7.2f  %6s  %8s  %11s  %7.0f  %5.2f" % (
                res["parts"], res["method"] if res["parts"] > 1 else "-", name, ph["seconds"],
                ph.get("rounds", ""),
                "%.1f" % (ph["clock_bytes"] / 1e6) if "clock_bytes" in ph else "",
                "%.1f" % (ph["table_bytes"] / 1e6) if "table_bytes" in ph else "",
                ph["peak_mb"], res["load"]))
            if "symbolic_seconds" in ph:
                print("%32s symbolic pass %.2f s, solve %.2f s, final pass %.2f s" % (
                    "", ph["symbolic_seconds"], ph.get("solve_seconds", 0), ph["final_seconds"]))
                print("%32s solve: %d round(s), processor time %.2f s (the largest "
                      "process's), the most one process received in a round %.1f MB of the "
                      "%.1f MB of all summaries" % (
                          "", ph["solve_rounds"], ph.get("solve_cpu_seconds", 0),
                          ph["solve_held"] / 1e6, ph["summary_bytes"] / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
