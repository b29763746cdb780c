"""Regenerate traces/demo-ring, the small example trace bundled with earlc.

    python3 traces/make_demo.py            (from the repository root, after `make build`)

Four MPI ranks, ten iterations of: imbalanced compute (rank r works 1000 + 400 r ns),
a blocking ring exchange (MPI_Send to the right, MPI_Recv from the left), an
MPI_Barrier and an MPI_Allreduce.  Timestamps are integer nanoseconds and physically
consistent: a receive completes only after its send started, a collective lets nobody
out before the last member entered.  Deterministic: the same file every run.
"""
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
import earlc  # noqa: E402

RANKS, ITERATIONS = 4, 10


def write(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    with earlc.TraceWriter(path, ranks=RANKS, resolution=1_000_000_000,
                           creator="earlc traces/make_demo.py") as w:
        now = [0] * RANKS
        for r in range(RANKS):
            w.program_begin(r, 0, "./ring")
            w.enter(r, 10, "main")
            now[r] = 20
        for it in range(ITERATIONS):
            for r in range(RANKS):
                w.region_span(r, now[r], now[r] + 1000 + 400 * r, "compute")
                now[r] += 1000 + 400 * r + 10
            # ring: every rank sends right (eager: returns at once), then receives from left
            sent_at = {}
            for r in range(RANKS):
                w.enter(r, now[r], "MPI_Send")
                w.send(r, now[r] + 2, dest=(r + 1) % RANKS, tag=it, bytes=8192)
                sent_at[r] = now[r] + 2
                w.leave(r, now[r] + 30, "MPI_Send")
                now[r] += 40
            for r in range(RANKS):
                src = (r - 1) % RANKS
                w.enter(r, now[r], "MPI_Recv")
                arrive = max(now[r] + 5, sent_at[src] + 200)  # 200 ns on the wire
                w.recv(r, arrive, source=src, tag=it, bytes=8192)
                w.leave(r, arrive + 5, "MPI_Recv")
                now[r] = arrive + 15
            for region in ("MPI_Barrier", "MPI_Allreduce"):
                last_in = max(now)
                for r in range(RANKS):
                    out = last_in + 50 + 3 * r
                    w.collective(r, now[r], out, region, sent=8 if region == "MPI_Allreduce" else 0,
                                 received=8 if region == "MPI_Allreduce" else 0)
                    now[r] = out + 10
        for r in range(RANKS):
            w.leave(r, now[r], "main")
            w.program_end(r, now[r] + 5, 0)


if __name__ == "__main__":
    write(HERE / "demo-ring")
    print("wrote", HERE / "demo-ring")
