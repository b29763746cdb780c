"""A timeline picture of a window, readable at any zoom, as Vampir draws one:

- one row per location; each pixel of a row in the colour of the activity that
  took most of the location's own time there (csrc/overview), so a zoomed-out
  trace shows what each location mostly did instead of whichever region came
  last; a worker thread between parallel regions is idle (light grey), not
  painted in its master's colours;
- under each row a strip with the wait states the analysis found, in their
  property's colour, those at least a pixel wide (a thinner one cannot be
  seen, and a thousand of them would paint the strip solid);
- messages as black lines from send to receive, bundled: the messages between
  two rows whose sends lie within BUNDLE_PX pixels are one line, its weight
  growing with their number, so lines never merge into a block;
- for a run that hung or aborted (docs/record.md), each stopped location's row
  carries on to the end of the run, hatched, with the call it stopped in;
- counter and metric time series (earlc.series) as lines in panels below,
  sharing the time axis;
- a legend below the picture, laid out in as many columns as fit: never cut.

Everything is laid out in pixels first (labels and legend measured), then
drawn once, so the activity image maps one to one onto the plot's pixels."""
from __future__ import annotations

import textwrap
from typing import Optional, Sequence

import numpy as np

from .. import overview as ov
from ..metrics import metric_locations
from ..timeline import Window, selected_locations, window_ticks
from .series import MAX_PANELS, draw_series, metrics_of
from .style import (ACTIVITY_COLOURS, DPI, IDLE_COLOUR, IDLE_LABEL, MESSAGE_COLOUR, fit_legend,
                    location_label, new_figure, plain, property_colour, rectangles, save,
                    text_width, time_unit)

#: a row's height in pixels, at most and at least (many rows: thinner ones)
ROW_PX_MAX, ROW_PX_MIN = 26, 4
#: the rows' panel at most this high (beyond: rows of ROW_PX_MIN)
ROWS_PX = 900
#: within a row (fractions of its height from the top): the activity band and
#: the wait-state strip
BAND = (0.06, 0.66)
STRIP = (0.70, 0.94)
#: messages between two rows whose sends lie within this many pixels are one line
BUNDLE_PX = 24
#: a counter panel's height in pixels
SERIES_PX = 95
FONT = 8


def _palette() -> np.ndarray:
    """RGBA (uint8) per activity id, IDLE and EMPTY (transparent)."""
    from matplotlib.colors import to_rgba

    pal = np.zeros((256, 4), dtype=np.uint8)
    for k, name in enumerate(ov.ACTIVITIES):
        pal[k] = np.round(np.array(to_rgba(ACTIVITY_COLOURS[name])) * 255)
    pal[ov.IDLE] = np.round(np.array(to_rgba(IDLE_COLOUR)) * 255)
    return pal


def stopped_rows(trace, rows, first: int, last: int, stop=False):
    """For a run that hung or aborted: per stopped location drawn, (row, since,
    until, text): from when it was in the call it stopped in to the end of the
    run (or of the window).  stop: the trace's stop_report when known already."""
    from ..analysis.stopped import stop_report

    if stop is False:
        stop = stop_report(trace)
    if not stop:
        return [], None
    row_of = {loc: k for k, loc in enumerate(rows)}
    ended = max([s["run_ended_ticks"] or 0 for s in stop["locations"]] + [0]) or None
    out = []
    for s in stop["locations"]:
        if not s["incomplete"] or s["location"] not in row_of or s["since_ticks"] is None:
            continue
        until = min(max(s["run_ended_ticks"] or ended or last, s["since_ticks"]), last)
        since = max(s["since_ticks"], first)
        if until > since:
            what = "stopped in %s" % s["call"] if s["call"] else "stopped"
            out.append((row_of[s["location"]], since, until, what))
    return out, ended


