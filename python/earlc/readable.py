"""Short texts of locations and events for the outputs of the workflow commands
(check, annotate, compare, logical time).  Times are written as every earlc output
writes them (earlc.display): a moment in seconds from the trace's start, a duration
with the unit that keeps three decimals readable."""
from __future__ import annotations

from .display import format_seconds, format_time, format_value

#: a duration in seconds as text ('12.345 us'), as every earlc output writes it
seconds_text = format_seconds


def ticks_text(trace, ticks: int) -> str:
    """A duration in ticks ('486.000 ns' is written '0.486 us')."""
    return format_value("sec", int(ticks), trace.timer_resolution)


def moment_text(trace, time: int) -> str:
    """An absolute timestamp (ticks) as seconds from the trace's start."""
    return format_time(trace, int(time))


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
