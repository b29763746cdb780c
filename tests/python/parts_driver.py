"""Run by the tests of the analysis in parts under `mpiexec -n P`: analyses each
trace named on the command line (NAME=PATH[:PROPERTIES]) with earlc.analyze(PATH),
as a script under mpiexec does, and rank 0 writes NAME.json, NAME.txt and
NAME.cubex into OUT (the first argument).  Every rank checks it got the same
report as rank 0."""
import hashlib
import os
import sys

import earlc
from earlc.parts import mpi_exchange


def main(out, entries):
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


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
