"""Where the time of an analysis in turn goes (inturn.py): wall time,
processor time of every thread and of the calling thread, per phase.

With the environment variable EARLC_PROFILE set (to anything but "" or
"0"), an analysis in turn prints a table of its phases to stderr when it
ends.  The processor time of every thread against the calling thread's says
how much of a phase ran on other threads (the reading threads, the catalog's
pool, the next part read ahead): unlike the ratio to wall time, that does not
depend on how loaded the machine is.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Dict, List


def wanted() -> bool:
    """Whether EARLC_PROFILE asks for the table."""
    return os.environ.get("EARLC_PROFILE", "") not in ("", "0")


class Phases:
    """Time accumulated per phase name, in the order phases first ran.
    Phases may nest (a nested phase's time is also its parent's)."""

    def __init__(self):
        self.totals: Dict[str, List[float]] = {}  # name -> [wall, process, thread, calls]

    @contextmanager
    def __call__(self, name: str):
        w, p, t = time.perf_counter(), time.process_time(), time.thread_time()
        try:
            yield
        finally:
            row = self.totals.setdefault(name, [0.0, 0.0, 0.0, 0])
            row[0] += time.perf_counter() - w
            row[1] += time.process_time() - p
            row[2] += time.thread_time() - t
            row[3] += 1

    def table(self) -> str:
        lines = ["%-34s %9s %9s %9s %6s" % ("phase (EARLC_PROFILE)", "wall s", "cpu s",
                                            "this thr", "calls")]
        for name, (w, p, t, n) in self.totals.items():
            lines.append("%-34s %9.2f %9.2f %9.2f %6d" % (name, w, p, t, n))
        return "\n".join(lines)

    def report(self) -> None:
        if self.totals and wanted():
            print(self.table(), file=sys.stderr)


__all__ = ["Phases", "wanted"]