def plot_timeline(trace, path=None, start: Optional[float] = None, end: Optional[float] = None,
                  locations: Optional[Sequence[int]] = None, report=None,
                  wait_states: bool = True, messages: bool = True, width: float = 12.0,
                  metrics=True):
    """Draw the window [start, end] (seconds from the trace start; None: the
    whole trace, to the end of the run for one that was stopped) of the selected
    locations (None: all but the METRIC locations, whose counters are series).
    Wait states come from report, or (wait_states true) from the window's own
    analysis; metrics: the counter series to draw below (True: those the trace
    records beside its regions and on the selected METRIC locations, see
    earlc.series; or a DataFrame in the shape of trace.metrics; False: none).
    Returns the Figure; saves it to path."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import Patch

    first, last = window_ticks(trace, start, end)
    own = metric_locations(trace)
    series_locations = selected_locations(trace, locations)  # ValueError for unknown ones
    if locations is None and own.any() and not own.all():
        locations = np.nonzero(~own)[0]  # METRIC locations are series, not rows
    win = Window(trace, first, last, locations)
    rows = win.locations.tolist()
    stops, run_ended = stopped_rows(trace, rows, first, last)
    if end is None and run_ended is not None and run_ended > last:
        last = run_ended  # the rows go on to the end of the run
        stops = stopped_rows(trace, rows, first, last)[0]
    n_rows = max(len(rows), 1)
    span = max(last - first, 1)
    t0 = trace.start_time
    factor, unit = time_unit(span / trace.timer_resolution)
    scale = factor / trace.timer_resolution

    def x(ticks):
        return (np.asarray(ticks, dtype=np.int64) - t0) * scale

    # -- layout in pixels ------------------------------------------------------------
    labels = [location_label(trace.locations[l]) for l in rows]
    fig_w = int(round(width * DPI))
    left = int(text_width(labels + ["rank 0.0"], FONT)) + 24
    right = 16
    pixels = max(fig_w - left - right, 50)
    row_px = int(min(ROW_PX_MAX, max(ROW_PX_MIN, ROWS_PX // n_rows)))
    rows_px = row_px * n_rows

    # -- what is drawn -----------------------------------------------------------------
    notes = []
    act = ov.activity(trace, first, last, rows, pixels) if rows else \
        np.full((0, pixels), ov.EMPTY, np.uint8)
    waits = None
    if wait_states or report is not None:
        waits = win.wait_states(report)  # without a report: the window's own analysis
        wide = (waits.end - waits.start) * pixels >= span  # at least a pixel
        if len(waits) and not wide.all():
            notes.append("%d of %d wait states (those at least a pixel wide)"
                         % (int(wide.sum()), len(waits)))
        order = np.nonzero(wide)[0]
        waits_shown = order[np.argsort(waits.severity[order], kind="stable")]  # worst on top
    bundles = None
    if messages:
        msgs = win.messages()
        if len(msgs):
            row_of = np.full(len(trace.locations), -1, dtype=np.int64)
            row_of[win.locations] = np.arange(len(rows))
            bundles = ov.message_bundles(msgs.send_time, msgs.recv_time, row_of[msgs.src],
                                         row_of[msgs.dst], first, last, pixels, BUNDLE_PX)
            if len(bundles["count"]) < len(msgs):
                notes.append("%d messages as %d lines" % (len(msgs), len(bundles["count"])))
    frame = None
    if metrics is True:
        from ..series import has_series, trace_series

        frame = trace_series(trace) if has_series(trace) else None
    elif metrics is not False and metrics is not None:
        frame = metrics
    panels = metrics_of(frame, first, last, series_locations)
    if len(panels) > MAX_PANELS:
        notes.append("series %s not drawn" % ", ".join(panels[MAX_PANELS:]))
        panels = panels[:MAX_PANELS]

    # -- legend ------------------------------------------------------------------------
    present = set(np.unique(act).tolist())
    legend = [Patch(facecolor=ACTIVITY_COLOURS[name], label=ov.ACTIVITY_LABELS[name])
              for k, name in enumerate(ov.ACTIVITIES) if k in present]
    if ov.IDLE in present:
        legend.append(Patch(facecolor=IDLE_COLOUR, label=IDLE_LABEL))
    if waits is not None and len(waits_shown):
        drawn = sorted(set(waits.prop[waits_shown].tolist()))
        legend += [Patch(facecolor=property_colour(waits.names[k]),
                         label=plain(waits.titles[k] + " (strip)")) for k in drawn]
    if bundles is not None and len(bundles["count"]):
        legend.append(Patch(facecolor=MESSAGE_COLOUR, label="messages (thicker: more)"))
    if stops:
        legend.append(Patch(facecolor="white", edgecolor="#444444", hatch="////",
                            label="stopped (run hung or aborted)"))
    ncol, legend_px = fit_legend(legend, fig_w, FONT)

    title = "%s: window %.6g-%.6g %s%s" % (trace.path, x(first), x(last), unit,
                                           "; " + "; ".join(notes) if notes else "")
    title_lines = textwrap.wrap(title, max(int(fig_w / 6.2), 40))
    top_px = 10 + 14 * len(title_lines)
    axis_px = 42
    series_px = len(panels) * (SERIES_PX + 14)
    fig_h = top_px + rows_px + axis_px + series_px + legend_px + 16
    fig = new_figure(fig_w / DPI, fig_h / DPI)

    def box(left_px, top_px_, w_px, h_px):
        return [left_px / fig_w, 1 - (top_px_ + h_px) / fig_h, w_px / fig_w, h_px / fig_h]

    ax = fig.add_axes(box(left, top_px, pixels, rows_px))
    xlim = (x(first), x(last) if last > first else x(first) + 1)
    # the activity: an image of exactly the plot's pixels
    pal = _palette()
    image = np.zeros((rows_px, pixels, 4), dtype=np.uint8)
    for r in range(len(rows)):
        y0, y1 = r * row_px + int(round(BAND[0] * row_px)), r * row_px + int(round(BAND[1] * row_px))
        image[y0:max(y1, y0 + 1)] = pal[act[r]][None, :, :]
    ax.imshow(image, extent=(xlim[0], xlim[1], n_rows - 0.5, -0.5), aspect="auto",
              interpolation="nearest", zorder=0)
    ymid = (BAND[0] + BAND[1]) / 2 - 0.5
    if waits is not None and len(waits_shown):
        k = waits_shown
        wrow = np.searchsorted(win.locations, waits.location[k]).astype(np.float64)
        ax.add_collection(PolyCollection(
            rectangles(x(waits.start[k]), x(waits.end[k]), wrow - 0.5 + STRIP[0],
                        wrow - 0.5 + STRIP[1]),
            facecolors=[property_colour(waits.names[p]) for p in waits.prop[k].tolist()],
            edgecolors="none", linewidths=0, antialiaseds=False, zorder=2))
    if bundles is not None and len(bundles["count"]):
        b = bundles
        send = (b["send_first"] + b["send_last"]) // 2
        recv = (b["recv_first"] + b["recv_last"]) // 2
        seg = np.stack([np.stack([x(send), b["src"] + ymid], axis=1),
                        np.stack([x(recv), b["dst"] + ymid], axis=1)], axis=1)
        weight = np.log2(b["count"].astype(np.float64))
        ax.add_collection(LineCollection(seg, colors=MESSAGE_COLOUR,
                                         linewidths=np.minimum(0.5 + 0.25 * weight, 1.6),
                                         alpha=0.5, zorder=3))
    for r, since, until, what in stops:
        ax.add_patch(_stopped_patch(x(since), x(until), r))
        if (until - since) * pixels >= 60 * span:
            ax.text(x(since), r + ymid, " " + what, fontsize=7, va="center", ha="left",
                    clip_on=True, zorder=5,
                    bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
    if run_ended is not None and first <= run_ended <= last:
        ax.axvline(x(run_ended), color="#444444", linewidth=0.8, linestyle="--", zorder=4)
    ax.set_xlim(*xlim)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([plain(t) for t in labels],
                       fontsize=FONT if row_px >= 10 else max(row_px - 2, 3))
    ax.tick_params(axis="x", labelsize=FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.text(left / fig_w, 1 - 6 / fig_h, plain("\n".join(title_lines)), fontsize=FONT + 1,
             va="top", ha="left")
    xlabel = "time from the trace start (%s)" % unit
    below = top_px + rows_px
    if panels:
        ax.tick_params(axis="x", labelbottom=False)
        colours = _location_colours(len(trace.locations))
        for k, metric in enumerate(panels):
            top = below + 14 + k * (SERIES_PX + 14)
            sx = fig.add_axes(box(left, top, pixels, SERIES_PX), sharex=ax)
            draw_series(sx, frame, metric, first, last, series_locations.tolist(), x,
                        lambda l: location_label(trace.locations[l]),
                        lambda l: colours[l % len(colours)], pixels)
            if k < len(panels) - 1:
                sx.tick_params(axis="x", labelbottom=False)
        below += series_px
        sx.set_xlabel(xlabel, fontsize=FONT)
        sx.set_xlim(*xlim)
    else:
        ax.set_xlabel(xlabel, fontsize=FONT)
    if legend:
        fig.legend(handles=legend, ncol=ncol, fontsize=FONT, frameon=False, loc="upper left",
                   bbox_to_anchor=(4 / fig_w, 1 - (below + axis_px) / fig_h))
    save(fig, path)
    return fig


def _stopped_patch(x0, x1, row):
    from matplotlib.patches import Rectangle

    return Rectangle((x0, row - 0.5 + BAND[0]), x1 - x0, BAND[1] - BAND[0], facecolor="white",
                     edgecolor="#444444", hatch="////", linewidth=0.6, zorder=1)


def _location_colours(n: int):
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "viridis"]
    return [cmap(k if n <= 10 else k / max(n - 1, 1)) for k in range(n)]
