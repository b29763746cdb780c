"""Benchmark of the analysis in parts (docs/parallel.md): one trace analysed
with `--properties all` by 1, 2 and 4 MPI processes, side by side in one run.

    python tests/bench/parts_bench.py [EVENTS] [RANKS]

Synthesises a halo trace (earlc synth halo: RANKS ranks, default 16, about
EVENTS events, default 10,000,000) and reports per number of processes: the
wall time of the analysis (open to merged report), the peak resident memory of
the largest process against the single-process analysis's (target: at most
1/P of it plus 10%), and what the root causes exchanged (the long-term
replay's rounds, the bytes sent by all processes).  Each process runs this
file's `worker` under mpiexec; P = 1 is the single-process analysis without
mpiexec.  Skipped without mpiexec and mpi4py.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def worker(path: str, out: str) -> None:
    """Under mpiexec (or alone): analyse, then rank 0 writes what every process
    measured to `out`."""
    import earlc
    from earlc.parts import mpi_exchange

    ex = mpi_exchange()
    start = time.perf_counter()
    report = earlc.analyze(path, properties=os.environ.get("EARLC_BENCH_PROPERTIES", "all") or None)
    report.to_json()
    wall = time.perf_counter() - start
    part = getattr(report, "part", None)
    stats = dict(part.stats.get("rootcause", {})) if part is not None else {}
    mine = {"wall": wall, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            **stats}
    every = ex.allgather(mine)
    if ex.rank == 0:
        Path(out).write_text(json.dumps(every))


def run(events: int = 10_000_000, ranks: int = 16, processes=(1, 2, 4)) -> list:
    if not shutil.which("mpiexec"):
        print("analysis in parts benchmark: skipped (needs mpiexec)")
        return []
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        print("analysis in parts benchmark: skipped (needs mpi4py)")
        return []
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"]
                                                if env.get("PYTHONPATH") else "")
    tmp = Path(tempfile.mkdtemp(prefix="earlc-parts-bench-"))
    try:
        trace = tmp / "halo"
        subprocess.run([sys.executable, "-m", "earlc", "synth", "halo", "--ranks", str(ranks),
                        "--events", str(events), "-o", str(trace)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        rows = []
        for p in processes:
            out = tmp / ("%d.json" % p)
            cmd = [sys.executable, __file__, "--worker", str(trace), str(out)]
            if p > 1:
                cmd = ["mpiexec", "-n", str(p)] + cmd
            subprocess.run(cmd, env=env, check=True)
            every = json.loads(out.read_text())
            rows.append((p, every))
        single = max(r["rss_kb"] for r in rows[0][1]) if rows and rows[0][0] == 1 else None
        print("analysis in parts: halo, %d ranks, %d events, --properties all" % (ranks, events))
        for p, every in rows:
            peak = max(r["rss_kb"] for r in every)
            ratio = " (%.2f of one process; target <= %.2f)" % (peak / single, 1 / p + 0.1) \
                if single else ""
            print("  %d process%s: %.1f s, peak %.0f MB%s; replay rounds %d, root causes sent "
                  "%.1f MB in %d steps" % (
                      p, "es" if p > 1 else "", max(r["wall"] for r in every), peak / 1024,
                      ratio, max(r.get("replay_rounds", 0) for r in every),
                      sum(r.get("bytes_sent", 0) for r in every) / 1e6,
                      max(r.get("steps", 0) for r in every)))
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        run(*(int(a) for a in sys.argv[1:3]))
