"""Short readable texts of times, locations and events, shared by the outputs of the
workflow commands (check, annotate, compare, logical time): a time a person reads is
in seconds (from the trace's start where it is a moment), with the unit that keeps
three significant digits."""
from __future__ import annotations


def seconds_text(seconds: float) -> str:
    """'1.234 s', '12.345 ms', '3.000 us', '40 ns'."""
    a = abs(seconds)
    if a >= 1 or a == 0:
        return "%.3f s" % seconds
    if a >= 1e-3:
        return "%.3f ms" % (seconds * 1e3)
    if a >= 1e-6:
        return "%.3f us" % (seconds * 1e6)
    return "%.0f ns" % (seconds * 1e9)


def ticks_text(trace, ticks: int) -> str:
    """A duration in ticks, as seconds_text."""
    return seconds_text(ticks / trace.timer_resolution)


def moment_text(trace, time: int) -> str:
    """An absolute timestamp (ticks) as seconds from the trace's start."""
    return seconds_text((int(time) - trace.start_time) / trace.timer_resolution)


def location_text(trace, index: int) -> str:
    """'rank 3', 'rank 3 thread 1', or the location's name when it is no MPI rank."""
    loc = trace.locations[int(index)]
    if loc.rank is not None and loc.rank >= 0:
        return "rank %d" % loc.rank + (" thread %d" % loc.thread if loc.thread and loc.thread > 0
                                       else "")
    return loc.name or "location %d" % loc.index


def event_text(trace, e: int) -> str:
    """'#45 MPI_SEND on rank 2 at 455.000 us'."""
    from .events import KIND_NAMES

    ev = trace.events
    return "#%d %s on %s at %s" % (int(e), KIND_NAMES[int(ev.kind[e])],
                                   location_text(trace, int(ev.location[e])),
                                   moment_text(trace, int(ev.time[e])))
