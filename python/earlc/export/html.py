"""A Report as one self-contained HTML page: no network, no files beside it.

The page holds the metric tree (folded; each metric opens to its children),
the most severe properties with their worst call paths, locations and
occurrences, the warnings, and the pictures of earlc.plot inlined as PNG when
matplotlib is installed.  Every number carries its exact value in a data-value
attribute (ticks, counts or bytes) beside the text people read.
"""
from __future__ import annotations

import base64
import io
import os
from html import escape
from typing import List

import numpy as np

from ..analysis.ranking import is_inefficiency, ranking

#: events drawn in the timeline picture: a window of about this many around the
#: most severe wait state keeps big traces readable and the page small
TIMELINE_EVENTS = 50000

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.facts td { padding: 0 1em 0 0; }
.tree details, .tree .leaf { margin-left: 1.4em; }
.tree > details, .tree > .leaf { margin-left: 0; }
.tree summary, .tree .leaf { cursor: default; padding: 1px 0; }
.tree summary { cursor: pointer; }
.tree .leaf { padding-left: 1.05em; }
.title { display: inline-block; min-width: 20em; }
.value { display: inline-block; min-width: 9em; text-align: right; font-family: monospace; }
.percent { display: inline-block; min-width: 6em; text-align: right; font-family: monospace; }
.bar { display: inline-block; height: 0.7em; background: #4e79a7; margin-left: 0.6em; }
.detected > summary .bar, .detected.leaf .bar { background: #d6404e; }
.zero { color: #999; }
table.rows { border-collapse: collapse; margin: 0.4em 0 0.8em 0; }
table.rows td, table.rows th { padding: 1px 0.8em; text-align: left; }
table.rows td.num { text-align: right; font-family: monospace; }
.warning { background: #fff3cd; padding: 0.5em 0.8em; border: 1px solid #e0c97f; }
.note { color: #666; font-style: italic; }
img { max-width: 100%; border: 1px solid #ddd; }
"""

_SCRIPT = """
function earlcFold(open) {
  document.querySelectorAll('.tree details').forEach(function (d) { d.open = open; });
}
"""


def _fmt(unit: str, value: int, resolution: int) -> str:
    if unit == "sec":
        s = value / resolution
        for factor, name in ((1, "s"), (1e3, "ms"), (1e6, "us")):
            if abs(s) * factor >= 1:
                return "%.3f %s" % (s * factor, name)
        return "%.3f us" % (s * 1e6)
    if unit == "bytes":
        return "%d B" % value
    return "%d" % value


def _location_name(loc) -> str:
    if loc.rank >= 0 and loc.thread >= 0:
        return "rank %d thread %d" % (loc.rank, loc.thread)
    return "%s (location %d)" % (loc.name, loc.index)


def _value_span(unit, value, resolution) -> str:
    return '<span class="value" data-value="%d">%s</span>' % (
        value, escape(_fmt(unit, value, resolution)))


def _metric_tree(report) -> str:
    res = report.resolution
    props = report.properties
    children = {}
    for p in props:
        children.setdefault(p.parent if p.parent in report._by_name else None, []).append(p)
    out: List[str] = []

    def row(p) -> str:
        v = report.total(p.name)
        pct = report.percent(p.name)
        bar = '<span class="bar" style="width:%.1fpx"></span>' % (2.0 * min(pct, 100.0)) \
            if p.unit == "sec" else ""
        return ('<span class="title">%s</span>%s<span class="percent" data-value="%.6f">%s</span>%s'
                % (escape(p.title or p.name), _value_span(p.unit, v, res), pct,
                   "%.2f%%" % pct if p.unit == "sec" else "", bar))

    def node(p, depth: int) -> None:
        detected = is_inefficiency(p)
        classes = ["metric"] + (["detected"] if detected else []) + \
            (["zero"] if report.total(p.name) == 0 else [])
        attrs = 'class="%s" data-metric="%s" title="%s"' % (
            " ".join(classes), escape(p.name), escape(p.description or ""))
        kids = children.get(p.name, [])
        if kids:
            out.append("<details %s%s><summary>%s</summary>" % (
                attrs, " open" if depth == 0 else "", row(p)))
            for k in kids:
                node(k, depth + 1)
            out.append("</details>")
        else:
            out.append('<div %s>%s</div>' % (attrs.replace('class="', 'class="leaf '), row(p)))

    for p in children.get(None, []):
        node(p, 0)
    return '<div class="tree" id="metric-tree">%s</div>' % "\n".join(out)


def _worst(report, top: int, rows: int) -> str:
    res = report.resolution
    trace = report.trace
    found = ranking(report)
    if not found:
        return "<p>No inefficiency found by the selected properties.</p>"
    out = []
    for p in found[:top]:
        out.append('<section class="property" data-metric="%s"><h3>%s: %s (%.2f%% of time)</h3>'
                   % (escape(p.name), escape(p.title), escape(_fmt(p.unit, report.total(p.name),
                                                                   res)),
                      report.percent(p.name)))
        if p.diagnosis:
            out.append("<p>%s</p>" % escape(p.diagnosis))
        out.append('<table class="rows callpaths"><tr><th>call path</th><th>time</th></tr>')
        for path, v in report.by_callpath(p.name)[:rows]:
            out.append('<tr><td class="path">%s</td><td class="num" data-value="%d">%s</td></tr>'
                       % (escape(path), v, escape(_fmt(p.unit, v, res))))
        out.append('</table><table class="rows locations"><tr><th>location</th><th>time</th></tr>')
        for loc, v in report.by_location(p.name)[:rows]:
            out.append('<tr><td class="location" data-location="%d">%s</td>'
                       '<td class="num" data-value="%d">%s</td></tr>'
                       % (loc, escape(_location_name(trace.locations[loc])), v,
                          escape(_fmt(p.unit, v, res))))
        out.append("</table>")
        inst = report.worst.get(p.name)
        if inst is not None and len(inst):
            ev = trace.events
            out.append('<table class="rows occurrences"><tr><th>occurrence</th><th>at</th>'
                       '<th>location</th><th>call path</th><th>time lost</th></tr>')
            for k in range(min(rows, len(inst))):
                w = int(inst.where[k])
                out.append('<tr><td class="num">event %d</td><td class="num">%s</td><td>%s</td>'
                           '<td>%s</td><td class="num" data-value="%d">%s</td></tr>' % (
                               w, escape(_fmt("sec", int(ev.time[w]) - trace.start_time, res)),
                               escape(_location_name(trace.locations[int(ev.location[w])])),
                               escape(report.callpath_of(w) or "?"), int(inst.severity[k]),
                               escape(_fmt(p.unit, int(inst.severity[k]), res))))
            out.append("</table>")
        out.append("</section>")
    return "\n".join(out)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _timeline_window(report):
    """(start, end) seconds from the trace start: the whole trace when it is small,
    else about TIMELINE_EVENTS events around the most severe wait state."""
    trace = report.trace
    n = len(trace)
    if n <= TIMELINE_EVENTS:
        return None, None
    worst = [(int(inst.severity[0]), int(inst.where[0])) for inst in report.worst.values()
             if len(inst)]
    centre = max(worst)[1] if worst else n // 2
    lo, hi = max(0, centre - TIMELINE_EVENTS // 2), min(n - 1, centre + TIMELINE_EVENTS // 2)
    time = trace.events.time
    t0, res = trace.start_time, trace.timer_resolution
    return (int(time[lo]) - t0) / res, (int(time[hi]) - t0) / res


def _pictures(report) -> str:
    from ..optional import MissingDependency
    from ..plot.style import require_matplotlib

    try:
        require_matplotlib()
    except MissingDependency as exc:
        return '<p class="note">No pictures: %s.</p>' % escape(str(exc))
    from ..plot import plot_comm, plot_report, plot_timeline

    trace = report.trace
    start, end = _timeline_window(report)
    parts = []
    what = "the whole trace" if start is None else \
        "%.6g s to %.6g s from the start, around the most severe wait state" % (start, end)
    parts.append(("timeline", "Timeline (%s)" % what,
                  plot_timeline(trace, None, start=start, end=end, report=report)))
    parts.append(("report", "Metric tree and where the worst properties cost time",
                  plot_report(report, None)))
    if np.any(trace.comm_matrix(output="count")):
        parts.append(("comm", "Communication matrix (bytes)", plot_comm(trace, None)))
    return "\n".join('<figure id="picture-%s"><figcaption>%s</figcaption>'
                     '<img alt="%s" src="data:image/png;base64,%s"></figure>'
                     % (key, escape(caption), escape(caption), _png(fig))
                     for key, caption, fig in parts)


def render_html(report, top: int = 5, rows: int = 5, pictures: bool = True) -> str:
    """The page as a string."""
    from .. import __version__

    trace = report.trace
    res = report.resolution
    warnings = report.warnings
    warn = ('<p class="warning" id="warnings">The trace is inconsistent (%s); severities '
            'around those events may be incomplete. Details: <code>earlc info</code>.</p>'
            % escape(", ".join("%s: %d" % kv for kv in sorted(warnings.items())))) \
        if warnings else '<p id="warnings">No inconsistencies in the trace.</p>'
    facts = [("trace", trace.path), ("creator", trace.creator),
             ("events", "%d" % len(trace)), ("locations", "%d" % len(trace.locations)),
             ("duration", "%.6f s" % trace.duration),
             ("total time", _fmt("sec", report.total_time, res) + " over all locations")]
    body = [
        "<h1>earlc analysis of %s</h1>" % escape(os.path.basename(os.path.dirname(trace.path))
                                                 or trace.path),
        '<table class="facts">%s</table>' % "".join(
            "<tr><td>%s</td><td>%s</td></tr>" % (escape(k), escape(v)) for k, v in facts),
        warn,
        '<h2>Metric tree</h2><p><button onclick="earlcFold(true)">unfold all</button> '
        '<button onclick="earlcFold(false)">fold all</button></p>',
        _metric_tree(report),
        "<h2>Most severe properties</h2>", _worst(report, top, rows),
    ]
    if pictures:
        body += ["<h2>Pictures</h2>", _pictures(report)]
    body.append('<p class="note">Written by earlc %s. Times in seconds at the trace\'s timer '
                'resolution (%d ticks per second); exact values in each number\'s data-value '
                'attribute.</p>' % (escape(__version__), res))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<title>earlc: %s</title><style>%s</style><script>%s</script></head>\n<body>\n%s\n'
            '</body></html>\n' % (escape(trace.path), _STYLE, _SCRIPT, "\n".join(body)))


def write_html(report, path, top: int = 5, rows: int = 5, pictures: bool = True) -> str:
    """Write the page to path; returns the path."""
    path = os.fspath(path)
    text = render_html(report, top=top, rows=rows, pictures=pictures)
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path

