"""Counters sampled on their own METRIC locations (GPU power, temperature), drawn as
line panels under a timeline: one panel per metric, one line per location, on the
timeline's time axis.  Counters recorded beside ENTER/LEAVE belong to call paths
(the hwc_ metrics of the analysis) and are not drawn here.

The timeline asks `panels` what to draw before it lays its figure out, then
`draw` fills one axes per panel; nothing else of the timeline is touched."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from ..metrics import metric_locations, samples
from ..timeline import selected_locations
from .style import PROPERTY_COLOURS, location_label, plain

#: panels drawn at most; the others are named in the last panel's note
MAX_PANELS = 4
#: height of one panel in inches
PANEL_HEIGHT = 1.3
#: below this many samples in a line, each sample is marked too
MARK_BELOW = 60


@dataclass
class Panel:
    """One metric: its samples in the window, by location."""

    title: str
    unit: str
    lines: list  # (location, ticks, values)


def panels(trace, first: int, last: int, locations: Optional[Sequence[int]] = None):
    """(panels, names of the metrics left out) for the window [first, last] (ticks)
    of the metric locations among `locations` (None: all of them)."""
    own = metric_locations(trace)
    chosen = np.zeros(len(own), dtype=bool)
    chosen[selected_locations(trace, locations)] = True  # ValueError for an unknown one
    own &= chosen
    if not own.any():
        return [], []
    s = samples(trace)
    keep = own[s.location] & (s.time_ticks >= np.uint64(first)) & (s.time_ticks <= np.uint64(last))
    s = s.select(keep)
    out: List[Panel] = []
    for m in np.unique(s.member_index).tolist():
        mine = s.member_index == m
        lines = []
        for loc in np.unique(s.location[mine]).tolist():
            at = mine & (s.location == loc)
            lines.append((loc, s.time_ticks[at], s.value[at]))
        out.append(Panel(s.names[m], s.units[m], lines))
    return out[:MAX_PANELS], [p.title for p in out[MAX_PANELS:]]


def draw(axes, shown, trace, x) -> None:
    """Fill one axes per panel; x converts ticks to the timeline's axis."""
    for ax, panel in zip(axes, shown):
        for k, (loc, ticks, values) in enumerate(panel.lines):
            ax.plot(x(ticks), values, color=PROPERTY_COLOURS[(k + 1) % len(PROPERTY_COLOURS)],
                    linewidth=1.0, marker="." if len(values) < MARK_BELOW else None,
                    markersize=3, label=plain(location_label(trace.locations[loc])))
        ax.set_ylabel(plain(panel.title + ("\n(%s)" % panel.unit if panel.unit else "")),
                      fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(True, linewidth=0.3, alpha=0.5)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
