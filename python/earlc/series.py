"""Time series of counters and metrics, as pictures draw them under a timeline.

Every source gives the same shape, a DataFrame with one row per sample:

    location   dense location index (as everywhere in earlc)
    metric     the series' name ("PAPI_TOT_INS /s", "power [W]")
    time       absolute ticks of the trace's timer
    value      float

`counter_series(trace)` reads the hardware counters recorded with the ENTER and
LEAVE events (PAPI and the like, OTF2 METRIC records on a thread's own
location).  A counter recorded as a running total ("accumulated start", what
PAPI counters are) is given as its rate: the increase since the location's
previous sample divided by the time between them, per second, at the later
sample's time; a counter recorded as a point value is given as recorded.
`trace_series(trace)` adds the metrics recorded on locations of their own
(`trace.metrics`, where the trace has them), so a picture draws both through
one function (earlc.plot.series.draw_series).
"""
from __future__ import annotations

import re

import numpy as np

COLUMNS = ("location", "metric", "time", "value")
_ACCUMULATED_START = 0  # OTF2_METRIC_ACCUMULATED_START
_DOUBLE = 10            # OTF2_TYPE_DOUBLE
_INT64, _UINT64 = 8, 4  # OTF2_TYPE_INT64, OTF2_TYPE_UINT64


def _empty():
    import pandas as pd

    return pd.DataFrame({"location": np.empty(0, np.int64), "metric": np.empty(0, object),
                         "time": np.empty(0, np.int64), "value": np.empty(0, np.float64)})


def _values(trace, first: np.ndarray) -> np.ndarray:
    """The recorded values at positions `first` of events.metric_values, as floats."""
    ev = trace.events
    raw = ev.metric_values[first]
    types = ev.metric_value_types[first]
    out = raw.astype(np.float64)  # unsigned
    signed = types == _INT64
    out[signed] = raw[signed].view(np.int64).astype(np.float64)
    double = types == _DOUBLE
    out[double] = raw[double].view(np.float64)
    return out


def counter_series(trace):
    """The hardware counters recorded beside ENTER and LEAVE (see the module's
    docstring) as (location, metric, time, value) rows, ordered by metric,
    location and time."""
    import pandas as pd

    ev = trace.events
    records = ev.metrics
    if not len(records):
        return _empty()
    d = trace._defs
    members, classes = d.metric_members, d.metric_classes
    rec = records.event.astype(np.int64)
    klass = records.metric.astype(np.int64)
    start = records.first.astype(np.int64)
    loc = ev.location[rec].astype(np.int64)
    time = ev.time[rec].astype(np.int64)
    frames = []
    for k in np.unique(klass).tolist():
        if k >= len(classes):
            continue
        mine = np.nonzero(klass == k)[0]
        for slot, member in enumerate(classes[k][1]):
            if member >= len(members):
                continue
            defined, name, _descr, unit, _vtype, _mtype, mode, _base, _exp = members[member]
            if not defined:
                continue
            label = trace._string(int(name)) or "counter %d" % member
            unit_text = trace._string(int(unit)) or ""
            order = mine[np.lexsort((time[mine], loc[mine]))]
            value = _values(trace, start[order] + slot)
            l, t = loc[order], time[order]
            if mode == _ACCUMULATED_START:
                same = l[1:] == l[:-1]
                dt = (t[1:] - t[:-1]).astype(np.float64)
                keep = same & (dt > 0)
                rate = (value[1:] - value[:-1]) / np.where(dt > 0, dt, 1) * trace.timer_resolution
                l, t, value = l[1:][keep], t[1:][keep], rate[keep]
                label += " /s"
            elif unit_text and unit_text != "#":
                label += " [%s]" % unit_text
            frames.append(pd.DataFrame({"location": l, "metric": label, "time": t,
                                        "value": value}))
    if not frames:
        return _empty()
    return pd.concat(frames, ignore_index=True)


def has_series(trace) -> bool:
    """Whether the trace records any counter or metric (cheap: no DataFrame)."""
    own = getattr(trace, "metrics", None)
    return bool(len(trace.events.metrics)) or (own is not None and not callable(own)
                                                 and bool(len(own)))


def trace_series(trace):
    """Every series a trace has: its counters (counter_series) and the metrics on
    locations of their own (trace.metrics, when the trace model offers them)."""
    import pandas as pd

    parts = [counter_series(trace)]
    own = getattr(trace, "metrics", None)
    if own is not None and not callable(own) and len(own):
        parts.append(own[list(COLUMNS)])
    parts = [p for p in parts if len(p)]
    if not parts:
        return _empty()
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def short_name(metric: str, width: int = 28) -> str:
    """A series name short enough for an axis label."""
    name = re.sub(r"\s+", " ", metric).strip()
    return name if len(name) <= width else name[:width - 3] + "..."
