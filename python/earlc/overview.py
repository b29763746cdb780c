"""Levels of detail of a timeline: what a picture of a window can show when the
window holds more region instances and messages than the picture has pixels.

The timeline pictures (earlc.plot) and the HTML page's interactive timeline
(earlc.export.timeline_page) both draw through here; the work is done in C
(csrc/overview, earl_overview.h):

- `activity`: per row (location) and bin (pixel), the activity that took most
  of the location's own time there, as Vampir paints a zoomed-out timeline;
  where idleness won the bin is IDLE, where the location's record does not
  reach it EMPTY;
- `message_bundles`: the messages between two rows whose sends start within a
  few bins of each other as one bundle, drawn as one line whose weight tells
  how many it stands for.

Activities are finer than the kinds of the Perfetto export (earlc.timeline
.DISPLAY_KINDS): the work inside OpenMP parallel regions is told from the
runtime's synchronisation, which is where thread rows wait.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _core
from .analysis import regions as rc

#: what a timeline tells apart, in drawing order (ids are positions here)
ACTIVITIES = ("computation", "omp_work", "mpi_p2p", "mpi_collective", "mpi_other", "omp_sync",
              "omp_other", "overhead", "other")
ACTIVITY_LABELS = {
    "computation": "computation", "omp_work": "OpenMP parallel work",
    "mpi_p2p": "MPI point-to-point", "mpi_collective": "MPI collective",
    "mpi_other": "MPI other", "omp_sync": "OpenMP synchronisation",
    "omp_other": "OpenMP runtime", "overhead": "measurement", "other": "other"}
#: the activity of each region class (analysis.regions.CLASSES)
_ACTIVITY_OF_CLASS = {
    "user": "computation", "mpi_init_finalize": "mpi_other", "mpi_barrier": "mpi_collective",
    "mpi_collective": "mpi_collective", "mpi_p2p": "mpi_p2p", "mpi_other": "mpi_other",
    "omp_parallel": "omp_work", "omp_construct": "omp_work",
    "omp_barrier_explicit": "omp_sync", "omp_barrier_implicit": "omp_sync",
    "omp_critical": "omp_sync", "omp_lock": "omp_sync", "omp_other": "omp_other",
    "other_paradigm": "other", "overhead": "overhead"}
#: bins where idleness won, and bins the location's record does not reach
IDLE, EMPTY = 254, 255


def activity_of_class(region_class: str) -> str:
    """The activity of a region class; classes added later fall in by prefix."""
    found = _ACTIVITY_OF_CLASS.get(region_class)
    if found is not None:
        return found
    if region_class.startswith("mpi"):
        return "mpi_other"
    if region_class.startswith("omp"):
        return "omp_other"
    return "other"


def activity_table(trace) -> np.ndarray:
    """Activity id per region ref (one per definition slot, as the C core counts
    them) and one more entry for undefined refs."""
    cached = getattr(trace, "_overview_activities", None)
    if cached is None:
        n = max(len(trace._defs.regions), max([r.id + 1 for r in trace.regions] + [0]))
        cached = np.full(n + 1, ACTIVITIES.index("other"), dtype=np.uint8)
        for r in trace.regions:
            cached[r.id] = ACTIVITIES.index(activity_of_class(rc.classify(r)))
        trace._overview_activities = cached
    return cached


#: earl_overview_tally (earl_overview.h): per class of one level, the bins it
#: won, its largest share of a bin it did not win, and that bin (row * bins + bin)
TALLY = np.dtype([("won", "<u8", (_core.OVERVIEW_MAX_CLASSES,)),
                  ("best_share", "<f8", (_core.OVERVIEW_MAX_CLASSES,)),
                  ("best_at", "<u8", (_core.OVERVIEW_MAX_CLASSES,))])
assert TALLY.itemsize == _core.OVERVIEW_TALLY_BYTES


def activity(trace, first: int, last: int, rows: Sequence[int], bins, threads: int = 0,
             tallies: bool = False):
    """The dominant activity id of each row's location in each bin of [first, last]
    (absolute ticks, both included), IDLE or EMPTY: a (len(rows), bins) uint8
    array, or for a list of bin counts (levels of detail) a list of them, all
    from one pass over the window's events (threads: 0 one per core; the same
    answer for any number).  tallies: the rows are some of a picture's, painted
    in parts: (the levels, one TALLY per level), no class given a bin it did not
    win (rescue_classes decides that over all the picture's rows)."""
    levels = [int(b) for b in (bins if isinstance(bins, (list, tuple)) else [bins])]
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    raw = _core.overview_activity(trace.states._core, activity_table(trace), len(ACTIVITIES),
                                  rows, int(first), int(last) - int(first) + 1, levels,
                                  threads=int(threads), tallies=tallies)
    if tallies:
        raw, tally = raw
    out = [np.frombuffer(r, dtype=np.uint8).reshape(len(rows), b) for r, b in zip(raw, levels)]
    out = out if isinstance(bins, (list, tuple)) else out[0]
    return (out, np.frombuffer(tally, dtype=TALLY)) if tallies else out


def rescue_classes(tallies: Sequence[np.ndarray]) -> List[Dict[int, int]]:
    """The bins a picture painted in parts gives the classes that won none
    (earl_overview_activity does it for a picture painted at once): from each
    part's TALLY per level, with best_at in the whole picture's row-major
    order, per level {class: best_at} of the classes no part won a bin for, at
    their largest share over the parts (on equal shares, the first bin)."""
    out = []
    for level in zip(*tallies):
        won = np.sum([t["won"] for t in level], axis=0)
        share = np.stack([t["best_share"] for t in level])
        at = np.stack([t["best_at"] for t in level]).astype(np.int64)
        given = {}
        for c in np.nonzero((won == 0) & (share.max(axis=0) > 0))[0].tolist():
            top = share[:, c] == share[:, c].max()
            given[c] = int(at[top, c].min())
        out.append(given)
    return out


def message_bundles(send_time: np.ndarray, recv_time: np.ndarray, src_row: np.ndarray,
                    dst_row: np.ndarray, first: int, last: int, bins: int,
                    bins_per_bundle: int) -> Dict[str, np.ndarray]:
    """The messages (send and receive times in absolute ticks, sender and receiver
    rows) whose sends lie in [first, last], bundled per (sender row, receiver row,
    span of bins_per_bundle bins): int64 columns src, dst, count, send_first,
    send_last, recv_first, recv_last, sorted by (src, dst, span)."""
    raw = _core.overview_messages(
        np.ascontiguousarray(send_time, dtype=np.int64),
        np.ascontiguousarray(recv_time, dtype=np.int64),
        np.ascontiguousarray(src_row, dtype=np.uint32),
        np.ascontiguousarray(dst_row, dtype=np.uint32),
        int(first), int(last) - int(first) + 1, int(bins), int(bins_per_bundle))
    return {k: np.frombuffer(v, dtype=np.int64) for k, v in raw.items()}
