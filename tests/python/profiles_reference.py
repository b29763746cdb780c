"""The profiles' event passes as they were written in numpy before the C core
did them (earl_profile.h): the reference the C results are compared with
(tests/python/test_profiles_c.py).  Slow on big traces, plain to read."""
import numpy as np

from earlc.events import KINDS


def region_names(trace, refs):
    names = trace._region_name_array()
    refs = np.minimum(np.asarray(refs, dtype=np.int64), len(names) - 1)
    return [n if n is not None else "?" for n in names[refs].tolist()]


def _inclusive_by_region(trace):
    """(region refs of all ENTERs, their inclusive ticks; a region never left ends at
    the location's last event)."""
    ev = trace.events
    enters = np.nonzero(ev.kind == KINDS["ENTER"])[0]
    leave = trace.states.leaveptr[enters]
    time = ev.time.view(np.int64)
    end = np.empty(len(enters), dtype=np.int64)
    closed = leave >= 0
    end[closed] = time[leave[closed]]
    if (~closed).any():
        last_of = np.array([time[ev.of_location(l)[-1]] if len(ev.of_location(l)) else 0
                            for l in range(len(trace.locations))], dtype=np.int64)
        end[~closed] = last_of[ev.location[enters[~closed]]]
    return ev.region[enters].astype(np.int64), end - time[enters], ev.location[enters]


def _exclusive_segments(trace):
    """Each stretch of a location's time between two of its events, with the region
    the location itself has innermost open there: (region ref, start, end)."""
    ev = trace.events
    st = trace.states
    time = ev.time.view(np.int64)
    kind = ev.kind
    # the ENTER of the innermost own region open just after each event: the event
    # itself for an ENTER, the enclosing one of its own ENTER for a LEAVE, else the
    # enclosing instance; a master's frame (inherited by a worker thread) is none
    enterptr = st.enterptr
    active = enterptr.copy()
    is_enter = kind == KINDS["ENTER"]
    active[is_enter] = np.nonzero(is_enter)[0]
    leaves = np.nonzero(kind == KINDS["LEAVE"])[0]
    own = enterptr[leaves]
    active[leaves] = np.where(own >= 0, enterptr[np.maximum(own, 0)], -1)
    loc = ev.location
    has = active >= 0
    has[has] = loc[active[has]] == loc[has]
    # consecutive events of one location: ev.loc_events lists them location by location
    ids = ev.loc_events
    same = loc[ids[1:]] == loc[ids[:-1]]
    first, second = ids[:-1][same], ids[1:][same]
    keep = has[first]
    first, second = first[keep], second[keep]
    start, end = time[first], time[second]
    nonempty = end > start
    first, start, end = first[nonempty], start[nonempty], end[nonempty]
    return ev.region[active[first]].astype(np.int64), start, end


def time_profile(trace, bins: int = 50):
    """Exclusive time of each region in each of `bins` equal time bins over the
    trace, summed over locations: a DataFrame with bin_start, bin_end (ticks) and
    one column per region (ticks; with normalized, fractions of the bin's total)."""
    import pandas as pd

    if bins < 1:
        raise ValueError("bins must be at least 1")
    region, start, end = _exclusive_segments(trace)
    t0, span = trace.start_time, max(trace.duration_ticks, 1)
    start, end = start - t0, end - t0
    edges = (np.arange(bins + 1, dtype=np.int64) * span) // bins
    b0 = np.clip(np.searchsorted(edges, start, side="right") - 1, 0, bins - 1)
    b1 = np.clip(np.searchsorted(edges, end, side="left") - 1, 0, bins - 1)
    width = int(region.max(initial=-1)) + 1
    totals = np.zeros(width * bins)
    inside = b0 >= b1  # most stretches lie in one bin
    totals += np.bincount(region[inside] * bins + b0[inside],
                          weights=(end[inside] - start[inside]).astype(np.float64),
                          minlength=width * bins)
    # the few that cross bin edges: one piece per bin they touch
    cross = np.nonzero(~inside)[0]
    if len(cross):
        count = b1[cross] - b0[cross] + 1
        seg = np.repeat(cross, count)
        offset = np.arange(len(seg)) - np.repeat(np.cumsum(count) - count, count)
        b = b0[seg] + offset
        piece = np.minimum(end[seg], edges[b + 1]) - np.maximum(start[seg], edges[b])
        totals += np.bincount(region[seg] * bins + b, weights=piece.astype(np.float64),
                              minlength=width * bins)
    # bincount adds in float64: exact while a bin's total stays below 2**53 ticks
    totals = totals.reshape(width, bins).astype(np.int64)
    out = {"bin_start": edges[:-1] + t0, "bin_end": edges[1:] + t0}
    present = np.unique(region)
    for ref, name in zip(present.tolist(), region_names(trace, present)):
        out[name] = out.get(name, 0) + totals[ref]
    df = pd.DataFrame(out)
    return df


def inclusive(trace, per_location):
    """Inclusive ticks per region ref (per region ref * n_locations + location),
    as flat_profile summed them with numpy."""
    n_loc = len(trace.locations)
    width = max((r.id for r in trace.regions), default=0) + 1
    size = width * n_loc if per_location else width
    ireg, iticks, iloc = _inclusive_by_region(trace)
    ikey = ireg * n_loc + iloc if per_location else ireg
    return np.bincount(ikey, weights=iticks.astype(np.float64), minlength=size)[:size] \
        .astype(np.int64)
