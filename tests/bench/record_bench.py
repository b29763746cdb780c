"""The recorder's cost (issue 16): time added per recorded MPI call and memory per
process, each workload run with and without the recorder side by side, best of a few
repetitions:

  self      one process sending itself messages (Isend, Recv, Wait): no partner to
            wait for, so the added time is the recorder's own cost per call;
  pingpong  2 ranks exchanging 8-byte messages: every call of both ranks is on the
            critical path, so the added time is divided by the calls of both;
  halo      2 ranks in a periodic halo exchange (2 Irecv, 2 Isend, Waitall): the
            ranks work in parallel, so it is divided by the calls of one.

The recorder is used as `earlc record` uses it (LD_PRELOAD and EARLC_RECORD_DIR), but
the programs time their communication loop themselves, so process start-up and the
assembly of the OTF2 archive afterwards are not counted.  Two lengths of the ping-pong
show that the recorder's memory does not grow with the run.

Usage: record_bench.py [REPEATS]; prints one line per measurement.
Environment: EARLC_BENCH_DIR (default /tmp/earlc-bench), EARLC_RECORD_BENCH_ITERATIONS
(default 200000).
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDER = ROOT / "python" / "earlc" / "libearlc_record.so"
BENCH_DIR = Path(os.environ.get("EARLC_BENCH_DIR", "/tmp/earlc-bench"))
ITERATIONS = int(os.environ.get("EARLC_RECORD_BENCH_ITERATIONS", "200000"))
TARGET_US_PER_CALL = 0.5


def run(program, kind, iterations, record, ranks, where):
    """(loop seconds, MPI calls of rank 0, peak resident kB of rank 0); the
    recorder's files go to a folder in `where`."""
    env = dict(os.environ)
    raw = None
    if record:
        raw = tempfile.mkdtemp(prefix="record-bench-", dir=where)
        env["EARLC_RECORD_DIR"] = raw
        env["LD_PRELOAD"] = str(RECORDER)
    try:
        out = subprocess.run(["mpiexec", "-n", str(ranks), program, kind, str(iterations)], env=env,
                             check=True, capture_output=True, text=True).stdout.split()
        return float(out[0]), int(out[1]), int(out[2])
    finally:
        if raw:
            shutil.rmtree(raw, ignore_errors=True)


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not (shutil.which("mpicc") and shutil.which("mpiexec") and RECORDER.exists()):
        print("earlc record benchmark: skipped (needs mpicc, mpiexec and make recorder)")
        return 0
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    program = str(BENCH_DIR / "record_workloads")
    subprocess.run(["mpicc", "-O2", str(ROOT / "tests" / "bench" / "record_workloads.c"), "-o",
                    program], check=True)
    places = [("files in %s" % BENCH_DIR, BENCH_DIR)]
    if os.path.isdir("/dev/shm"):
        places.append(("files in /dev/shm (tmpfs)", Path("/dev/shm")))
    for label, where in places:
        measure(program, repeats, label, where)
    print("  recorder memory bound per process: the 1 MiB mapped window of the events file, "
          "16384 request slots (384 KiB) and 512 communicator slots (40 KiB): about 1.5 MB "
          "whatever the run's length")
    return 0


def measure(program, repeats, label, where) -> None:
    print("earlc record benchmark, %s (best of %d, recorded and plain runs interleaved)"
          % (label, repeats))
    # (workload, iterations, ranks, processes whose calls are on the critical path)
    for kind, iterations, ranks, serial in (("self", ITERATIONS * 2, 1, 1),
                                            ("self", ITERATIONS // 5, 1, 1),
                                            ("pingpong", ITERATIONS, 2, 2),
                                            ("halo", ITERATIONS // 2, 2, 1)):
        plain, recorded = [], []
        for _ in range(repeats):
            plain.append(run(program, kind, iterations, False, ranks, where))
            recorded.append(run(program, kind, iterations, True, ranks, where))
        p, r = min(plain), min(recorded)
        calls = p[1] * serial
        added_us = (r[0] - p[0]) / calls * 1e6
        print("  %-8s %7d iterations, %d rank%s: %7.3f s plain, %7.3f s recorded: "
              "%.3f us added per call (target <= %.1f); peak resident %.1f MB plain, "
              "%.1f MB recorded (+%.1f MB)"
              % (kind, iterations, ranks, "s" if ranks > 1 else " ", p[0], r[0], added_us,
                 TARGET_US_PER_CALL, p[2] / 1024, r[2] / 1024, (r[2] - p[2]) / 1024))


if __name__ == "__main__":
    sys.exit(main())
