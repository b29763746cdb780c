"""Run by the tests of the analysis in parts under `mpiexec -n P`: analyses each
trace named on the command line (NAME=PATH[:PROPERTIES]; first --merged: the
long-term replay of the root causes merged on one part; --fail-rootcause-on=RANK:
the delay costs of that part raise) with earlc.analyze(PATH),
as a script under mpiexec does, and rank 0 writes NAME.json, NAME.txt and
NAME.cubex into OUT (the first argument).  Every rank checks it got the same
report as rank 0."""
import hashlib
import os
import sys

import earlc
from earlc.parts import mpi_exchange


def main(out, entries):
    if entries and entries[0] == "--merged":  # the long-term replay's merged way only
        import earlc.properties.rootcause.replay_parts as replay_parts

        replay_parts.ALWAYS_MERGED = True
        entries = entries[1:]
    if entries and entries[0].startswith("--fail-rootcause-on="):  # one part's delays fail
        _fail_on(int(entries[0].split("=")[1]))
        entries = entries[1:]
    ex = mpi_exchange()
    for entry in entries:
        name, spec = entry.split("=", 1)
        path, _, props = spec.partition(":")
        report = earlc.analyze(path, properties=props or None)
        text = report.to_json()
        mine = hashlib.sha256(text.encode()).hexdigest()
        every = ex.allgather(mine)
        assert all(x == every[0] for x in every), "rank %d: a report of its own" % ex.rank
        if ex.rank == 0:
            with open(os.path.join(out, name + ".json"), "w") as f:
                f.write(text)
            with open(os.path.join(out, name + ".txt"), "w") as f:
                f.write(report.to_text())
            report.to_cube(os.path.join(out, name + ".cubex"))


def _fail_on(rank: int) -> None:
    """The delay costs of part `rank` raise in its own work (a bug, a damaged
    input): every part must switch them off, none wait for it."""
    import earlc.properties.rootcause.delays as delays

    compute = delays._delay_costs

    def failing(ctx, parts):
        if parts is not None and parts.rank == rank:
            raise ValueError("the delays of part %d failed" % rank)
        return compute(ctx, parts)
    delays._delay_costs = failing


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
