"""Counters as time series: every METRIC record of a trace, one sample per metric
member, as `trace.metrics` (a DataFrame) and as plain numpy columns for pictures.

OTF2 traces carry counters two ways.  Counters recorded beside ENTER and LEAVE on a
thread (PAPI, rusage) belong to call paths: the analysis turns them into `hwc_`
metrics (properties/counters.py).  Counters sampled on their own METRIC locations
(Score-P's metric plugins: GPU power, temperature, node energy) belong to no call
path: they are time series, nothing else, and the timeline draws them under its
rows (earlc.series, plot/series.py).  `metric_locations` tells the two apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

import numpy as np

from . import otf2names
from .events import KINDS

#: OTF2_Base: the scale of a member's values is base ** exponent
_BASES = {0: 2, 1: 10}


@dataclass
class Samples:
    """METRIC samples in the trace's total order (ties: member order in the record).
    Columns of equal length; `names[member_index[i]]` and `units[...]` name the
    metric of sample i."""

    location: np.ndarray      # int32 dense location
    member: np.ndarray        # int64 OTF2 metric member ref (-1: the record's class is undefined)
    member_index: np.ndarray  # int64 index into names / units
    time_ticks: np.ndarray    # uint64
    value: np.ndarray         # float64, in the member's unit
    names: List[str]
    units: List[str]

    def __len__(self) -> int:
        return len(self.location)

    def select(self, keep: np.ndarray) -> "Samples":
        return Samples(self.location[keep], self.member[keep], self.member_index[keep],
                       self.time_ticks[keep], self.value[keep], self.names, self.units)


def metric_locations(trace) -> np.ndarray:
    """Per dense location: True for a location whose counters are time series of
    their own, not values of call paths: an OTF2 METRIC location, or any location
    with METRIC records and no ENTER or LEAVE."""
    n = len(trace.locations)
    own = np.array([loc.type == "METRIC" for loc in trace.locations], dtype=bool)
    ev = trace.events
    if len(ev.metrics):
        loc = ev.location
        kind = ev.kind
        regions = np.bincount(loc[(kind == KINDS["ENTER"]) | (kind == KINDS["LEAVE"])],
                              minlength=n)
        sampled = np.bincount(loc[ev.metrics.event.astype(np.int64)], minlength=n)
        own |= (sampled > 0) & (regions == 0)
    return own


def _member_table(trace):
    """(class ref, slot) -> member ref as a 2-d array (-1 where undefined), and per
    member ref its name, unit and scale."""
    defs = trace._defs
    classes = defs.metric_classes
    width = max((len(m) for _, m in classes), default=0)
    table = np.full((len(classes) + 1, max(width, 1)), -1, dtype=np.int64)
    for ref, (defined, members) in enumerate(classes):
        if defined and members:
            table[ref, :len(members)] = members
    info: Dict[int, tuple] = {}
    for ref, (defined, name, _descr, unit, _vt, _mt, _mode, base, exponent) in \
            enumerate(defs.metric_members):
        if defined:
            scale = float(_BASES.get(base, 10)) ** exponent if exponent else 1.0
            info[ref] = (trace._string(int(name)) or "metric %d" % ref,
                         trace._string(int(unit)) or "", scale)
    return table, info


def samples(trace) -> Samples:
    """Every METRIC record's values, one sample per member, in the total order."""
    ev = trace.events
    m = ev.metrics
    table, info = _member_table(trace)
    if not len(m):
        empty = np.empty(0, dtype=np.int64)
        return Samples(np.empty(0, dtype=np.int32), empty, empty, np.empty(0, dtype=np.uint64),
                       np.empty(0, dtype=np.float64), [], [])
    event = m.event.astype(np.int64)
    order = np.argsort(event, kind="stable")
    event, klass = event[order], m.metric.astype(np.int64)[order]
    first, count = m.first.astype(np.int64)[order], m.n.astype(np.int64)[order]
    rec = np.repeat(np.arange(len(event)), count)
    slot = np.arange(len(rec)) - np.repeat(np.cumsum(count) - count, count)
    at = first[rec] + slot
    raw = ev.metric_values[at]
    types = ev.metric_value_types[at]
    value = raw.astype(np.float64)
    dbl = types == otf2names.TYPE_DOUBLE
    value[dbl] = raw[dbl].view(np.float64)
    i64 = types == otf2names.TYPE_INT64
    value[i64] = raw[i64].view(np.int64).astype(np.float64)
    k = klass[rec]
    inside = (k < table.shape[0] - 1) & (slot < table.shape[1])
    member = np.full(len(rec), -1, dtype=np.int64)
    member[inside] = table[k[inside], slot[inside]]
    # one name per distinct member (an undefined one by its class and slot)
    key = np.where(member >= 0, member, -(k * 256 + slot) - 1)
    keys, member_index = np.unique(key, return_inverse=True)
    names, units, scales = [], [], np.ones(len(keys))
    for j, kk in enumerate(keys.tolist()):
        if kk >= 0 and kk in info:
            name, unit, scales[j] = info[kk]
        elif kk >= 0:
            name, unit = "metric %d" % kk, ""
        else:
            c, s = divmod(-kk - 1, 256)
            name, unit = "undefined metric %d[%d]" % (c, s), ""
        names.append(name)
        units.append(unit)
    value *= scales[member_index]
    return Samples(ev.location[event[rec]], member, member_index.astype(np.int64),
                   ev.time[event[rec]], value, names, units)


def metric_frame(trace):
    """`trace.metrics`: a DataFrame of location, metric, unit, time (seconds from the
    trace start), time_ticks, value; one row per sample, in the total order."""
    import pandas as pd

    from .display import time_columns

    s = samples(trace)
    return pd.DataFrame({
        "location": s.location.astype(np.int64),
        "metric": pd.Categorical.from_codes(s.member_index, categories=s.names)
        if len(set(s.names)) == len(s.names) else np.array(s.names, dtype=object)[s.member_index],
        "unit": np.array(s.units, dtype=object)[s.member_index] if s.units
        else np.empty(0, dtype=object),
        **time_columns(trace, s.time_ticks),  # seconds from the start, and the ticks
        "value": s.value,
    })
