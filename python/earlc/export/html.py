"""A Report as one self-contained HTML page: no network, no files beside it.

The page holds an interactive timeline (timeline_page.py and .js), where a run
that hung or aborted stopped, the matches of a search pattern, the metric tree
(folded; each metric opens to its children), the most severe inefficiencies
(the report's ranking) with their worst call paths, locations and occurrences,
the warnings, and the report and communication pictures of earlc.plot inlined
as PNG when matplotlib is installed.  Every number carries its exact value in a
data-value attribute (ticks, counts or bytes) beside the text people read.
"""
from __future__ import annotations

import base64
import io
import os
from html import escape
from typing import List

import numpy as np

from ..analysis.ranking import is_inefficiency, ranking
from ..display import format_time, format_value
from ..trace import READING_NOTES

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
.tl { position: relative; border: 1px solid #ccc; padding: 4px; user-select: none; }
.tl canvas { display: block; }
.tl-canvas { cursor: crosshair; outline: none; }
.tl-bar { margin-bottom: 4px; font-size: 0.9em; }
.tl-bar button { min-width: 2.2em; }
.tl-span { font-family: monospace; margin-left: 1em; }
.tl-tip { position: absolute; z-index: 5; background: #fffff0; border: 1px solid #999;
          padding: 4px 6px; font-size: 0.85em; max-width: 30em; pointer-events: none; }
.tl-details { border-top: 1px solid #ddd; margin-top: 4px; padding: 4px; font-size: 0.9em;
              min-height: 3.2em; }
.tl-legend { font-size: 0.8em; margin-top: 4px; }
.tl-key { display: inline-block; margin-right: 1.2em; white-space: nowrap; }
.tl-swatch { display: inline-block; width: 1.1em; height: 0.8em; margin-right: 0.3em;
             vertical-align: middle; border: 1px solid #aaa; }
.tl-strip { height: 0.35em; }
.tl-path { font-family: monospace; }
tr.occurrence, tr.match { cursor: pointer; }
tr.occurrence:hover, tr.match:hover { background: #eef4ff; }
ul.stopped { font-family: monospace; }
"""

_SCRIPT = """
function earlcFold(open) {
  document.querySelectorAll('.tree details').forEach(function (d) { d.open = open; });
}
"""


def _fmt(unit: str, value: int, resolution: int) -> str:
    """As the text report writes it (earlc.display): the same units everywhere."""
    return format_value(unit, value, resolution)


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


def _worst(report, top: int, rows: int, listed=None) -> str:
    """The most severe inefficiencies (the report's ranking) with their worst call
    paths, locations and occurrences; listed: {(property, event): index of the
    occurrence among the timeline's wait states} makes each occurrence a link
    that zooms the timeline to it."""
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
            out.append('<table class="rows occurrences"><tr><th>occurrence</th><th>at</th>'
                       '<th>location</th><th>call path</th><th>time lost</th></tr>')
            for k in range(min(rows, len(inst))):
                # through occurrence(): a report made in parts has no events
                w, time, loc, cnode = report.occurrence(p.name, k)
                link = ""
                if listed is not None:
                    link = ' class="occurrence" data-wait="%d" data-time="%d" title="show it in ' \
                           'the timeline"' % (listed.get((p.name, w), -1),
                                              time - trace.start_time)
                out.append('<tr%s><td class="num">event %d</td><td class="num">%s</td><td>%s</td>'
                           '<td>%s</td><td class="num" data-value="%d">%s</td></tr>' % (
                               link, w, escape(format_time(trace, time)),
                               escape(_location_name(trace.locations[loc])),
                               escape((report.callpaths[cnode] if cnode >= 0 else "") or "?"),
                               int(inst.severity[k]),
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


class WholeTrace:
    """What the page reads of the trace's events, from a report of the whole
    trace (earlc.parts.page.PartsPage: from the parts of one made in parts)."""

    def __init__(self, report):
        self.report = report

    def timeline_data(self, matches, rows: int):
        from .timeline_page import timeline_data

        return timeline_data(self.report, matches=matches, occurrences=rows)

    def has_messages(self) -> bool:
        counts = self.report.trace.kind_counts()
        return bool(counts.get("MPI_SEND", 0) + counts.get("MPI_ISEND", 0))

    def comm_matrices(self):
        """(bytes, messages) sent between each pair of locations."""
        from ..communication import comm_matrix

        trace = self.report.trace
        return comm_matrix(trace, output="bytes"), comm_matrix(trace, output="count")


def _pictures(report, timeline: bool = True, source=None) -> str:
    """The report and communication pictures as inlined PNG; the timeline picture
    too when the page has no interactive timeline."""
    from ..optional import MissingDependency
    from ..plot.style import require_matplotlib

    try:
        require_matplotlib()
    except MissingDependency as exc:
        return '<p class="note">No pictures: %s.</p>' % escape(str(exc))
    from ..plot import plot_comm, plot_report, plot_timeline

    trace = report.trace
    parts = []
    if not timeline:
        start, end = _timeline_window(report)
        what = "the whole trace" if start is None else \
            "%.6g s to %.6g s from the start, around the most severe wait state" % (start, end)
        parts.append(("timeline", "Timeline (%s)" % what,
                      plot_timeline(trace, None, start=start, end=end, report=report)))
    parts.append(("report", "Metric tree and where the worst inefficiencies cost time",
                  plot_report(report, None)))
    source = source or WholeTrace(report)
    if source.has_messages():  # messages: a matrix
        matrix, counts = source.comm_matrices()
        parts.append(("comm", "Communication matrix (bytes)",
                      plot_comm(trace, None, matrix=matrix, counts=counts)))
    return "\n".join('<figure id="picture-%s"><figcaption>%s</figcaption>'
                     '<img alt="%s" src="data:image/png;base64,%s"></figure>'
                     % (key, escape(caption), escape(caption), _png(fig))
                     for key, caption, fig in parts)


def _timeline(report, rows: int, matches, source=None):
    """(html, listed) of the interactive timeline: the viewer, its data and its
    script; listed maps the listed occurrences to their wait-state index."""
    import json

    data = (source or WholeTrace(report)).timeline_data(matches, rows)
    listed = {(name, event): index for name, event, index in data["waits"]["listed"]}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "timeline_page.js"), encoding="utf-8") as f:
        script = f.read()
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    present = set(data["present"])
    legend = "".join('<span class="tl-key"><span class="tl-swatch" style="background:%s"></span>%s'
                     '</span>' % (a["colour"], escape(a["label"]))
                     for k, a in enumerate(data["activities"]) if a.get("id", k) in present)
    legend += "".join('<span class="tl-key"><span class="tl-swatch tl-strip" style="background:%s">'
                      '</span>%s</span>' % (w["colour"], escape(w["title"]))
                      for w in data["waits"]["props"])
    if data["stopped"]:
        legend += ('<span class="tl-key"><span class="tl-swatch" style="background: '
                   'repeating-linear-gradient(135deg, #fff 0 3px, #555 3px 4px)"></span>'
                   'stopped (run hung or aborted)</span>')
    shown = data["waits"]["occurrences"]
    note = ("" if shown == data["waits"]["total"] else
            " The page holds the %d most severe of the %d wait states and those around the "
            "occurrences listed below." % (shown, data["waits"]["total"]))
    if not data["exact"]["all"]:
        note += (" Single region instances are held around the occurrences listed below (click "
                 "one); elsewhere the timeline shows the dominant activity of each pixel, down to "
                 "%s per pixel." % _fmt("sec", max(data["span"] // data["levels"][-1]["bins"], 1),
                                        report.resolution)) if data["levels"] else ""
    html = ('<div id="earlc-timeline" class="tl">'
            '<div class="tl-bar"><button data-act="in" title="zoom in (+)">+</button>'
            '<button data-act="out" title="zoom out (-)">&minus;</button>'
            '<button data-act="reset" title="the whole run (Home)">whole run</button> '
            '<span class="tl-span"></span></div>'
            '<canvas class="tl-canvas" tabindex="0"></canvas><canvas class="tl-axis"></canvas>'
            '<div class="tl-series"></div><div class="tl-tip" hidden></div>'
            '<div class="tl-legend">%s</div>'
            '<div class="tl-details">Click an interval or a wait state for its details.</div>'
            '<p class="note">Wheel or + and &minus;: zoom; drag or the arrow keys: pan; Home: the '
            'whole run; a click on a process folds its threads. Each row shows what the location '
            'itself did (the activity that took most of each pixel), its wait states in the strip '
            'under it (those at least a pixel wide), messages as lines (bundled where they '
            'crowd).%s</p></div>'
            '<script type="application/json" id="earlc-timeline-data">%s</script>'
            '<script>%s</script>' % (legend, escape(note), payload, script))
    return html, listed


def _stopped(report) -> str:
    """Where each location of a run that hung or aborted stopped, grouped as the
    text report groups them."""
    stop = report.stopped
    if not stop:
        return ""
    from ..analysis.stopped import format_stop_report

    lines = format_stop_report(report.trace, stop).splitlines()
    items = "".join("<li>%s</li>" % escape(line.strip()) for line in lines[1:])
    return ('<h2 id="stopped">%s</h2><ul class="stopped">%s</ul><p class="note">The timeline '
            'hatches each stopped location from the call it stopped in to the end of the run.</p>'
            % (escape(lines[0].rstrip(":")), items))


def _matches(report, matches) -> str:
    """The first matches of a search pattern, each a link that zooms the timeline."""
    from ..search import MAX_MATCHES_DRAWN

    if matches is None:
        return ""
    trace = report.trace
    ev = trace.events
    res = report.resolution
    head = "".join("<th>%s</th>" % escape(c) for c in matches.columns)
    body = []
    for m in range(min(len(matches), 50)):
        cells = []
        for e in matches.events[m].tolist():
            cells.append('<td class="num" data-event="%d">event %d at %s on %s</td>' % (
                e, e, escape(format_time(trace, int(ev.time[e]))),
                escape(_location_name(trace.locations[int(ev.location[e])]))))
        body.append('<tr class="match" data-match="%d" title="show it in the timeline">%s</tr>'
                    % (m, "".join(cells)))
    notes = "".join('<p class="warning">%s</p>' % escape(w)
                    for w in getattr(matches, "warnings", ()))
    return ('<h2 id="matches">Matches of %s</h2>%s<p>%d match%s%s; the timeline marks the '
            'first %d (blue).</p><table class="rows matches"><tr>%s</tr>%s</table>'
            % (escape(matches.pattern or "the pattern"), notes, len(matches),
               "" if len(matches) == 1 else "es",
               " (the search stopped at its limit)" if matches.truncated else "",
               min(len(matches), MAX_MATCHES_DRAWN), head, "".join(body)))


def render(report, top: int = 5, rows: int = 5, pictures: bool = True, matches=None,
           timeline: bool = True, source=None) -> str:
    """The page as a string; source: what the page reads of the trace's events
    (WholeTrace of the report by default)."""
    from ..version import __version__

    trace = report.trace
    res = report.resolution
    said = report.analysis_warnings  # what the analysis says about its numbers
    warnings = {k: v for k, v in report.warnings.items()
                if k not in READING_NOTES and k not in said}
    warn = ('<p class="warning" id="warnings">The trace is inconsistent (%s); severities '
            'around those events may be incomplete. Details: <code>earlc info</code>.</p>'
            % escape(", ".join("%s: %d" % kv for kv in sorted(warnings.items())))) \
        if warnings else '<p id="warnings">No inconsistencies in the trace.</p>'
    warn += "".join('<p class="warning">%s (%s: %d): %s.</p>' % (level, code, n, escape(text))
                    for code, n in sorted(report.warnings.items()) if code in READING_NOTES
                    for level, text in [READING_NOTES[code]])
    warn += "".join('<p class="warning">%s: %s</p>' % (escape(d["code"]), escape(d["detail"]))
                    for d in report.warning_details if d["code"] in said)
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
        _stopped(report),
    ]
    listed = None
    if timeline:
        view, listed = _timeline(report, rows, matches, source)
        body += ["<h2>Timeline</h2>", view]
    body += [
        _matches(report, matches),
        '<h2>Metric tree</h2><p><button onclick="earlcFold(true)">unfold all</button> '
        '<button onclick="earlcFold(false)">fold all</button></p>',
        _metric_tree(report),
        "<h2>Most severe inefficiencies</h2>", _worst(report, top, rows, listed),
    ]
    if pictures:
        body += ["<h2>Pictures</h2>", _pictures(report, timeline, source)]
    body.append('<p class="note">Written by earlc %s. Times in seconds at the trace\'s timer '
                'resolution (%d ticks per second); exact values in each number\'s data-value '
                'attribute.</p>' % (escape(__version__), res))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<title>earlc: %s</title><style>%s</style><script>%s</script></head>\n<body>\n%s\n'
            '</body></html>\n' % (escape(trace.path), _STYLE, _SCRIPT, "\n".join(body)))


def write(report, path, top: int = 5, rows: int = 5, pictures: bool = True,
          matches=None, timeline: bool = True, source=None) -> str:
    """Write the page to path; returns the path."""
    path = os.fspath(path)
    text = render(report, top=top, rows=rows, pictures=pictures, matches=matches,
                  timeline=timeline, source=source)
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path

