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
    region = ct.region[ct.row_cnode].astype(np.int64)
    loc = ct.row_location.astype(np.int64)
    n_loc = len(trace.locations)
    width = int(max(region.max(initial=0), max((r.id for r in trace.regions), default=0))) + 1
    key = region * n_loc + loc if per_location else region
    size = width * n_loc if per_location else width
    exc = np.bincount(key, weights=ct.row_time.astype(np.float64), minlength=size)
    visits = np.bincount(key, weights=ct.row_visits.astype(np.float64), minlength=size)
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
    inc = exc.copy()
    for c in range(n - 1, -1, -1):  # children have larger ids than their parents
        if parent[c] >= 0:
            inc[parent[c]] += inc[c]
    depth = np.zeros(n, dtype=np.int64)
    for c in range(n):
        if parent[c] >= 0:
            depth[c] = depth[parent[c]] + 1
    res = trace.timer_resolution
    return pd.DataFrame({"id": np.arange(n), "parent": parent, "depth": depth,
                         "region": _region_names(trace, ct.region), "path": ct.paths(),
                         "time_exc": exc, "time_inc": inc, "visits": visits,
                         "seconds_exc": exc / res, "seconds_inc": inc / res})


def _exclusive_segments(trace):
    """Each stretch of a location's time between two of its events, with the region
    the location itself has innermost open there: (region ref, start, end)."""
    ev = trace.events
    time = ev.time.view(np.int64)
    regions, starts, ends = [], [], []
    enter_k, leave_k = KINDS["ENTER"], KINDS["LEAVE"]
    for loc in range(len(trace.locations)):
        ids = ev.of_location(loc)
        if len(ids) < 2:
            continue
        kind = ev.kind[ids]
        step = np.where(kind == enter_k, 1, np.where(kind == leave_k, -1, 0))
        depth = np.cumsum(step)  # depth after each event, the location's own regions
        # the innermost own region after event k is the last ENTER up to k that
        # left the location at k's depth
        enter_pos = np.nonzero(kind == enter_k)[0]
        level = depth[enter_pos]
        top = np.full(len(ids), -1, dtype=np.int64)
        for d in np.unique(level[level > 0]).tolist():
            at = enter_pos[level == d]
            here = np.nonzero(depth == d)[0]
            idx = np.searchsorted(at, here, side="right") - 1
            top[here] = np.where(idx >= 0, at[np.maximum(idx, 0)], -1)
        seg_region = np.where(top >= 0, ev.region[ids[np.maximum(top, 0)]].astype(np.int64), -1)
        t = time[ids]
        keep = (seg_region[:-1] >= 0) & (t[1:] > t[:-1])
        regions.append(seg_region[:-1][keep])
        starts.append(t[:-1][keep])
        ends.append(t[1:][keep])
    if not regions:
        z = np.empty(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(regions), np.concatenate(starts), np.concatenate(ends)


def time_profile(trace, bins: int = 50, normalized: bool = False):
    """Exclusive time of each region in each of `bins` equal time bins over the
    trace, summed over locations: a DataFrame with bin_start, bin_end (ticks) and
    one column per region (ticks; with normalized, fractions of the bin's total)."""
    import pandas as pd

    if bins < 1:
        raise ValueError("bins must be at least 1")
    region, start, end = _exclusive_segments(trace)
    t0, span = trace.start_time, max(trace.duration_ticks, 1)
    start, end = start - t0, end - t0  # relative: the products below stay far from 2**63
    edges = (np.arange(bins + 1, dtype=np.int64) * span) // bins
    out = {"bin_start": edges[:-1] + t0, "bin_end": edges[1:] + t0}
    names = _region_names(trace, np.unique(region)) if len(region) else []
    for ref, name in zip(np.unique(region).tolist(), names):
        m = region == ref
        s, e = np.sort(start[m]), np.sort(end[m])
        cs, ce = np.concatenate(([0], np.cumsum(s))), np.concatenate(([0], np.cumsum(e)))
        # time of this region before each edge x: sum over stretches of clip(x - s, 0, e - s)
        ks = np.searchsorted(s, edges, side="left")
        ke = np.searchsorted(e, edges, side="left")
        before = (edges * ks - cs[ks]) - (edges * ke - ce[ke])
        out[name] = out.get(name, 0) + np.diff(before)
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
    busy = np.bincount(ct.row_location.astype(np.int64), weights=ct.row_time.astype(np.float64),
                       minlength=n)
    # exclusive time covers the stretches between a location's events inside its own
    # regions; the rest of [t0, t1] is outside all of them
    idle = (t1 - t0) - busy
    extra = np.zeros(n)
    names = set(regions or ())
    if mpi or names:
        reg = ct.region[ct.row_cnode].astype(np.int64)
        wanted = np.zeros(int(reg.max(initial=0)) + 1, dtype=bool)
        for r in trace.regions:
            if r.id < len(wanted) and ((mpi and r.paradigm == "MPI") or r.name in names):
                wanted[r.id] = True
        m = wanted[reg]
        extra = np.bincount(ct.row_location[m].astype(np.int64),
                            weights=ct.row_time[m].astype(np.float64), minlength=n)
    total = (idle + extra).astype(np.int64)
    return pd.DataFrame({"location": np.arange(n),
                         "rank": [l.rank for l in trace.locations],
                         "thread": [l.thread for l in trace.locations],
                         "idle": total, "seconds": total / trace.timer_resolution})
