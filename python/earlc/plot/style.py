"""What every picture shares: the matplotlib check, colours of activities and
properties, readable time axes and location labels, measuring text so legends
and labels always fit, saving."""
from __future__ import annotations

import os
import zlib

from ..optional import require

#: activities (earlc.overview.ACTIVITIES) as a timeline paints them
ACTIVITY_COLOURS = {
    "computation": "#5aae61", "omp_work": "#b5d96b", "mpi_p2p": "#d6404e",
    "mpi_collective": "#f28e2b", "mpi_other": "#9c6ade", "omp_sync": "#4e79a7",
    "omp_other": "#a0cbe8", "overhead": "#7f7f7f", "other": "#bab0ac"}
#: a location with nothing of its own open (a worker thread between parallel regions)
IDLE_COLOUR = "#e4e4e4"
IDLE_LABEL = "idle (no region of its own)"
#: inefficiencies: the same colour in every picture and page; none is an
#: activity's colour, black is the messages'
INEFFICIENCY_COLOURS = {
    "late_sender": "#e7298a", "late_sender_wrong_order": "#c51b7d",
    "late_sender_wrong_order_same_source": "#8e0152",
    "late_sender_wrong_order_different_source": "#de77ae", "late_receiver": "#8c510a",
    "messages_in_wrong_order": "#762a83", "wait_at_barrier": "#b35806",
    "barrier_completion": "#fdb863", "wait_at_nxn": "#542788", "nxn_completion": "#998ec3",
    "late_broadcast": "#2d004b", "early_reduce": "#c2a5cf", "early_scan": "#40004b",
    "wait_at_finalize": "#01665e", "mpi_init_completion": "#5ab4ac",
    "omp_barrier_wait_explicit": "#08306b", "omp_barrier_wait_implicit": "#2171b5",
    "lock_contention": "#a50026", "lock_contention_critical": "#d73027",
    "lock_contention_api": "#f46d43", "omp_management": "#525252", "omp_fork": "#969696",
    "idle_threads": "#cccccc"}
#: for properties of plugins: one of these, by a hash of the name (stable)
OTHER_PROPERTY_COLOURS = ("#1b9e77", "#e6ab02", "#a6761d", "#17becf", "#8c564b", "#bcbd22",
                          "#9467bd", "#ff7f0e", "#1f77b4", "#e377c2")
MESSAGE_COLOUR = "#000000"
#: a palette of distinct colours for lines and bars of other pictures (runs
#: compared, series), in order
PROPERTY_COLOURS = ("#000000", "#e7298a", "#1b9e77", "#7570b3", "#e6ab02", "#a6761d",
                    "#66a61e", "#d95f02", "#666666", "#17becf", "#8c564b", "#bcbd22",
                    "#9467bd", "#ff7f0e", "#2ca02c", "#1f77b4")


def rectangles(x0, x1, y0, y1):
    """Vertices (n, 4, 2) of axis-aligned rectangles [x0, x1] x [y0, y1]."""
    import numpy as np

    n = len(x0)
    v = np.empty((n, 4, 2))
    v[:, 0, 0] = v[:, 3, 0] = x0
    v[:, 1, 0] = v[:, 2, 0] = x1
    v[:, 0, 1] = v[:, 1, 1] = y0
    v[:, 2, 1] = v[:, 3, 1] = y1
    return v

SAVE_FORMATS = ("png", "svg", "pdf")
DPI = 100


def property_colour(name: str) -> str:
    """The colour of an inefficiency in every picture and page."""
    found = INEFFICIENCY_COLOURS.get(name)
    if found is not None:
        return found
    return OTHER_PROPERTY_COLOURS[zlib.crc32(name.encode()) % len(OTHER_PROPERTY_COLOURS)]


def require_matplotlib():
    """The matplotlib module, or MissingDependency with the one-line remedy."""
    return require("matplotlib", "drawing pictures", "matplotlib")


def new_figure(width: float, height: float, constrained: bool = False):
    """A Figure with an Agg canvas, outside pyplot (no global state, no display);
    constrained: matplotlib lays out axes, colour bars and their labels so that
    nothing is cut."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    return fig


def text_width(texts, fontsize: float, family=None) -> float:
    """The width in pixels of the widest of texts, as the Agg canvas draws it."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(10, 10, DPI)
    prop = FontProperties(size=fontsize, family=family)
    return max([renderer.get_text_width_height_descent(t, prop, ismath=False)[0]
                for t in texts] + [0.0])


def fit_legend(handles, width_px: float, fontsize: float = 8):
    """(columns, height in pixels) of a legend of these handles laid out below a
    picture width_px wide: as many columns as fit, so no entry is cut."""
    if not handles:
        return 1, 0.0
    fig = new_figure(width_px / DPI, 4.0)
    renderer = fig.canvas.get_renderer()
    for ncol in range(min(len(handles), 8), 0, -1):
        legend = fig.legend(handles=handles, ncol=ncol, fontsize=fontsize, frameon=False,
                            loc="upper left")
        box = legend.get_window_extent(renderer)
        legend.remove()
        if box.width <= width_px - 10 or ncol == 1:
            return ncol, box.height
    return 1, 0.0


def check_path(path) -> str:
    """The format a path asks for, or ValueError naming the ones supported."""
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in SAVE_FORMATS:
        raise ValueError("cannot tell the picture format of %r: end it with %s"
                         % (os.fspath(path), ", ".join("." + f for f in SAVE_FORMATS)))
    return ext


def save(fig, path) -> None:
    if path is not None:
        fmt = check_path(path)
        fig.savefig(os.fspath(path), format=fmt, dpi=DPI)


def time_unit(span_seconds: float):
    """(factor, name) so that the axis shows numbers between about 0.1 and 1000."""
    for factor, name in ((1.0, "s"), (1e3, "ms"), (1e6, "us"), (1e9, "ns")):
        if span_seconds * factor >= 1:
            return factor, name
    return 1e9, "ns"


def location_label(loc) -> str:
    """'rank 3.1' for thread 1 of rank 3; other locations by rank and name."""
    if loc.rank >= 0 and loc.thread >= 0:
        return "rank %d.%d" % (loc.rank, loc.thread)
    if loc.rank >= 0:
        return "rank %d %s" % (loc.rank, loc.name)
    return loc.name or "location %d" % loc.index


def plain(text: str) -> str:
    """Text shown as written: matplotlib would read '$...$' (as in '!$omp') as math."""
    return str(text).replace("$", r"\$")
