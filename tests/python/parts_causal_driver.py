"""Run by test_parts_causal.py under `mpiexec -n P`, as a user's script would be:
for each trace named on the command line (NAME=PATH) it opens this process's
part (earlc.open(path, parts="mpi")), stamps every event the part holds, searches
the patterns of the test (with and without a limit) and analyses the races; every
rank checks its stamps against the whole trace's and that it got the same matches
and races as rank 0, which writes NAME.json into OUT (the first argument)."""
import json
import os
import sys
import warnings

import numpy as np

import earlc
from earlc.parts import mpi_exchange, replay

sys.path.insert(0, os.path.dirname(__file__))
from causal_patterns import MPI_PATTERNS, PATTERNS  # noqa: E402


def rounds_deliver(ex) -> bool:
    """One replay round's exchange (Exchange.round) delivers bytes of every size:
    few for each destination (with the counts), more (an exchange of their own),
    nothing; and sums the status."""
    ok = True
    for scale in (0, 1, 1000):
        def data(src, dst):
            return bytes([(src * 7 + dst) % 251]) * ((src + 2 * dst) * scale)
        got, total = ex.round([data(ex.rank, q) for q in range(ex.size)],
                              np.array([ex.rank, 1], np.int64))
        ok &= [bytes(g) for g in got] == [data(q, ex.rank) for q in range(ex.size)]
        ok &= total.tolist() == [ex.size * (ex.size - 1) // 2, ex.size]
    return bool(ok)


def main(out, entries):
    ex = mpi_exchange()
    warnings.simplefilter("ignore", earlc.PatternWarning)
    rounds_ok = all(ex.allgather(rounds_deliver(ex)))
    for entry in entries:
        name, path = entry.split("=", 1)
        trace = earlc.open(path, parts="mpi")
        whole = earlc.open(path)
        held = np.arange(len(trace))
        clocks = trace.vector_clocks(held)
        want = whole.vector_clocks(trace.part.global_ids(held))
        same = bool(np.array_equal(clocks.stamps, want.stamps))
        # stamped in a symbolic pass, a solve in few rounds and a final pass; and
        # by the replay in rounds, the clocks of every round in an exchange of
        # their own, not with the counts
        solve_rounds = clocks.replay.extra.get("solve_rounds", 0)
        same = same and clocks.replay.rounds == 2 * solve_rounds <= 8 and \
            clocks.replay.extra["method"] == "frontier"
        trace.part.exchange.INLINE = 0
        replay.METHOD = "rounds"
        spilled = trace.vector_clocks(held)
        replay.METHOD = "frontier"
        del trace.part.exchange.INLINE
        same = same and bool(np.array_equal(spilled.stamps, want.stamps))
        result = {"stamps": all(ex.allgather(same)), "rounds": rounds_ok, "search": {}}
        for k in MPI_PATTERNS:
            m = trace.search(PATTERNS[k], threads=1 + ex.rank % 2)
            result["search"][k] = m.events.tolist()
        m = trace.search(PATTERNS["limited"], limit=3)
        result["search"]["limited/3"] = m.events.tolist()
        result["races"] = json.loads(earlc.races(trace, wildcard="all").to_json())
        every = ex.allgather(json.dumps(result, sort_keys=True))
        assert all(x == every[0] for x in every), "rank %d: results of its own" % ex.rank
        if ex.rank == 0:
            with open(os.path.join(out, name + ".json"), "w") as f:
                f.write(every[0])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
