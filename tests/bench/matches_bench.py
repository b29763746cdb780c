"""The parallel search as Python runs it: `$a || $b` over the sends of a generated
8-rank halo trace (`earlc synth halo --ranks 8 --iterations 1500`, 1,344,000 matches
with range pruning), on one thread and on all cores, the matches handed to numpy
included, alternating, best of REPEATS.

    python3 tests/bench/matches_bench.py TRACE [REPEATS]

Prints "key value" lines for tests/bench/run.py: matches, and per thread count
(1 and the number of cores, "n") the wall time of `trace.search` (prepare, search,
merge, hand-over), the processor time of the whole process during it, and its
phases, each the best of the repetitions: prepare_seconds (the classes and their
vector timestamps), solve_seconds (stats["seconds"]: the search, its merge
included), merge_seconds (the tasks' matches put together, within the solve) and
rest_seconds (the rest of the call: Python, the result's hand-over to numpy);
with the load average before and after (a shared machine shows in it).
"""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import earlc  # noqa: E402

PATTERN = 'Send := ["", "MPI_*SEND", ""];\nSend $a, $b;\nConcurrent := $a || $b;'


def main() -> int:
    trace = earlc.open(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    trace.states
    cores = os.cpu_count() or 1
    trace.search(PATTERN, threads=1)  # warm: the classes' first lookups, numpy
    best = {"load_before": os.getloadavg()[0]}
    for _ in range(repeats):
        for label, threads in (("1", 1), ("n", cores)):
            c0, w0 = time.process_time(), time.perf_counter()
            m = trace.search(PATTERN, threads=threads)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            best["matches"] = len(m)
            st = m.stats
            for key, value in (("seconds", wall), ("cpu_seconds", cpu),
                               ("solve_seconds", st["seconds"]),
                               ("prepare_seconds", st["prepare_seconds"]),
                               ("merge_seconds", st["merge_seconds"]),
                               ("rest_seconds", wall - st["seconds"] - st["prepare_seconds"])):
                key = "t%s_%s" % (label, key)
                best[key] = min(best.get(key, float("inf")), value)
            del m
    best["cores"] = cores
    best["load_after"] = os.getloadavg()[0]
    for key, value in best.items():
        print(key, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
