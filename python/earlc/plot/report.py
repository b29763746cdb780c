"""The analysis at a glance: the metric tree as horizontal bars (share of the
total time, indented by depth), then for the most severe properties a heat map of
their severity per call path (rows) and location (columns)."""
from __future__ import annotations

import numpy as np

from ..analysis.ranking import is_inefficiency, ranking

from .style import location_label, new_figure, plain, save, time_unit

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
    bar_height = 1.4 + 0.28 * max(len(metrics), 1)
    heat_height = 3.2 * ((len(worst) + 1) // 2)
    fig = new_figure(width, bar_height + heat_height, constrained=True)
    grid = fig.add_gridspec(1 + (len(worst) + 1) // 2, 2,
                            height_ratios=[bar_height] + [3.2] * ((len(worst) + 1) // 2))
    ax = fig.add_subplot(grid[0, :])
    shares = [report.percent(p.name) for p in metrics]
    labels = ["   " * report.depth(p.name) + p.title for p in metrics]
    ypos = np.arange(len(metrics))
    colours = ["#d6404e" if is_inefficiency(p) else "#4e79a7" for p in metrics]
    ax.barh(ypos, shares, color=colours, height=0.7)
    ax.set_yticks(ypos)
    ax.set_yticklabels([plain(t) for t in labels], fontsize=8, family="monospace")
    ax.invert_yaxis()
    ax.set_xlim(0, 105)
    ax.set_xlabel("%% of total time (%.6g s over all locations)"
                  % report.seconds(report.total_time))
    for y, s, p in zip(ypos, shares, metrics):
        ax.text(min(s, 100) + 0.5, y, "%.2f%%" % s, va="center", fontsize=7)
    ax.set_title(plain("%s: metric tree (red: inefficiencies; blue: where the time goes)"
                       % report.trace.path), fontsize=9)

    locs = report.trace.locations
    for k, p in enumerate(worst):
        hx = fig.add_subplot(grid[1 + k // 2, k % 2])
        paths, matrix = heatmap(report, p.name)
        factor, unit = time_unit(matrix.max(initial=1) / report.resolution)
        shown = np.ma.masked_equal(matrix, 0) * (factor / report.resolution)
        image = hx.imshow(shown, aspect="auto", cmap="magma_r", interpolation="nearest", vmin=0)
        fig.colorbar(image, ax=hx, label=unit)
        hx.set_yticks(range(len(paths)))
        hx.set_yticklabels([plain(_tail(cp)) for cp in paths], fontsize=7)
        if len(locs) <= 32:
            hx.set_xticks(range(len(locs)))
            hx.set_xticklabels([location_label(l) for l in locs], rotation=90, fontsize=6)
        hx.set_title(plain("%d. %s (%.2f%% of time)" % (k + 1, p.title, report.percent(p.name))),
                     fontsize=9)
    save(fig, path)
    return fig


def _tail(path: str, keep: int = 3, width: int = 48) -> str:
    """The end of a call path, short enough to leave the heat map its room."""
    parts = path.split("/")
    tail = path if len(parts) <= keep else ".../" + "/".join(parts[-keep:])
    return tail if len(tail) <= width else "..." + tail[-(width - 3):]
