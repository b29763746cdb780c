"""What a person reads: one definition of a time and one way to write values.

Timestamps stay integer ticks everywhere inside earlc.  Where a person reads a
point in time (a text report, JSON, a DataFrame, a picture's axis, the HTML
report), it is in **seconds from the trace's start**, the start being
`trace.start_time`: the timestamp of the trace's first event (for a trace
without events, its clock properties' offset).  JSON and DataFrames give the
raw tick beside it, under the same name with `_ticks` appended:

    time_fields(trace, t)        {"time": 0.001234, "time_ticks": 1234}   (JSON)
    time_columns(trace, ts)      {"time": array, "time_ticks": array}    (DataFrames)
    trace.time_seconds(ts)       the seconds alone (numpy in, numpy out)

Durations (severities, exclusive times) are differences of ticks and follow the
same naming: a column or key `X` in seconds with `X_ticks` beside it.

`format_value` writes a value of a metric's unit as the text report does (and
the HTML report, and every other text output): times with the unit that keeps
three decimals readable (`1.234 s`, `5.678 ms`, `12.345 us`), bytes in binary
multiples (`1.50 KiB`), counts as integers.
"""
from __future__ import annotations

from typing import Dict, Union

import numpy as np

Ticks = Union[int, np.integer, np.ndarray]


def time_seconds(trace, ticks: Ticks):
    """Seconds from the trace's start of timestamps in ticks (a float for a scalar,
    a float64 array for an array).  The difference is taken in integers first, so
    no tick is lost to rounding before the division."""
    res = trace.timer_resolution or 1
    if np.ndim(ticks) == 0:
        return (int(ticks) - int(trace.start_time)) / res
    arr = np.asarray(ticks)
    if arr.dtype == np.uint64:
        arr = arr.view(np.int64)  # timestamps stay below 2**63
    return (arr.astype(np.int64, copy=False) - np.int64(trace.start_time)) / res


def time_fields(trace, ticks: int, name: str = "time") -> Dict[str, object]:
    """{name: seconds from the start, name_ticks: the raw tick} for JSON (None for
    no time)."""
    if ticks is None:
        return {name: None, name + "_ticks": None}
    return {name: time_seconds(trace, int(ticks)), name + "_ticks": int(ticks)}


def time_columns(trace, ticks: np.ndarray, name: str = "time") -> Dict[str, np.ndarray]:
    """{name: seconds from the start, name_ticks: int64 ticks} for a DataFrame."""
    ticks = np.asarray(ticks)
    raw = ticks.view(np.int64) if ticks.dtype == np.uint64 else ticks.astype(np.int64)
    return {name: time_seconds(trace, raw), name + "_ticks": raw}


def duration_columns(trace, ticks: np.ndarray, name: str) -> Dict[str, np.ndarray]:
    """{name: seconds, name_ticks: int64 ticks} of durations for a DataFrame."""
    raw = np.asarray(ticks).astype(np.int64)
    return {name: raw / (trace.timer_resolution or 1), name + "_ticks": raw}


def format_seconds(seconds: float) -> str:
    """'1.234 s', '5.678 ms', '12.345 us' (the unit that keeps three decimals
    readable; below a microsecond still in us)."""
    s = abs(seconds)
    if s >= 1:
        return "%.3f s" % seconds
    if s >= 1e-3:
        return "%.3f ms" % (seconds * 1e3)
    return "%.3f us" % (seconds * 1e6)


def format_bytes(value: int) -> str:
    """'512 B', '1.50 KiB', '2.00 MiB', '3.25 GiB'."""
    for factor, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(value) >= factor:
            return "%.2f %s" % (value / factor, name)
    return "%d B" % value


def format_value(unit: str, value: int, resolution: int) -> str:
    """A value of a metric's unit ("sec": ticks, "bytes", "occ" and others: counts)
    as a person reads it."""
    if unit == "sec":
        return format_seconds(value / (resolution or 1))
    if unit == "bytes":
        return format_bytes(int(value))
    return "%d" % value


def format_time(trace, ticks: int) -> str:
    """A timestamp as seconds from the trace's start, written as format_value
    writes a time ('12.345 us')."""
    return format_seconds(time_seconds(trace, int(ticks)))
