"""The analysis at a glance: the metric tree as horizontal bars (share of the
total time, indented by depth; red for the inefficiencies), then for the most
severe inefficiencies (the report's ranking) a heat map of their severity per
call path (rows) and location (columns)."""
from __future__ import annotations

import numpy as np

from ..analysis.ranking import is_inefficiency, ranking

from .style import DPI, location_label, new_figure, plain, save, text_width, time_unit

#: call paths shown per heat map (the most severe)
HEATMAP_ROWS = 12


def detected_properties(report, top: int):
    """The `top` most severe inefficiencies (the report's ranking)."""
    return ranking(report)[:top]


def heatmap(report, name: str, rows: int = HEATMAP_ROWS):
    """(call paths, matrix ticks[call path, location]) of one metric's worst paths."""
    c, l, v = report.cells(name)
    paths = [cp for cp, _ in report.by_callpath(name)[:rows]]
    index = {report.callpaths.index(p): k for k, p in enumerate(paths)}
    matrix = np.zeros((len(paths), len(report.trace.locations)), dtype=np.int64)
    for cn, loc, val in zip(c.tolist(), l.tolist(), v.tolist()):
        k = index.get(cn)
        if k is not None:
            matrix[k, loc] += val
    return paths, matrix


def plot_report(report, path=None, top: int = 4, width: float = 12.0):
    """Draw the metric tree and the heat maps of the `top` worst properties;
    returns the Figure, saves it to path."""
    metrics = [p for p in report.properties if p.unit == "sec"
               and (report.total(p.name) > 0 or p.parent is None)]
    worst = detected_properties(report, top)
    if not metrics:  # an analysis restricted to counts and bytes: nothing to draw here
        fig = new_figure(6.0, 1.5)
        fig.text(0.5, 0.5, plain("%s: no time metric in this report" % report.trace.path),
                 ha="center", va="center", fontsize=9)
        save(fig, path)
        return fig
    # laid out in pixels, with every label measured: nothing is cut, and the
    # figure is drawn once
    locs = report.trace.locations
    labels = ["   " * report.depth(p.name) + p.title for p in metrics]
    heat = [(p,) + heatmap(report, p.name) for p in worst]
    path_labels = [plain(_tail(cp)) for _, paths, _ in heat for cp in paths]
    loc_labels = [location_label(l) for l in locs] if len(locs) <= 32 else []
    fig_w = width * DPI
    bar_left = text_width([plain(t) for t in labels], 8, family="monospace") + 16
    bars_px = 18 * len(metrics)
    heat_left = text_width(path_labels, 7) + 12
    heat_bottom = (text_width(loc_labels, 6) if loc_labels else 0) + 14
    # a row of two heat maps: title, the taller map (17 px a call path), labels
    blocks = [24 + 17 * max([len(h[1]) for h in heat[k:k + 2]] + [2]) + heat_bottom + 14
              for k in range(0, len(heat), 2)]
    fig_h = 30 + bars_px + 50 + sum(blocks) + 10
    fig = new_figure(fig_w / DPI, fig_h / DPI)

    def box(left, top, w, h):
        return [left / fig_w, 1 - (top + h) / fig_h, w / fig_w, h / fig_h]

    ax = fig.add_axes(box(bar_left, 30, fig_w - bar_left - 70, bars_px))
    shares = [report.percent(p.name) for p in metrics]
    ypos = np.arange(len(metrics))
    colours = ["#d6404e" if is_inefficiency(p) else "#4e79a7" for p in metrics]
    ax.barh(ypos, shares, color=colours, height=0.7)
    ax.set_yticks(ypos)
    ax.set_yticklabels([plain(t) for t in labels], fontsize=8, family="monospace")
    ax.set_ylim(len(metrics) - 0.5, -0.5)
    ax.set_xlim(0, 105)
    ax.set_xlabel("%% of total time (%.6g s over all locations)"
                  % report.seconds(report.total_time), fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    for y, s, p in zip(ypos, shares, metrics):
        ax.text(min(s, 100) + 0.5, y, "%.2f%%" % s, va="center", fontsize=7)
    ax.set_title(plain("%s: metric tree (red: inefficiencies; blue: where the time goes)"
                       % report.trace.path), fontsize=9)

    column = fig_w / 2
    for k, (p, paths, matrix) in enumerate(heat):
        top = 30 + bars_px + 50 + sum(blocks[:k // 2]) + 24
        left = (k % 2) * column + heat_left
        map_w = column - heat_left - 70
        rows_px = 17 * max(len(paths), 2)
        hx = fig.add_axes(box(left, top, map_w, rows_px))
        cax = fig.add_axes(box(left + map_w + 8, top, 10, rows_px))
        factor, unit = time_unit(matrix.max(initial=1) / report.resolution)
        shown = np.ma.masked_equal(matrix, 0) * (factor / report.resolution)
        image = hx.imshow(shown, aspect="auto", cmap="magma_r", interpolation="nearest", vmin=0)
        bar = fig.colorbar(image, cax=cax)
        bar.set_label(unit, fontsize=7)
        cax.tick_params(labelsize=6)
        hx.set_yticks(range(len(paths)))
        hx.set_yticklabels([plain(_tail(cp)) for cp in paths], fontsize=7)
        if loc_labels:
            hx.set_xticks(range(len(locs)))
            hx.set_xticklabels(loc_labels, rotation=90, fontsize=6)
        else:
            hx.set_xlabel("locations", fontsize=7)
            hx.set_xticks([])
        hx.set_title(plain("%d. %s (%.2f%% of time)" % (k + 1, p.title, report.percent(p.name))),
                     fontsize=9)
    save(fig, path)
    return fig


def _tail(path: str, keep: int = 3, width: int = 48) -> str:
    """The end of a call path, short enough to leave the heat map its room."""
    parts = path.split("/")
    tail = path if len(parts) <= keep else ".../" + "/".join(parts[-keep:])
    return tail if len(tail) <= width else "..." + tail[-(width - 3):]
