"""Logical time and lateness, as Ravel shows them.

Wall-clock time mixes what a program does with noise: a late message shifts every
later event.  Logical time gives each communication and synchronisation event an
integer step that respects the happened-before order (docs/patterns.md): a receive
is at least one step after its send, the members of a collective share one step,
and steps grow along each location.  Events of one step are the "same moment" of the
program on different processes; how much later than the earliest of them an event
happened is its lateness.

    lt = trace.logical_time()
    lt.events, lt.step, lt.lateness, lt.location, lt.time   # numpy columns
    lt.late_processes()      # locations ranked by how often they were the last
    lt.to_dataframe()

The steps are computed in C (earl_logical, csrc/hb/hb_logical.c) in one walk over the
trace in dependency order, without the GIL.  docs/workflow.md gives the rules.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _core
from .events import KIND_NAMES, column


class LogicalTime:
    """The logical steps of a trace's communication events (sends, receives,
    collective members, forks, joins, lock acquisitions), one row per such event
    in event-id order:

    - `events`: int64 event ids; `location`, `time` (ticks) and `kind` of each;
    - `step`: int64 logical step (0 first);
    - `lateness`: int64 ticks after the earliest event of the same step.

    `steps` is the number of steps; `cycles_broken` counts dependencies an
    inconsistent trace could not honour (docs/patterns.md)."""

    def __init__(self, trace, core=None, ids: Optional[np.ndarray] = None, progress=None):
        self.trace = trace
        if core is None:
            core = _core.LogicalTime(trace.states._core, progress=progress)
        self._core = core
        info = core.info()
        self.steps: int = info["steps"]
        self.cycles_broken: int = info["cycles_broken"]
        self.bytes: int = info["bytes"]
        events = column(core, "events", "q")
        step = column(core, "step", "I")
        lateness = column(core, "lateness", "q")
        if ids is not None:  # a view: the rows of its events
            keep = np.isin(events, ids)
            events, step, lateness = events[keep], step[keep], lateness[keep]
        self.events = events
        self.step = step.astype(np.int64)
        self.lateness = lateness
        ev = trace.events
        self.location = ev.location[events].astype(np.int64)
        self.time = ev.time[events].view(np.int64) if len(events) else np.empty(0, np.int64)
        self.kind = ev.kind[events]

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return "<earlc.LogicalTime %d events in %d steps, lateness up to %s>" % (
            len(self), self.steps, self._seconds(int(self.lateness.max())) if len(self) else "0")

    def _seconds(self, ticks: int) -> str:
        from .readable import ticks_text

        return ticks_text(self.trace, ticks)

    def of_location(self, loc: int) -> np.ndarray:
        """Row numbers of one location's stepped events, in step order."""
        return np.nonzero(self.location == int(loc))[0]

    def to_dataframe(self):
        """One row per stepped event: event, location, kind, time (seconds from the
        trace's start) and time_ticks, step, lateness (seconds) and lateness_ticks."""
        import pandas as pd

        from .display import duration_columns, time_columns

        kinds = np.array(KIND_NAMES, dtype=object)
        return pd.DataFrame({"event": self.events, "location": self.location,
                             "kind": kinds[self.kind] if len(self) else [],
                             **time_columns(self.trace, self.time), "step": self.step,
                             **duration_columns(self.trace, self.lateness, "lateness")})

    def late_processes(self, top: Optional[int] = None):
        """Locations ranked by how often they were late: per location its stepped
        `events`, `last` (steps at which it was the last of two or more locations to
        get there), `late` (events with a lateness above 0), `lateness` (their total),
        `max_lateness`, `mean_lateness` (each in seconds, with `lateness_ticks`,
        `max_lateness_ticks`, `mean_lateness_ticks` beside); most often last first,
        then by total lateness."""
        import pandas as pd

        n = len(self.trace.locations)
        loc, step, late = self.location, self.step, self.lateness
        per_step = np.bincount(step, minlength=self.steps) if len(step) else np.zeros(0, int)
        # the latest event of each step with two or more events (ties: every one)
        shared = per_step[step] > 1 if len(step) else np.zeros(0, bool)
        latest = np.full(self.steps, -1, dtype=np.int64)
        if len(step):
            np.maximum.at(latest, step, late)
        is_last = shared & (late == latest[step]) & (late > 0)
        events = np.bincount(loc, minlength=n)
        total = np.bincount(loc, weights=late.astype(np.float64), minlength=n)
        biggest = np.zeros(n, dtype=np.int64)
        if len(loc):
            np.maximum.at(biggest, loc, late)
        from .display import duration_columns

        mean = np.where(events > 0, total / np.maximum(events, 1), 0.0)
        res = self.trace.timer_resolution
        df = pd.DataFrame({
            "location": np.arange(n),
            "name": [l.name for l in self.trace.locations],
            "rank": [l.rank for l in self.trace.locations],
            "events": events.astype(np.int64),
            "last": np.bincount(loc[is_last], minlength=n).astype(np.int64),
            "late": np.bincount(loc[late > 0], minlength=n).astype(np.int64),
            **duration_columns(self.trace, total.astype(np.int64), "lateness"),
            **duration_columns(self.trace, biggest, "max_lateness"),
            "mean_lateness": mean / res, "mean_lateness_ticks": mean,
        })
        df = df[df["events"] > 0]
        df = df.sort_values(["last", "lateness_ticks", "location"],
                            ascending=[False, False, True], kind="stable").reset_index(drop=True)
        return df.head(top) if top is not None else df

    def to_text(self, top: int = 10) -> str:
        """The steps and the locations late most often, for a terminal."""
        from .readable import location_text

        lines = ["logical time of %s: %d communication events in %d steps%s" % (
            self.trace.path, len(self), self.steps,
            "; %d cycles broken (an inconsistent trace)" % self.cycles_broken
            if self.cycles_broken else "")]
        df = self.late_processes(top)
        if len(df):
            lines.append("  %-18s %8s %8s %8s %14s %14s" % (
                "location", "events", "last", "late", "lateness", "max"))
            for r in df.itertuples():
                lines.append("  %-18s %8d %8d %8d %14s %14s" % (
                    location_text(self.trace, r.location), r.events, r.last, r.late,
                    self._seconds(r.lateness_ticks), self._seconds(r.max_lateness_ticks)))
        return "\n".join(lines)


def logical_time(trace, progress=None) -> LogicalTime:
    """The logical steps and lateness of a trace's communication events."""
    return LogicalTime(trace, progress=progress)


__all__ = ["LogicalTime", "logical_time"]
