"""What every picture shares: the matplotlib check, colours of region kinds and
properties, readable time axes and location labels, saving."""
from __future__ import annotations

import os

from ..optional import require

#: region kinds (earlc.timeline.DISPLAY_KINDS) as a timeline paints them
KIND_COLOURS = {"computation": "#5aae61", "mpi_p2p": "#d6404e", "mpi_collective": "#f28e2b",
                "mpi_other": "#9c6ade", "openmp": "#4e79a7", "other": "#bab0ac"}
KIND_LABELS = {"computation": "computation", "mpi_p2p": "MPI point-to-point",
               "mpi_collective": "MPI collective", "mpi_other": "MPI other",
               "openmp": "OpenMP", "other": "other"}
#: wait states: one colour per property, in the order they appear
PROPERTY_COLOURS = ("#000000", "#e7298a", "#1b9e77", "#7570b3", "#e6ab02", "#a6761d",
                    "#66a61e", "#d95f02", "#666666", "#17becf", "#8c564b", "#bcbd22",
                    "#9467bd", "#ff7f0e", "#2ca02c", "#1f77b4")

SAVE_FORMATS = ("png", "svg", "pdf")


def require_matplotlib():
    """The matplotlib module, or MissingDependency with the one-line remedy."""
    return require("matplotlib", "drawing pictures", "matplotlib")


def new_figure(width: float, height: float):
    """A Figure with an Agg canvas, outside pyplot (no global state, no display)."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


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
        fig.savefig(os.fspath(path), format=fmt, dpi=100)


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
