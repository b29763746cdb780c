"""Profiles of a trace in a line each, as pipit users know them: the flat profile,
the call tree, the time profile, load imbalance and idle time.

All of them start from what the C core computes in a pass over the events: the
call tree (earl_calltree.h: exclusive ticks and visits per call path and
location), the time profile and the inclusive time per region (earl_profile.h,
from the EARL layer's enter and leave pointers); what is left here is grouping
the small results with numpy and building the DataFrames.  Times follow the
rule of every earlc output (earlc.display): a column `X` in seconds (for a
point in time, from the trace's start), its exact integer ticks beside it in
`X_ticks`.

The Trace methods of the same names call these (docs/python.md shows each beside
the pipit call it replaces).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from . import _core
from .display import duration_columns, time_columns


def _calltree(trace):
    """The call tree of a trace or of a view (each builds it once)."""
    return trace.calltree


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


def _region_width(trace) -> int:
    """One more than the largest defined region ref: the profiles' region rows."""
    return max((r.id for r in trace.regions), default=0) + 1


def _inclusive(trace, per_location: bool) -> np.ndarray:
    """Inclusive ticks of all region instances (a region never left ends at its
    location's last event) per region ref, or per region ref * n_locations +
    location, from the C core (earl_profile_inclusive); of a view, the instances'
    spans clipped to it (_view_inclusive)."""
    if getattr(trace, "is_view", False):
        return _view_inclusive(trace, per_location)
    leaveptr = np.ascontiguousarray(trace.states.leaveptr, dtype=np.int64)
    raw = _core.profile_inclusive(trace._core, leaveptr, _region_width(trace),
                                  per_location=per_location)
    return np.frombuffer(raw, dtype=np.int64)


def _view_instances(view):
    """The region instances of a view: ENTERs open at the window's start or entered
    in it on the view's locations, inside its regions, with their spans clipped to
    the window (a region never left ends at its location's last event): (location,
    region ref, start, end)."""
    from .states import open_regions
    from .events import KINDS

    trace = view.trace
    ev = trace.events
    open_at_start = open_regions(trace, view.location_indices.tolist(), view.lo)[0]
    enters = np.concatenate((np.unique(open_at_start),
                             view.ids[ev.kind[view.ids] == KINDS["ENTER"]]))
    inside = view.cnode_mask()
    if inside is not None and len(enters):
        cn = _calltree(trace).event_cnode[enters].astype(np.int64)
        enters = enters[(cn >= 0) & inside[np.maximum(cn, 0)]]
    time = ev.time.view(np.int64)
    leave = trace.states.gather("leaveptr", enters)
    loc = ev.location[enters].astype(np.int64)
    last_of = np.array([int(ev.of_location(l)[-1]) if len(ev.of_location(l)) else 0
                        for l in range(len(trace.locations))], dtype=np.int64)
    end = np.where(leave >= 0, time[np.maximum(leave, 0)], time[last_of[loc]])
    start = np.maximum(time[enters], view.first)
    end = np.minimum(end, view.last)
    keep = end >= start
    return loc[keep], ev.region_of(enters[keep]).astype(np.int64), start[keep], end[keep]


def _view_inclusive(view, per_location: bool) -> np.ndarray:
    """Inclusive ticks per region (and location) of a view: the instances' spans
    inside the window, summed as _inclusive sums the whole trace's."""
    loc, region, start, end = _view_instances(view)
    width = _region_width(view.trace)
    n_loc = len(view.trace.locations)
    ok = region < width
    key = region[ok] * n_loc + loc[ok] if per_location else region[ok]
    out = np.zeros(width * (n_loc if per_location else 1), dtype=np.int64)
    np.add.at(out, key, (end - start)[ok])
    return out


