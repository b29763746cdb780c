"""Run by test_parts_page.py under `mpiexec -n P`: opens each trace named on the
command line (NAME=PATH) in parts (earlc.open(path, parts="mpi"), so that one
process is one part too), analyses it, and writes its HTML page as
OUT/NAME.html (the first argument; to_html is collective: every process calls
it, the first writes).  With --small first, the page's budgets are cut so far
that small traces take the branches of big ones (windows of exact instances,
bundled messages, chosen wait states, fewer levels)."""
import sys

import earlc
from earlc.export import timeline_page


def small_budgets() -> None:
    """Budgets that make a trace of a few thousand events a big one for the page."""
    timeline_page.EXACT_ALL, timeline_page.WINDOW_EVENTS = 50, 40
    timeline_page.MESSAGES_ALL, timeline_page.WAITS_ALL, timeline_page.WAIT_BUDGET = 10, 5, 3
    timeline_page.LEVEL_BUDGET = 20000


def main(out, entries):
    if entries and entries[0] == "--small":
        small_budgets()
        entries = entries[1:]
    for entry in entries:
        name, path = entry.split("=", 1)
        report = earlc.analyze(earlc.open(path, parts="mpi"), top=5)
        written = report.to_html("%s/%s.html" % (out, name))
        assert (written is None) == (report.part.exchange.rank != 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
