"""Counter and metric time series as lines under a timeline: one panel per
series name, one line per location, sharing the timeline's time axis.  Every
source gives rows in the shape of `trace.metrics` (location, metric, unit, time,
time_ticks, value; earlc.series), so hardware counters beside regions and
counters of METRIC locations are drawn alike."""
from __future__ import annotations

from typing import Callable, List, Sequence

import numpy as np

from ..series import short_name
from .style import plain

#: panels drawn at most (the others are named in the title)
MAX_PANELS = 4
#: lines per panel with a legend of locations (more: a band of lines)
LEGEND_LINES = 8


def metrics_of(series, first: int, last: int, locations: Sequence[int]) -> List[str]:
    """The series names with a sample in [first, last] on the given locations,
    in order of first appearance."""
    if series is None or not len(series):
        return []
    ticks = series["time_ticks"].to_numpy().astype(np.int64)
    sel = series[(ticks >= first) & (ticks <= last) & series["location"].isin(list(locations))]
    return list(dict.fromkeys(str(m) for m in sel["metric"].tolist()))


def thin(time: np.ndarray, value: np.ndarray, first: int, last: int, pixels: int):
    """At most about 2 points per pixel: the lowest and highest value of each
    pixel, in time order, so peaks survive the thinning."""
    if len(time) <= 2 * pixels:
        return time, value
    px = ((time - first) * pixels // max(last - first, 1)).astype(np.int64)
    order = np.lexsort((value, px))
    px_o = px[order]
    start = np.flatnonzero(np.r_[True, px_o[1:] != px_o[:-1]])
    end = np.r_[start[1:], len(order)] - 1
    keep = np.unique(np.concatenate((order[start], order[end])))
    return time[keep], value[keep]


def draw_series(ax, series, metric: str, first: int, last: int, locations: Sequence[int],
                x: Callable, label_of: Callable, colour_of: Callable, pixels: int) -> int:
    """One panel: the lines of `metric` per location in [first, last]; x converts
    ticks to the axis' unit.  Returns the number of lines drawn."""
    ticks = series["time_ticks"].to_numpy().astype(np.int64)
    sel = series[(series["metric"].astype(str) == metric) & (ticks >= first) & (ticks <= last)]
    unit = next((str(u) for u in sel["unit"].tolist() if u), "") if "unit" in sel else ""
    lines = 0
    for loc in locations:
        mine = sel[sel["location"] == loc]
        if not len(mine):
            continue
        t = mine["time_ticks"].to_numpy().astype(np.int64)
        v = mine["value"].to_numpy(dtype=np.float64)
        order = np.argsort(t, kind="stable")
        t, v = thin(t[order], v[order], first, last, pixels)
        ax.plot(x(t), v, linewidth=0.9, color=colour_of(loc), label=plain(label_of(loc)),
                drawstyle="steps-pre")
        lines += 1
    ax.set_ylabel(plain(short_name(metric, 22) + ("\n(%s)" % unit if unit else "")), fontsize=7)
    from matplotlib.ticker import EngFormatter

    ax.yaxis.set_major_formatter(EngFormatter(sep=""))  # 15G, not an offset text above
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if 0 < lines <= LEGEND_LINES:
        ax.legend(fontsize=6, loc="upper right", frameon=False, ncol=min(lines, 4))
    return lines
