"""A Vampir-like timeline of a window: one row per location, each region instance
a bar in its kind's colour (inner regions drawn over outer ones, so a row shows
what the location is doing at each moment), messages as lines from send to
receive, and the wait states the analysis found outlined and lightly filled in
their property's colour.

Everything is drawn as three collections (bars, wait states, messages), so the
cost grows with the number of pieces but not with a Python loop over them."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..timeline import DISPLAY_KINDS, Window, display_kinds, window_ticks
from .style import (KIND_COLOURS, KIND_LABELS, PROPERTY_COLOURS, location_label, new_figure,
                    plain, save, time_unit)

ROW_HEIGHT = 0.8


def _rectangles(x0, x1, y0, height):
    """Vertices (n, 4, 2) of axis-aligned rectangles."""
    n = len(x0)
    v = np.empty((n, 4, 2))
    v[:, 0, 0] = v[:, 3, 0] = x0
    v[:, 1, 0] = v[:, 2, 0] = x1
    v[:, 0, 1] = v[:, 1, 1] = y0
    v[:, 2, 1] = v[:, 3, 1] = y0 + height
    return v


def plot_timeline(trace, path=None, start: Optional[float] = None, end: Optional[float] = None,
                  locations: Optional[Sequence[int]] = None, report=None,
                  wait_states: bool = True, messages: bool = True, width: float = 12.0):
    """Draw the window [start, end] (seconds from the trace start; None: whole
    trace) of the selected locations; wait states from report (or a fresh
    analysis when wait_states is true).  Returns the Figure; saves it to path."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import Patch

    first, last = window_ticks(trace, start, end)
    win = Window(trace, first, last, locations)
    rows = {loc: k for k, loc in enumerate(win.locations.tolist())}
    n_rows = max(len(rows), 1)
    fig = new_figure(width, min(2.0 + 0.35 * n_rows, 40.0))
    ax = fig.add_subplot(1, 1, 1)
    t0 = trace.start_time
    span = max(last - first, 1) / trace.timer_resolution
    factor, unit = time_unit(span)
    scale = factor / trace.timer_resolution

    def x(ticks):
        return (np.asarray(ticks, dtype=np.int64) - t0) * scale

    slices = win.slices()
    kinds = display_kinds(trace)
    order = np.argsort(slices.depth, kind="stable")  # inner regions over outer ones
    kind = kinds[np.minimum(slices.region[order], len(kinds) - 1)]
    row = np.array([rows[l] for l in slices.location[order].tolist()], dtype=np.float64)
    colours = np.array([KIND_COLOURS[k] for k in DISPLAY_KINDS])[kind]
    bars = PolyCollection(_rectangles(x(slices.start[order]), x(slices.end[order]),
                                      row - ROW_HEIGHT / 2, ROW_HEIGHT),
                          facecolors=colours, edgecolors="none", linewidths=0,
                          antialiaseds=False)  # bars meet exactly; smoothing costs time
    ax.add_collection(bars)
    legend = [Patch(facecolor=KIND_COLOURS[k], label=KIND_LABELS[k])
              for k in sorted(set(DISPLAY_KINDS[i] for i in np.unique(kind).tolist()),
                              key=DISPLAY_KINDS.index)]

    if wait_states:
        if report is None:
            from ..analysis import analyze

            report = analyze(trace)
        waits = win.wait_states(report)
        if len(waits):
            wrow = np.array([rows[l] for l in waits.location.tolist()], dtype=np.float64)
            prop_colour = [PROPERTY_COLOURS[k % len(PROPERTY_COLOURS)]
                           for k in range(len(waits.names))]
            # outlined and lightly filled in the property's colour: hatching costs a
            # second per few thousand rectangles in Agg
            edge = [prop_colour[k] for k in waits.prop.tolist()]
            ax.add_collection(PolyCollection(
                _rectangles(x(waits.start), x(waits.end), wrow - ROW_HEIGHT / 2, ROW_HEIGHT),
                facecolors=[c + "59" for c in edge], edgecolors=edge, linewidths=1.2,
                antialiaseds=False))
            legend += [Patch(facecolor=prop_colour[k] + "59", edgecolor=prop_colour[k],
                             label=plain(title)) for k, title in enumerate(waits.titles)]
    if messages:
        msgs = win.messages()
        if len(msgs):
            src = np.array([rows[l] for l in msgs.src.tolist()], dtype=np.float64)
            dst = np.array([rows[l] for l in msgs.dst.tolist()], dtype=np.float64)
            seg = np.stack([np.stack([x(msgs.send_time), src], axis=1),
                            np.stack([x(msgs.recv_time), dst], axis=1)], axis=1)
            ax.add_collection(LineCollection(seg, colors="black", linewidths=0.6, alpha=0.8))
            legend.append(Patch(facecolor="black", label="message"))

    ax.set_xlim(x(first), x(last) if last > first else x(first) + 1)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([plain(location_label(trace.locations[l])) for l in rows])
    ax.set_xlabel("time from the trace start (%s)" % unit)
    ax.set_title(plain("%s: %d region instances, window %.6g-%.6g %s"
                       % (trace.path, len(slices), x(first), x(last), unit)), fontsize=9)
    if legend:
        ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
    # fixed margins: tight_layout would draw the whole figure once more to measure it
    label_width = max([len(location_label(trace.locations[l])) for l in rows] + [6])
    fig.subplots_adjust(left=min(0.04 + 0.0075 * label_width * 12.0 / width, 0.3), right=0.8,
                        bottom=0.5 / fig.get_figheight() + 0.05, top=1 - 0.4 / fig.get_figheight())
    save(fig, path)
    return fig
