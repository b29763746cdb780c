"""A logical timeline, as Ravel draws one: one row per location, the communication
events at their logical step (earlc.logical) instead of their time, each a box
coloured by its lateness (how much later than the earliest event of its step it
happened), messages as lines from send to receive.  Wall-clock noise disappears;
what stays late stands out in red, step after step.

With more steps than the picture has room for, the boxes are painted as an image:
each pixel column holds a few steps and shows the largest lateness among them."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..events import KINDS
from ..timeline import selected_locations, window_ticks
from .style import location_label, new_figure, plain, rectangles, save, time_unit

#: a row's box height (rows are 1 apart) and the plot area's share of the width
ROW_HEIGHT = 0.8
PLOT_WIDTH = 0.72

#: beyond this many steps on screen the boxes become an image (see the module doc)
RASTER_ABOVE_STEPS = 3000
MAX_MESSAGES = 20000
COLOURS = "YlOrRd"


def plot_logical_timeline(trace, path=None, start: Optional[float] = None,
                          end: Optional[float] = None,
                          locations: Optional[Sequence[int]] = None, logical=None,
                          messages: bool = True, width: float = 12.0):
    """Draw the logical timeline of the communication events in the window [start,
    end] (seconds from the trace start; None: the whole trace) of the selected
    locations; `logical` reuses a trace.logical_time().  Returns the Figure; saves it
    to path."""
    from matplotlib import colormaps
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import Normalize
    from matplotlib.cm import ScalarMappable

    lt = logical if logical is not None else trace.logical_time()
    first, last = window_ticks(trace, start, end)
    sel = selected_locations(trace, locations)
    row_of = np.full(len(trace.locations), -1, dtype=np.int64)
    row_of[sel] = np.arange(len(sel))
    keep = (lt.time >= first) & (lt.time <= last) & (row_of[lt.location] >= 0)
    rows = np.nonzero(keep)[0]
    step, late, loc = lt.step[rows], lt.lateness[rows], lt.location[rows]
    n_rows = max(len(sel), 1)
    fig = new_figure(width, min(2.0 + 0.35 * n_rows, 40.0))
    ax = fig.add_subplot(1, 1, 1)
    lo = int(step.min()) if len(step) else 0
    hi = int(step.max()) + 1 if len(step) else 1
    # the colour scale ends at the 99th percentile: a few outliers would otherwise
    # leave everything else the palest colour
    positive = late[late > 0]
    top = float(np.percentile(positive, 99)) if len(positive) else 1.0
    top = max(top, 1.0)
    factor, unit = time_unit(top / trace.timer_resolution)
    norm = Normalize(vmin=0, vmax=top * factor / trace.timer_resolution)
    cmap = colormaps[COLOURS]
    value = late * factor / trace.timer_resolution
    y = row_of[loc].astype(np.float64)
    notes = []
    raster = hi - lo > RASTER_ABOVE_STEPS
    if raster:
        pixels = int(width * fig.dpi * PLOT_WIDTH)
        col = ((step - lo) * pixels // max(hi - lo, 1)).astype(np.int64)
        cell = row_of[loc] * pixels + col
        grid = np.full(n_rows * pixels, -1.0)
        np.maximum.at(grid, cell, value)
        rgba = cmap(norm(np.maximum(grid, 0)))
        rgba[grid < 0] = (0, 0, 0, 0)
        ax.imshow(rgba.reshape(n_rows, pixels, 4), extent=(lo - 0.5, hi - 0.5, n_rows - 0.5,
                                                           -0.5),
                  aspect="auto", interpolation="nearest", zorder=0)
        notes.append("%d steps per pixel column, the latest of them" %
                     max(1, (hi - lo) // pixels))
    else:
        ax.add_collection(PolyCollection(
            rectangles(step - 0.4, step + 0.4, y - ROW_HEIGHT / 2, y + ROW_HEIGHT / 2),
            facecolors=cmap(norm(value)), edgecolors="#555555", linewidths=0.3))
    if messages and not raster:
        ev = trace.events
        st = trace.states
        recv_kinds = np.isin(ev.kind[lt.events[rows]], (KINDS["MPI_RECV"], KINDS["MPI_IRECV"]))
        recv = rows[recv_kinds]
        send = st.gather("sendptr", lt.events[recv])
        pos = np.searchsorted(lt.events, send)
        ok = (send >= 0) & (pos < len(lt.events))
        ok[ok] &= lt.events[pos[ok]] == send[ok]
        ok[ok] &= keep[pos[ok]]
        recv, send_row = recv[ok], pos[ok]
        if len(recv) > MAX_MESSAGES:
            notes.append("%d of %d messages" % (MAX_MESSAGES, len(recv)))
            pick = np.linspace(0, len(recv) - 1, MAX_MESSAGES).astype(np.int64)
            recv, send_row = recv[pick], send_row[pick]
        if len(recv):
            seg = np.stack([np.stack([lt.step[send_row], row_of[lt.location[send_row]]], axis=1),
                            np.stack([lt.step[recv], row_of[lt.location[recv]]], axis=1)],
                           axis=1).astype(np.float64)
            ax.add_collection(LineCollection(seg, colors="black", linewidths=0.6, alpha=0.7))
    ax.set_xlim(lo - 0.5, hi - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_yticks(range(len(sel)))
    ax.set_yticklabels([plain(location_label(trace.locations[int(l)])) for l in sel])
    ax.set_xlabel("logical step")
    ax.set_title(plain("%s: logical time, %d communication events in steps %d-%d%s"
                       % (trace.path, len(rows), lo, hi - 1,
                          "; " + ", ".join(notes) if notes else "")), fontsize=9)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, fraction=0.04, pad=0.02,
                       extend="max" if len(positive) and positive.max() > top else "neither")
    bar.set_label("lateness (%s after the earliest event of the step)" % unit, fontsize=8)
    label_width = max([len(location_label(trace.locations[int(l)])) for l in sel] + [6])
    left = min(0.04 + 0.0075 * label_width * 12.0 / width, 0.3)
    fig.subplots_adjust(left=left, right=0.95, bottom=0.5 / fig.get_figheight() + 0.05,
                        top=1 - 0.4 / fig.get_figheight())
    save(fig, path)
    return fig
