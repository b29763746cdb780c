"""Run by test_scalasca_reference.py under `mpiexec -n P`: its comparisons with
Scalasca 2.6 of each reference trace named on the command line, analysed in
parts; rank 0 writes {name: [differences, missing]} as JSON to OUT."""
import json
import sys

from earlc.parts import mpi_exchange
from test_scalasca_reference import compare


def main(out, names):
    ex = mpi_exchange()
    found = {}
    for name in names:
        differences, missing = compare(name, in_parts=True)
        found[name] = [differences, sorted(missing)]
    if ex.rank == 0:
        with open(out, "w") as f:
            json.dump(found, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
