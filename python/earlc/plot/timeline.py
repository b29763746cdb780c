"""A Vampir-like timeline of a window: one row per location, each region instance
a bar in its kind's colour (inner regions drawn over outer ones, so a row shows
what the location is doing at each moment), messages as lines from send to
receive, and the wait states the analysis found outlined and lightly filled in
their property's colour.  Counters sampled on METRIC locations are line panels
under the rows (metric_panels.py), not rows of their own.

Everything is drawn as three collections (bars, wait states, messages), so the
cost grows with the number of pieces but not with a Python loop over them."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..metrics import metric_locations
from ..timeline import DISPLAY_KINDS, Window, display_kinds, window_ticks
from . import metric_panels
from .style import (KIND_COLOURS, KIND_LABELS, PROPERTY_COLOURS, location_label, new_figure,
                    plain, save, time_unit)

ROW_HEIGHT = 0.8
#: beyond this many region instances the bars are painted as an image, each pixel
#: in the kind that took most of its time: most instances are far narrower than a
#: pixel then, and drawing millions of polygons would take minutes
RASTER_ABOVE = 200000
#: beyond these counts only the most severe wait states and a sample of the
#: messages spread over the window are drawn (the title says how many of how many)
MAX_WAIT_STATES = 50000
MAX_MESSAGES = 20000
#: the plot area's share of the figure's width (the rest: labels and legend)
PLOT_WIDTH = 0.72


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
                  wait_states: bool = True, messages: bool = True, width: float = 12.0,
                  metrics: bool = True):
    """Draw the window [start, end] (seconds from the trace start; None: whole
    trace) of the selected locations (None: all but the METRIC locations); wait
    states from report (or, when wait_states is true, the window's own analysis);
    with metrics, the counters of the selected METRIC locations (None: all) as line
    panels underneath.  Returns the Figure; saves it to path."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import Patch

    first, last = window_ticks(trace, start, end)
    shown, left_out = metric_panels.panels(trace, first, last, locations) if metrics else ([], [])
    if locations is None:
        own = metric_locations(trace)
        if own.any() and not own.all():
            locations = np.nonzero(~own)[0]
    win = Window(trace, first, last, locations)
    rows = {loc: k for k, loc in enumerate(win.locations.tolist())}
    row_of = np.full(len(trace.locations), -1, dtype=np.int64)
    row_of[win.locations] = np.arange(len(win.locations))
    n_rows = max(len(rows), 1)
    height = min(2.0 + 0.35 * n_rows, 40.0)
    fig = new_figure(width, height + metric_panels.PANEL_HEIGHT * len(shown))
    if shown:
        grid = fig.add_gridspec(1 + len(shown), 1, hspace=0.25,
                                height_ratios=[height - 0.9] + [metric_panels.PANEL_HEIGHT - 0.25]
                                * len(shown))
        ax = fig.add_subplot(grid[0])
        panel_axes = [fig.add_subplot(grid[1 + k], sharex=ax) for k in range(len(shown))]
    else:
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
    row = row_of[slices.location[order]].astype(np.float64)
    raster = len(slices) > RASTER_ABOVE
    if raster:
        pixels = int(width * fig.dpi * PLOT_WIDTH)
        image = paint_rows(slices, kinds[np.minimum(slices.region, len(kinds) - 1)], row_of,
                           first, max(last - first, 1), n_rows, pixels)
        ax.imshow(image, extent=(x(first), x(last) if last > first else x(first) + 1,
                                 n_rows - 0.5, -0.5),
                  aspect="auto", interpolation="nearest", zorder=0)
    else:
        colours = np.array([KIND_COLOURS[k] for k in DISPLAY_KINDS])[kind]
        bars = PolyCollection(_rectangles(x(slices.start[order]), x(slices.end[order]),
                                          row - ROW_HEIGHT / 2, ROW_HEIGHT),
                              facecolors=colours, edgecolors="none", linewidths=0,
                              antialiaseds=False)  # bars meet exactly; smoothing costs time
        ax.add_collection(bars)
    notes = []
    legend = [Patch(facecolor=KIND_COLOURS[k], label=KIND_LABELS[k])
              for k in [DISPLAY_KINDS[i] for i in
                        np.nonzero(np.bincount(kind, minlength=len(DISPLAY_KINDS)))[0].tolist()]]

    if wait_states:
        waits = win.wait_states(report)  # without a report: the window's own analysis
        if len(waits) > MAX_WAIT_STATES:
            notes.append("the %d most severe of %d wait states" % (MAX_WAIT_STATES, len(waits)))
            waits = _select(waits, np.argsort(-waits.severity, kind="stable")[:MAX_WAIT_STATES])
        if len(waits):
            wrow = row_of[waits.location].astype(np.float64)
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
    if messages and raster:  # lines thicker than the gaps between them: a black wall
        notes.append("no messages at this zoom")
    elif messages:
        msgs = win.messages()
        if len(msgs) > MAX_MESSAGES:  # a sample spread evenly over the window
            notes.append("%d of %d messages" % (MAX_MESSAGES, len(msgs)))
            msgs = _select(msgs, np.linspace(0, len(msgs) - 1, MAX_MESSAGES).astype(np.int64))
        if len(msgs):
            src = row_of[msgs.src].astype(np.float64)
            dst = row_of[msgs.dst].astype(np.float64)
            seg = np.stack([np.stack([x(msgs.send_time), src], axis=1),
                            np.stack([x(msgs.recv_time), dst], axis=1)], axis=1)
            ax.add_collection(LineCollection(seg, colors="black", linewidths=0.6, alpha=0.8))
            legend.append(Patch(facecolor="black", label="message"))

    if shown:
        metric_panels.draw(panel_axes, shown, trace, x)
        panel_axes[-1].set_xlabel("time from the trace start (%s)" % unit)
        if left_out:
            notes.append("%d of %d metric panels (all in trace.metrics)"
                         % (len(shown), len(shown) + len(left_out)))
    ax.set_xlim(x(first), x(last) if last > first else x(first) + 1)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([plain(location_label(trace.locations[l])) for l in rows])
    if not shown:
        ax.set_xlabel("time from the trace start (%s)" % unit)
    ax.set_title(plain("%s: %d region instances, window %.6g-%.6g %s%s"
                       % (trace.path, len(slices), x(first), x(last), unit,
                          "; showing " + ", ".join(notes) if notes else "")), fontsize=9)
    if legend:
        ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
    # fixed margins: tight_layout would draw the whole figure once more to measure it
    label_width = max([len(location_label(trace.locations[l])) for l in rows] + [6])
    left = min(0.04 + 0.0075 * label_width * 12.0 / width, 0.3)
    fig.subplots_adjust(left=left, right=max(left + PLOT_WIDTH, 0.8),
                        bottom=0.5 / fig.get_figheight() + 0.05, top=1 - 0.4 / fig.get_figheight())
    save(fig, path)
    return fig


def _select(table, rows):
    """The same dataclass of columns with only these rows (names lists stay whole)."""
    fields = {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in vars(table).items()}
    return type(table)(**fields)


def paint_rows(slices, kind, row_of, first: int, span: int, n_rows: int, pixels: int):
    """An RGBA image (n_rows * 5 x pixels) of region bars: each pixel shows the kind
    that took most of the location's time in that pixel (the exclusive time of each
    region instance: its span less its children's), as a timeline zoomed out that far
    should; the first and last fifth of each row stay transparent, the gaps
    between rows.  kind: index into DISPLAY_KINDS per slice."""
    from matplotlib.colors import to_rgba

    n_kinds = len(DISPLAY_KINDS)
    start = (slices.start - first).astype(np.float64) * pixels / span
    end = (slices.end - first).astype(np.float64) * pixels / span
    px0 = np.clip(np.floor(start).astype(np.int64), 0, pixels - 1)
    px1 = np.clip(np.ceil(end).astype(np.int64), px0 + 1, pixels)
    length = px1 - px0
    piece = np.repeat(np.arange(len(start)), length)
    px = px0[piece] + (np.arange(len(piece)) - np.repeat(np.cumsum(length) - length, length))
    cover = np.minimum(end[piece], px + 1) - np.maximum(start[piece], px)  # in pixels
    cell = row_of[slices.location[piece]] * pixels + px
    # + the instance's coverage for its kind, - the same for its parent's kind
    parent = slices.parent[piece]
    has = parent >= 0
    keys = np.concatenate((cell * n_kinds + kind[piece],
                           cell[has] * n_kinds + kind[parent[has]]))
    weights = np.concatenate((cover, -cover[has]))
    time = np.bincount(keys, weights=weights, minlength=n_rows * pixels * n_kinds)
    time = time.reshape(n_rows * pixels, n_kinds)
    best = np.argmax(time, axis=1)
    busy = time[np.arange(len(best)), best] > 1e-9
    palette = np.array([to_rgba(KIND_COLOURS[k]) for k in DISPLAY_KINDS] + [(0, 0, 0, 0)])
    colour = np.where(busy, best, n_kinds)
    rows = palette[colour].reshape(n_rows, 1, pixels, 4)
    band = np.ones(5, dtype=bool)
    band[[0, 4]] = False  # 3/5 of the row painted: close to ROW_HEIGHT
    image = np.where(band[None, :, None, None], rows, 0.0)
    return image.reshape(n_rows * 5, pixels, 4)
