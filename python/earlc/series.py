"""Time series of counters and metrics, as pictures draw them under a timeline.

Every source gives the shape of `trace.metrics` (earlc.metrics), a DataFrame with
one row per sample:

    location    dense location index (as everywhere in earlc)
    metric      the series' name ("PAPI_TOT_INS /s", "power")
    unit        its unit ("" when none)
    time        seconds from the trace's start
    time_ticks  absolute ticks of the trace's timer
    value       float

so one function draws any of them (earlc.plot.series.draw_series).  A trace
carries counters two ways:

- counters recorded beside ENTER and LEAVE on a thread (PAPI, rusage): recorded
  as a running total ("accumulated start"), they are given as their rate, the
  increase since the location's previous sample per second, at the later
  sample's time (`counter_series`); recorded as point values, as recorded;
- counters sampled on METRIC locations of their own (GPU power, temperature):
  `trace.metrics` on those locations, as recorded.

`trace_series(trace)` gives both.
"""
from __future__ import annotations

import re

import numpy as np

from .metrics import metric_locations, samples

COLUMNS = ("location", "metric", "unit", "time", "time_ticks", "value")
_ACCUMULATED_START = 0  # OTF2_METRIC_ACCUMULATED_START


def _frame(trace, location, metric, unit, ticks, value):
    import pandas as pd

    ticks = np.asarray(ticks, dtype=np.int64)
    return pd.DataFrame({"location": np.asarray(location, dtype=np.int64),
                         "metric": np.asarray(metric, dtype=object),
                         "unit": np.asarray(unit, dtype=object),
                         "time": (ticks - trace.start_time) / trace.timer_resolution,
                         "time_ticks": ticks.astype(np.uint64),
                         "value": np.asarray(value, dtype=np.float64)})


def has_series(trace) -> bool:
    """Whether the trace records any counter or metric (cheap: no DataFrame)."""
    return bool(len(trace.events.metrics))


def _modes(trace):
    """Per metric member name: its OTF2 metric mode."""
    out = {}
    for defined, name, _d, _u, _vt, _mt, mode, _b, _e in trace._defs.metric_members:
        if defined:
            out[trace._string(int(name)) or ""] = mode
    return out


def counter_series(trace):
    """The counters recorded beside ENTER and LEAVE (see the module's docstring),
    running totals as rates per second."""
    s = samples(trace)
    beside = ~metric_locations(trace)
    keep = beside[s.location] if len(s) else np.zeros(0, dtype=bool)
    s = s.select(keep)
    modes = _modes(trace)
    loc_all, name_all, unit_all, t_all, v_all = [], [], [], [], []
    for m in np.unique(s.member_index).tolist():
        mine = np.nonzero(s.member_index == m)[0]
        order = mine[np.lexsort((s.time_ticks[mine], s.location[mine]))]
        loc = s.location[order].astype(np.int64)
        t = s.time_ticks[order].astype(np.int64)
        v = s.value[order]
        name, unit = s.names[m], s.units[m]
        if modes.get(name) == _ACCUMULATED_START:
            same = loc[1:] == loc[:-1]
            dt = (t[1:] - t[:-1]).astype(np.float64)
            ok = same & (dt > 0)
            rate = (v[1:] - v[:-1]) / np.where(dt > 0, dt, 1) * trace.timer_resolution
            loc, t, v = loc[1:][ok], t[1:][ok], rate[ok]
            name, unit = name + " /s", ("%s/s" % unit) if unit and unit != "#" else ""
        loc_all.append(loc)
        t_all.append(t)
        v_all.append(v)
        name_all.append(np.full(len(loc), name, dtype=object))
        unit_all.append(np.full(len(loc), "" if unit == "#" else unit, dtype=object))
    if not loc_all:
        return _frame(trace, [], [], [], [], [])
    return _frame(trace, *(np.concatenate(x) for x in (loc_all, name_all, unit_all, t_all,
                                                       v_all)))


def location_series(trace):
    """The counters sampled on METRIC locations of their own, as recorded."""
    s = samples(trace)
    own = metric_locations(trace)
    s = s.select(own[s.location] if len(s) else np.zeros(0, dtype=bool))
    names = np.array(s.names, dtype=object)
    units = np.array(s.units, dtype=object)
    return _frame(trace, s.location, names[s.member_index] if len(s) else [],
                  units[s.member_index] if len(s) else [], s.time_ticks, s.value)


def trace_series(trace):
    """Every series a trace has: its counters beside regions (counter_series) and
    those of its METRIC locations (location_series)."""
    import pandas as pd

    if not has_series(trace):
        return _frame(trace, [], [], [], [], [])
    parts = [f for f in (counter_series(trace), location_series(trace)) if len(f)]
    if not parts:
        return _frame(trace, [], [], [], [], [])
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def short_name(metric: str, width: int = 28) -> str:
    """A series name short enough for an axis label."""
    name = re.sub(r"\s+", " ", str(metric)).strip()
    return name if len(name) <= width else name[:width - 3] + "..."
