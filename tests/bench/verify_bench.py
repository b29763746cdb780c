"""The cost and the economy of `earlc verify` (issue 27), measured side by side:

  forced call   one process receiving its own messages with MPI_Recv(MPI_ANY_SOURCE)
                (record_workloads.c "wild"), recorded free and recorded under a
                schedule that forces every receive: the time a forced wildcard receive
                adds against a free recorded one (and a recorded one against a plain
                one, for scale).  The program times its loop itself: start-up, reading
                the schedule and assembling the archive are not counted.
  search        the test programs of tests/mpi/ verified: runs per explored
                alternative (target 1: each alternative costs one run), and the runs
                against the number of distinct match orders the programs have by
                construction (target: equal; no order run twice, none missed), and
                earlc's own time per run (assembling, opening and analysing the
                run's trace) beside the time the runs took.

Usage: verify_bench.py [REPEATS]; prints one line per measurement.
Environment: EARLC_BENCH_DIR (default /tmp/earlc-bench), EARLC_RECORD_BENCH_ITERATIONS
(default 200000).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
RECORDER = ROOT / "python" / "earlc" / "libearlc_record.so"
BENCH_DIR = Path(os.environ.get("EARLC_BENCH_DIR", "/tmp/earlc-bench"))
ITERATIONS = int(os.environ.get("EARLC_RECORD_BENCH_ITERATIONS", "200000"))

#: (program, arguments, ranks, distinct match orders by construction, why)
SEARCHES = [
    ("master_worker", [], 3, 2, "2 orders of 2 results"),
    ("master_worker", [], 4, 5, "3! orders, the 2 with rank 3 first end in one deadlock"),
    ("crooked_barrier", [], 3, 2, "the pending MPI_Irecv takes rank 0's or rank 2's"),
    ("benign", [], 4, 6, "3! orders of 3 results"),
    ("chain", ["2"], 3, 4, "2 rounds of 2 orders"),
    ("chain", ["3"], 3, 8, "3 rounds of 2 orders"),
]


def loop_seconds(program, mode, schedule=None, record=True, where=BENCH_DIR):
    """The loop's seconds of one run of record_workloads MODE on 1 process."""
    env = dict(os.environ)
    raw = None
    if record:
        raw = tempfile.mkdtemp(prefix="verify-bench-", dir=where)
        env["EARLC_RECORD_DIR"] = raw
        env["LD_PRELOAD"] = str(RECORDER)
    if schedule:
        env["EARLC_RECORD_SCHEDULE"] = schedule
    try:
        out = subprocess.run(["mpiexec", "-n", "1", program, mode, str(ITERATIONS)], env=env,
                             check=True, capture_output=True, text=True).stdout.split()
        return float(out[0])
    finally:
        if raw:
            shutil.rmtree(raw, ignore_errors=True)


def forced_call(repeats: int) -> None:
    program = str(BENCH_DIR / "record_workloads")
    subprocess.run(["mpicc", "-O2", str(ROOT / "tests" / "bench" / "record_workloads.c"), "-o",
                    program], check=True)
    schedule = BENCH_DIR / "verify-bench.schedule"
    with open(schedule, "w") as f:
        f.write("earlc-schedule 1\n")
        f.writelines("0 %d 0 MPI_Recv\n" % i for i in range(ITERATIONS))
    plain, free, forced = [], [], []
    for _ in range(repeats):
        plain.append(loop_seconds(program, "wild", record=False))
        free.append(loop_seconds(program, "wild"))
        forced.append(loop_seconds(program, "wild", str(schedule)))
    schedule.unlink()
    p, f, g = min(plain), min(free), min(forced)
    print("earlc verify benchmark (best of %d, interleaved)" % repeats)
    print("  forced call: %d wildcard receives of one process: %.3f s plain, %.3f s recorded "
          "free, %.3f s recorded and forced: %+.3f us per forced call against a free recorded "
          "one (recording itself: %.3f us per iteration of 3 calls)"
          % (ITERATIONS, p, f, g, (g - f) / ITERATIONS * 1e6, (f - p) / ITERATIONS * 1e6))


def search() -> None:
    import earlc

    programs = BENCH_DIR / "verify-programs"
    programs.mkdir(parents=True, exist_ok=True)
    for name in sorted({s[0] for s in SEARCHES}):
        subprocess.run(["mpicc", "-g", "-O1", str(ROOT / "tests" / "mpi" / (name + ".c")), "-o",
                        str(programs / name)], check=True)
    for name, args, ranks, expected, why in SEARCHES:
        out = BENCH_DIR / "verify-search"
        start = time.monotonic()
        v = earlc.verify(["mpiexec", "-n", str(ranks), str(programs / name), *args], out=out,
                         timeout=5.0, force=True)
        wall = time.monotonic() - start
        branches = 0
        for r in v.runs:
            if not r.applied:
                continue
            given = {f.key for f in r.forced}
            branches += sum(len(d.alternatives) for d in r.decisions if d.key not in given)
        orders = set()
        for r in v.runs:
            with open(r.schedule) as f:
                orders.add(tuple((d["rank"], d["wildcard"], d["source"])
                                 for d in json.load(f)["decisions"]))
        seconds = sum(r.seconds for r in v.runs)
        print("  search: %-22s %d ranks: %2d runs, %2d alternatives explored (%.2f runs per "
              "alternative, target 1), %2d distinct match orders run of %2d (%s; runs/orders "
              "%.2f, target 1), %d failed, %.1f s in the runs, %.2f s of earlc's per run"
              % (" ".join([name] + args), ranks, len(v.runs), branches,
                 (len(v.runs) - 1) / branches if branches else 0.0, len(orders), expected, why,
                 len(v.runs) / expected, len(v.failed), seconds,
                 (wall - seconds) / len(v.runs)))
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not (shutil.which("mpicc") and shutil.which("mpiexec") and RECORDER.exists()):
        print("earlc verify benchmark: skipped (needs mpicc, mpiexec and make recorder)")
        return 0
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    forced_call(repeats)
    search()
    return 0


if __name__ == "__main__":
    sys.exit(main())
