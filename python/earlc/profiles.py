"""Profiles of a trace in a line each, as pipit users know them: the flat profile,
the call tree, the time profile, load imbalance and idle time.

All of them start from the call tree the C core builds in one pass (earl_calltree.h:
exclusive ticks and visits per call path and location) and from the EARL layer's
enter/leave pointers; what is left here is grouping with numpy.  Times are exact
integer ticks, with a seconds column beside them for reading.

The Trace methods of the same names call these (docs/python.md shows each beside
the pipit call it replaces).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .events import KINDS


def _calltree(trace):
    """The call tree of trace, built once and kept on it."""
    tree = getattr(trace, "_profile_calltree", None)
    if tree is None:
        from .analysis.context import CallTree

        tree = CallTree(trace, trace.states.enterptr)
        trace._profile_calltree = tree
    return tree


def depth_first_order(parents) -> np.ndarray:
    """Call path ids in depth-first order, each parent before its children, children
    in id order; whatever order the ids were given in (a program root, say, may be
    numbered after the paths it holds)."""
    parents = np.asarray(parents, dtype=np.int64)
    kids = [[] for _ in range(len(parents))]
    roots = []
    for c, p in enumerate(parents.tolist()):
        (kids[p] if p >= 0 else roots).append(c)
    order = []
    stack = list(reversed(roots))
    while stack:  # iterative: call trees can be deeper than Python's recursion limit
        c = stack.pop()
        order.append(c)
        stack.extend(reversed(kids[c]))
    return np.asarray(order, dtype=np.int64)


def frame_names(paths, parents) -> list:
    """The last frame of every call path, cut from its path after its parent's: a
    region's name, or the name of a node that is no region (the program)."""
    return [path if p < 0 else path[len(paths[p]) + 1:]
            for path, p in zip(paths, np.asarray(parents).tolist())]


def _region_rows(trace, ct):
    """(mask of the call tree's rows whose call path is an OTF2 region, their region
    refs): profiles are about regions; a call path that is none (the program at
    the root of the call tree) is left out of them."""
    region = ct.region[ct.row_cnode].astype(np.int64)
    defined = np.zeros(max((r.id for r in trace.regions), default=-1) + 1, dtype=bool)
    for r in trace.regions:
        defined[r.id] = True
    mask = (region >= 0) & (region < len(defined))
    mask[mask] = defined[region[mask]]
    return mask, region


def _region_names(trace, refs: np.ndarray) -> list:
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