def flat_profile(trace, per_location: bool = False):
    """One row per region (per region and location with per_location): exclusive
    and inclusive time (`time_exc`, `time_inc` in seconds, `time_exc_ticks`,
    `time_inc_ticks` exact), visits; largest exclusive time first.

    Inclusive time adds every instance's span, so a recursive region counts its
    nested instances again, as pipit's does."""
    import pandas as pd

    ct = _calltree(trace)
    rows, region = _region_rows(trace, ct)
    region = region[rows]
    loc = ct.row_location[rows].astype(np.int64)
    n_loc = len(trace.locations)
    width = _region_width(trace)
    key = region * n_loc + loc if per_location else region
    size = width * n_loc if per_location else width
    exc = np.bincount(key, weights=ct.row_time[rows].astype(np.float64), minlength=size)
    visits = np.bincount(key, weights=ct.row_visits[rows].astype(np.float64), minlength=size)
    inc = _inclusive(trace, per_location)
    # a view may hold a region's time without its ENTER (entered before the window)
    present = np.nonzero((visits > 0) | (exc != 0) | (inc != 0))[0]
    # bincount adds in float64: exact while every sum stays below 2**53 ticks (call
    # tree rows are few); the inclusive sums come exact from the C core
    df = pd.DataFrame({
        "region": _region_names(trace, present // n_loc if per_location else present),
        **duration_columns(trace, exc[present], "time_exc"),
        **duration_columns(trace, inc[present], "time_inc"),
        "visits": visits[present].astype(np.int64)})
    if per_location:
        df.insert(1, "location", present % n_loc)
    return df.sort_values(["time_exc_ticks", "region"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True)


def call_tree(trace):
    """One row per call path: id, parent, depth, region, path, exclusive and
    inclusive time (the subtree's exclusive time; `time_exc`, `time_inc` in seconds
    and `time_exc_ticks`, `time_inc_ticks`) and visits, over all locations."""
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
    return pd.DataFrame({"id": np.arange(n), "parent": parent, "depth": depth,
                         "region": frame_names(paths, parent), "path": paths,
                         **duration_columns(trace, exc, "time_exc"),
                         **duration_columns(trace, inc, "time_inc"), "visits": visits})


def time_profile(trace, bins: int = 50, normalized: bool = False):
    """Exclusive time of each region in each of `bins` equal time bins over the
    trace, summed over locations: a DataFrame with `bin_start`, `bin_end` (seconds
    from the trace's start), `bin_start_ticks`, `bin_end_ticks` (timestamps) and one
    column per region (seconds; with normalized, fractions of the bin's total).

    Between two consecutive events of a location, the time belongs to the region
    the location itself has innermost open; a stretch crossing bin edges is split
    at them (earl_profile_time in the C core does the pass over the events)."""
    import pandas as pd

    if bins < 1:
        raise ValueError("bins must be at least 1")
    width = _region_width(trace)
    if getattr(trace, "is_view", False):  # the view's window, locations and regions
        t0, span = trace.first, max(trace.last - trace.first, 1)
        totals, seen = _view_time_profile(trace, t0, span, bins, width)
    else:
        t0, span = trace.start_time, max(trace.duration_ticks, 1)
        raw, seen = _core.profile_time(trace.states._core, t0, span, bins, width)
        totals = np.frombuffer(raw, dtype=np.int64).reshape(width + 1, bins)
    edges = (np.arange(bins + 1, dtype=np.int64) * span) // bins
    start = time_columns(trace, edges[:-1] + t0, "bin_start")
    end = time_columns(trace, edges[1:] + t0, "bin_end")
    out = {"bin_start": start["bin_start"], "bin_end": end["bin_end"],
           "bin_start_ticks": start["bin_start_ticks"], "bin_end_ticks": end["bin_end_ticks"]}
    bounds = list(out)
    present = np.nonzero(np.frombuffer(seen, dtype=np.uint8))[0]  # the last row: undefined
    regions = {}
    for ref, name in zip(present.tolist(), _region_names(trace, present)):
        regions[name] = regions.get(name, 0) + totals[ref]  # exact ticks, summed by name
    df = pd.DataFrame(out)
    for name, ticks in regions.items():
        df[name] = ticks / trace.timer_resolution
    if normalized:
        cols = [c for c in df.columns if c not in bounds]
        total = df[cols].sum(axis=1).replace(0, 1)
        df[cols] = df[cols].div(total, axis=0)
    return df


def _view_time_profile(view, t0: int, span: int, bins: int, width: int):
    """The time profile of a view: its stretches (analysis/view.py) split at the bin
    edges as earl_profile_time splits the whole trace's, in numpy.  Returns (totals,
    present) as the C kernel does."""
    from .calltree import window_stretches

    tree = _calltree(view.trace)
    cnode, _, start, stop, idle = window_stretches(view, tree)
    cnode, start, stop = cnode[~idle], start[~idle], stop[~idle]
    region = np.minimum(tree.region[cnode].astype(np.int64), width)  # width: undefined row
    edges = t0 + (np.arange(bins + 1, dtype=np.int64) * span) // bins
    b0 = np.clip(np.searchsorted(edges, start, side="right") - 1, 0, bins - 1)
    b1 = np.clip(np.searchsorted(edges, stop, side="left") - 1, 0, bins - 1)
    totals = np.zeros((width + 1, bins), dtype=np.int64)
    same = b0 == b1
    np.add.at(totals, (region[same], b0[same]), (stop - start)[same])
    cross = ~same
    r, s, e, f, g = region[cross], start[cross], stop[cross], b0[cross], b1[cross]
    np.add.at(totals, (r, f), edges[f + 1] - s)  # the first bin's part
    np.add.at(totals, (r, g), e - edges[g])      # the last bin's part
    full = np.zeros((width + 1, bins + 1), dtype=np.int64)  # the bins in between, whole
    np.add.at(full, (r, f + 1), 1)
    np.add.at(full, (r, g), -1)
    totals += np.cumsum(full, axis=1)[:, :bins] * np.diff(edges)[None, :]
    present = np.zeros(width + 1, dtype=np.uint8)
    present[np.unique(region)] = 1
    return totals, present


def load_imbalance(trace, top: int = 1, by: str = "location"):
    """Per region: mean, min and max exclusive time over locations (or ranks with
    by="rank"; in seconds, with `mean_ticks`, `min_ticks`, `max_ticks`), imbalance =
    max / mean, and the `top` locations (ranks) with the most; largest max - mean
    first (where balancing would gain most)."""
    import pandas as pd

    if by not in ("location", "rank"):
        raise ValueError("by must be 'location' or 'rank'")
    flat = flat_profile(trace, per_location=True)
    if by == "rank":
        ranks = np.array([l.rank for l in trace.locations])
        flat["location"] = ranks[flat["location"].to_numpy()]
        flat = flat.groupby(["region", "location"], as_index=False)["time_exc_ticks"].sum()
        units = sorted(set(ranks.tolist()))
    else:
        units = list(range(len(trace.locations)))
    rows = []
    for name, g in flat.groupby("region", sort=True):
        per = dict(zip(g["location"].tolist(), g["time_exc_ticks"].tolist()))
        values = np.array([per.get(u, 0) for u in units], dtype=np.int64)
        mean = values.mean()
        order = np.argsort(-values, kind="stable")[:top]
        res = trace.timer_resolution
        rows.append({"region": name, "mean": mean / res, "min": int(values.min()) / res,
                     "max": int(values.max()) / res,
                     "imbalance": values.max() / mean if mean else 0.0,
                     "top_" + by + "s": [units[k] for k in order.tolist()],
                     "mean_ticks": mean, "min_ticks": int(values.min()),
                     "max_ticks": int(values.max())})
    df = pd.DataFrame(rows)
    if len(df):  # where balancing would gain most first: max - mean
        df = df.iloc[np.argsort(-(df["max_ticks"] - df["mean_ticks"]).to_numpy(),
                                kind="stable")]
    return df.reset_index(drop=True)


def idle_time(trace, mpi: bool = False, regions: Optional[Sequence[str]] = None):
    """Per location: the time between the trace's first and last event during which
    the location had none of its own regions open, plus (mpi=True) the exclusive
    time in MPI calls and the exclusive time in the named `regions`: `idle` in
    seconds, `idle_ticks` exact."""
    import pandas as pd

    t0, t1 = trace.start_time, trace.start_time + trace.duration_ticks
    if getattr(trace, "is_view", False):  # its window; its locations are listed below
        t0, t1 = trace.first, trace.last
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
    df = pd.DataFrame({"location": np.arange(n),
                       "rank": [l.rank for l in trace.locations],
                       "thread": [l.thread for l in trace.locations],
                       **duration_columns(trace, total, "idle")})
    if getattr(trace, "is_view", False):
        df = df.iloc[trace.location_indices].reset_index(drop=True)
    return df
