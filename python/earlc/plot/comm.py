"""The communication matrix as a picture: sender rows, receiver columns, bytes or
messages as colour, with the numbers written in when the matrix is small."""
from __future__ import annotations

import textwrap

import numpy as np

from ..communication import comm_matrix
from .style import DPI, location_label, new_figure, plain, save, text_width

#: beyond this many rows the cells are too small for their numbers
LABELLED_CELLS = 16


def plot_comm(trace, path=None, output: str = "bytes", by: str = "location", matrix=None,
              counts=None):
    """Draw trace.comm_matrix(output, by); returns the Figure, saves it to path.
    matrix and counts: that matrix and the one of message counts, when known
    already (a trace analysed in parts has no events to count them from)."""
    if matrix is None:
        matrix = comm_matrix(trace, output=output, by=by)
    if counts is None:
        counts = matrix if output == "count" else comm_matrix(trace, output="count", by=by)
    n = len(matrix)
    if by == "rank":
        labels = ["rank %d" % r for r in range(n)]
    else:
        labels = [plain(location_label(l)) for l in trace.locations]
    # laid out in pixels around the measured labels: nothing is cut
    shown_labels = labels if n <= 40 else []
    label_px = text_width(shown_labels, 7) + 14 if shown_labels else 20
    side_px = min(400 + 35 * n, 1800)
    fig_w, fig_h = label_px + 30 + side_px + 110, 60 + side_px + label_px + 30
    fig = new_figure(fig_w / DPI, fig_h / DPI)
    ax = fig.add_axes([(label_px + 30) / fig_w, (label_px + 30) / fig_h, side_px / fig_w,
                       side_px / fig_h])
    cax = fig.add_axes([(label_px + 30 + side_px + 12) / fig_w, (label_px + 30) / fig_h,
                        14 / fig_w, side_px / fig_h])
    shown = np.ma.masked_equal(matrix, 0)
    image = ax.imshow(shown, cmap="viridis", interpolation="nearest", vmin=0,
                      vmax=max(int(matrix.max(initial=0)), 1), aspect="auto")
    fig.colorbar(image, cax=cax, label="bytes sent" if output == "bytes" else "messages sent")
    if shown_labels:
        ax.set_xticks(range(n))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_yticks(range(n))
        ax.set_yticklabels(labels, fontsize=7)
    if n <= LABELLED_CELLS and matrix.max(initial=0) > 0:
        top = matrix.max()
        for i, j in zip(*np.nonzero(matrix)):
            ax.text(j, i, _short(int(matrix[i, j])), ha="center", va="center", fontsize=7,
                    color="black" if matrix[i, j] > top * 0.6 else "white")
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    title = "%s: %s, %d messages" % (trace.path, "bytes" if output == "bytes" else "messages",
                                     int(counts.sum()))
    ax.set_title(plain("\n".join(textwrap.wrap(title, max(int(side_px / 5.5), 30)))),
                 fontsize=9)
    save(fig, path)
    return fig


def _short(v: int) -> str:
    for factor, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if v >= factor:
            return "%.3g%s" % (v / factor, suffix)
    return str(v)
