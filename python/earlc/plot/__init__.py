"""Pictures of a trace and its analysis, drawn with matplotlib (an optional
dependency: `pip install matplotlib`).

    timeline   a window of the trace: per location and pixel the activity that
               dominates it, wait states in a strip under each row, messages
               bundled where they crowd, counter series below
    report     the metric tree as bars with the share of time (red: inefficiencies),
               and for the most severe a call path x location heat map
    comm       the communication matrix
    logical timeline
               the communication events at their logical step, coloured by lateness

Each function returns the matplotlib Figure and, given a path, saves it (the
format follows the file name: .png, .svg, .pdf).  Nothing here touches pyplot's
global state, so plotting works in scripts, servers and notebooks alike.
"""
from __future__ import annotations

from ..optional import MissingDependency
from .style import require_matplotlib


def plot_timeline(trace, path=None, **options):
    from .timeline import plot_timeline as draw

    return draw(trace, path, **options)


def plot_logical_timeline(trace, path=None, **options):
    from .logical import plot_logical_timeline as draw

    return draw(trace, path, **options)


def plot_report(report, path=None, **options):
    from .report import plot_report as draw

    return draw(report, path, **options)


def plot_comm(trace, path=None, **options):
    from .comm import plot_comm as draw

    return draw(trace, path, **options)


__all__ = ["plot_timeline", "plot_logical_timeline", "plot_report", "plot_comm", "require_matplotlib", "MissingDependency"]