def flat_profile(trace, per_location: bool = False):
    """One row per region (per region and location with per_location): exclusive
    and inclusive ticks, visits, seconds; largest exclusive time first.

    Inclusive time adds every instance's span, so a recursive region counts its
    nested instances again, as pipit's does."""
    import pandas as pd

    ct = _calltree(trace)
    rows, region = _region_rows(trace, ct)
    region = region[rows]
    loc = ct.row_location[rows].astype(np.int64)
    n_loc = len(trace.locations)
    width = max((r.id for r in trace.regions), default=0) + 1
    key = region * n_loc + loc if per_location else region
    size = width * n_loc if per_location else width
    exc = np.bincount(key, weights=ct.row_time[rows].astype(np.float64), minlength=size)
    visits = np.bincount(key, weights=ct.row_visits[rows].astype(np.float64), minlength=size)
    ireg, iticks, iloc = _inclusive_by_region(trace)
    ikey = ireg * n_loc + iloc if per_location else ireg
    inc = np.bincount(ikey, weights=iticks.astype(np.float64), minlength=size)
    present = np.nonzero(visits > 0)[0]
    # bincount adds in float64: exact while every sum stays below 2**53 ticks
    df = pd.DataFrame({
        "region": _region_names(trace, present // n_loc if per_location else present),
        "time_exc": exc[present].astype(np.int64), "time_inc": inc[present].astype(np.int64),
        "visits": visits[present].astype(np.int64)})
    if per_location:
        df.insert(1, "location", present % n_loc)
    res = trace.timer_resolution
    df["seconds_exc"] = df["time_exc"] / res
    df["seconds_inc"] = df["time_inc"] / res
    return df.sort_values(["time_exc", "region"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True)


def call_tree(trace):
    """One row per call path: id, parent, depth, region, path, exclusive and
    inclusive ticks (the subtree's exclusive time) and visits, over all locations."""
    import pandas as pd

    ct = _calltree(trace)
    n = len(ct)
    cn = ct.row_cnode.astype(np.int64)
    exc = np.bincount(cn, weights=ct.row_time.astype(np.float64), minlength=n).astype(np.int64)
    visits = np.bincount(cn, weights=ct.row_visits.astype(np.float64), minlength=n).astype(np.int64)
    parent = ct.parent.astype(np.int64)
    order = depth_first_order(parent)
    inc = exc.copy()
    for c in order[::-1].tolist():  # children before their parents
        if parent[c] >= 0:
            inc[parent[c]] += inc[c]
    depth = np.zeros(n, dtype=np.int64)
    for c in order.tolist():  # parents before their children
        if parent[c] >= 0:
            depth[c] = depth[parent[c]] + 1
    paths = ct.paths()
    res = trace.timer_resolution
    return pd.DataFrame({"id": np.arange(n), "parent": parent, "depth": depth,
                         "region": frame_names(paths, parent), "path": paths,
                         "time_exc": exc, "time_inc": inc, "visits": visits,
                         "seconds_exc": exc / res, "seconds_inc": inc / res})


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


def time_profile(trace, bins: int = 50, normalized: bool = False):
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
    for ref, name in zip(present.tolist(), _region_names(trace, present)):
        out[name] = out.get(name, 0) + totals[ref]
    df = pd.DataFrame(out)
    if normalized:
        cols = [c for c in df.columns if c not in ("bin_start", "bin_end")]
        total = df[cols].sum(axis=1).replace(0, 1)
        df[cols] = df[cols].div(total, axis=0)
    return df


def load_imbalance(trace, top: int = 1, by: str = "location"):
    """Per region: mean, min and max exclusive ticks over locations (or ranks with
    by="rank"), imbalance = max / mean, and the `top` locations (ranks) with the
    most; largest imbalance times mean first (where balancing would gain most)."""
    import pandas as pd

    if by not in ("location", "rank"):
        raise ValueError("by must be 'location' or 'rank'")
    flat = flat_profile(trace, per_location=True)
    if by == "rank":
        ranks = np.array([l.rank for l in trace.locations])
        flat["location"] = ranks[flat["location"].to_numpy()]
        flat = flat.groupby(["region", "location"], as_index=False)["time_exc"].sum()
        units = sorted(set(ranks.tolist()))
    else:
        units = list(range(len(trace.locations)))
    rows = []
    for name, g in flat.groupby("region", sort=True):
        per = dict(zip(g["location"].tolist(), g["time_exc"].tolist()))
        values = np.array([per.get(u, 0) for u in units], dtype=np.int64)
        mean = values.mean()
        order = np.argsort(-values, kind="stable")[:top]
        rows.append({"region": name, "mean": mean, "min": int(values.min()),
                     "max": int(values.max()), "imbalance": values.max() / mean if mean else 0.0,
                     "top_" + by + "s": [units[k] for k in order.tolist()]})
    df = pd.DataFrame(rows)
    if len(df):  # where balancing would gain most first: max - mean
        df = df.iloc[np.argsort(-(df["max"] - df["mean"]).to_numpy(), kind="stable")]
    return df.reset_index(drop=True)


def idle_time(trace, mpi: bool = False, regions: Optional[Sequence[str]] = None):
    """Per location: ticks between the trace's first and last event during which
    the location had none of its own regions open, plus (mpi=True) the exclusive
    time in MPI calls and the exclusive time in the named `regions`."""
    import pandas as pd

    t0, t1 = trace.start_time, trace.start_time + trace.duration_ticks
    ct = _calltree(trace)
    n = len(trace.locations)
    rows, reg = _region_rows(trace, ct)
    busy = np.bincount(ct.row_location[rows].astype(np.int64),
                       weights=ct.row_time[rows].astype(np.float64), minlength=n)
    # exclusive time covers the stretches between a location's events inside its own
    # regions; the rest of [t0, t1] is outside all of them
    idle = (t1 - t0) - busy
    extra = np.zeros(n)
    names = set(regions or ())
    if mpi or names:
        wanted = np.zeros(max((r.id for r in trace.regions), default=-1) + 1, dtype=bool)
        for r in trace.regions:
            if (mpi and r.paradigm == "MPI") or r.name in names:
                wanted[r.id] = True
        m = rows.copy()
        m[m] = wanted[reg[m]]
        extra = np.bincount(ct.row_location[m].astype(np.int64),
                            weights=ct.row_time[m].astype(np.float64), minlength=n)
    total = (idle + extra).astype(np.int64)
    return pd.DataFrame({"location": np.arange(n),
                         "rank": [l.rank for l in trace.locations],
                         "thread": [l.thread for l in trace.locations],
                         "idle": total, "seconds": total / trace.timer_resolution})
