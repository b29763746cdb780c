"""The terminal report: the metric tree with totals, then for the most severe
properties their worst call paths, locations and occurrences, aligned."""
from __future__ import annotations

from ..display import format_time, format_value
from .ranking import ranking


def _fmt_value(report, unit: str, value: int) -> str:
    return format_value(unit, value, report.resolution)


def _location_name(report, index: int) -> str:
    loc = report.trace.locations[index]
    if loc.rank >= 0:
        return "rank %d thread %d" % (loc.rank, loc.thread) if loc.thread > 0 else "rank %d" % loc.rank
    return "%s (%d)" % (loc.name, index)


def render(report, top: int = 5, rows: int = 5) -> str:
    tr = report.trace
    out = []
    out.append("earlc analysis of %s" % tr.path)
    summary = report.summary
    out.append("  %d locations, %d events, %.6f s traced, total time %s over all locations"
               % (len(tr.locations), summary["events"],
                  summary["duration_ticks"] / report.resolution if report.resolution else 0.0,
                  _fmt_value(report, "sec", report.total_time)))
    if report.stopped:
        from .stopped import format_stop_report

        out += ["", format_stop_report(tr, report.stopped)]
    out.append("")
    width = max([len("  " * report.depth(p.name) + p.title) for p in report.properties]
                + [len("Metric")])
    off = {s.name for s in report.switched_off}
    out.append("  %-*s  %14s  %7s" % (width, "Metric", "value", "% time"))
    out.append("  %s  %s  %s" % ("-" * width, "-" * 14, "-" * 7))
    for p in report.properties:
        v = report.total(p.name)
        if v == 0 and p.parent is not None and report.total(p.parent) == 0:
            continue  # a zero below a zero says nothing
        label = "  " * report.depth(p.name) + p.title
        if p.name in off:
            out.append("  %-*s  %14s  %7s  switched off (see warnings)" % (width, label, "-", ""))
            continue
        if v == 0:
            out.append("  %-*s  %14s  %7s" % (width, label, "-", ""))
            continue
        pct = "%6.2f%%" % report.percent(p.name) if p.unit == "sec" else ""
        note = ""
        x = report.exceeding.get(p.name)
        if x is not None:
            note = "  exceeds its parent in %d cell%s (see warnings)" % (
                x.cells, "" if x.cells == 1 else "s")
        out.append(("  %-*s  %14s  %7s" % (width, label, _fmt_value(report, p.unit, v), pct))
                   + note)
    detected = ranking(report)
    if detected:
        out.append("")
        out.append("Most severe inefficiencies (%d found):" % len(detected))
        for k, p in enumerate(detected[:top]):
            out.append("  %d. %-34s %14s  %6.2f%%" % (
                k + 1, p.title, _fmt_value(report, p.unit, report.total(p.name)),
                report.percent(p.name)))
    for p in detected[:top]:
        out.append("")
        out.append("%s: %s (%.2f%% of time)" % (p.title, _fmt_value(report, p.unit, report.total(p.name)),
                                               report.percent(p.name)))
        if p.diagnosis:
            out.append("  " + p.diagnosis)
        out.append("  worst call paths:")
        for path, v in report.by_callpath(p.name)[:rows]:
            out.append("    %12s  %s" % (_fmt_value(report, p.unit, v), path))
        out.append("  worst locations:")
        for loc, v in report.by_location(p.name)[:rows]:
            out.append("    %12s  %s" % (_fmt_value(report, p.unit, v), _location_name(report, loc)))
        # root causes: the delay costs that explain this wait state (a property
        # naming it in its `explains` attribute)
        for cause in report.properties:
            if getattr(cause, "explains", None) != p.name or report.total(cause.name) <= 0:
                continue
            out.append("  caused by (%s, %s):" % (
                cause.title, _fmt_value(report, cause.unit, report.total(cause.name))))
            for path, loc, v in report.by_callpath_and_location(cause.name)[:rows]:
                out.append("    %12s  %s on %s" % (_fmt_value(report, cause.unit, v), path,
                                                 _location_name(report, loc)))
        inst = report.worst.get(p.name)
        if inst is not None and len(inst):
            out.append("  worst occurrences:")
            for k in range(min(rows, len(inst))):
                w, time, location, callpath = report.occurrence(p.name, k)
                out.append("    %12s  event %d at %s on %s in %s" % (
                    _fmt_value(report, p.unit, int(inst.severity[k])), w,
                    format_time(tr, time),
                    _location_name(report, location),
                    (report.callpaths[callpath] if callpath >= 0 else "") or "?"))
    if not detected and report.unanalysed:
        out.append("")
        out.append("No inefficiency found by the selected properties, but %d waiting calls "
                   "could not be analysed: the trace lacks the records their wait states are "
                   "computed from (warnings below)." % sum(u.calls for u in report.unanalysed))
    elif not detected:
        out.append("")
        out.append("No inefficiency found by the selected properties.")
    out += _warnings(report)
    return "\n".join(out)


def _warnings(report) -> list:
    """Everything that makes the numbers above less than complete, said in the
    report itself (the EARL layer's inconsistencies are nowhere else)."""
    from ..trace import READING_NOTES

    out = []
    counts = report.trace_warnings
    for code in sorted(set(counts) & set(READING_NOTES)):
        out.append("")
        level, text = READING_NOTES[code]
        out.append("%s (%s %d): %s." % (level, code, counts[code], text))
    inconsistent = {k: v for k, v in counts.items() if k not in READING_NOTES}
    if inconsistent:
        out.append("")
        out.append("Warning: the trace is inconsistent (%s); severities around those events may "
                   "be incomplete." % ", ".join("%s %d" % (k, v)
                                                for k, v in sorted(inconsistent.items())))
    if counts:
        details = [d for d in report.warning_details if d["code"] in counts]
        for d in details[:10]:
            loc = d["location"]
            where = _location_name(report, loc) if 0 <= loc < len(report.trace.locations) else "?"
            out.append("  - %s: %s, event %d: %s" % (d["code"], where, d["event"], d["detail"]))
        if len(details) > 10:
            out.append("  ... %d more (--format json: warning_details)" % (len(details) - 10))
    for u in report.unanalysed:
        out.append("")
        out.append("Warning (%s): %s; the first at %s on %s." % (
            u.code, u.detail, report.callpath_of(u.event) or "?",
            _location_name(report, u.location)))
    for d in report.warning_details:
        if d["code"] in report.analysis_warnings:
            out.append("")
            out.append("Warning (%s): %s" % (d["code"], d["detail"]))
    for s in report.switched_off:
        out.append("")
        out.append("Warning: %s. The rest of the analysis is complete; --strict makes this an "
                   "error." % s)
    by_name = {p.name: p for p in report.properties}
    for name, x in report.exceeding.items():
        parent = by_name.get(x.parent)
        unit = by_name[name].unit
        out.append("")
        out.append("Warning: %s exceeds its parent %s in %d (call path, location) cell%s, the "
                   "most at %s on %s: %s against %s. A child of the metric tree is a part of its "
                   "parent: choose a parent whose time contains this property's, or none "
                   "(docs/plugins.md, \"Choosing the parent\")." % (
                       name, parent.name if parent else x.parent, x.cells,
                       "" if x.cells == 1 else "s", report.callpaths[x.callpath] or "?",
                       _location_name(report, x.location), _fmt_value(report, unit, x.value),
                       _fmt_value(report, unit, x.parent_value)))
    for problem in report.package_problems:
        out.append("")
        out.append("Warning: %s; its properties are left out." % problem)
    return out
