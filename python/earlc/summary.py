"""The summary `earlc info` prints: what a trace holds, as data and as text."""
from __future__ import annotations

from collections import Counter

from .trace import Trace


def _table(rows, headers, align=None) -> str:
    """Rows as an aligned text table (numbers right-aligned)."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    align = align or ["<" if not rows or isinstance(rows[0][i], str) else ">"
                      for i in range(len(headers))]
    fmt = "  ".join("{:%s%d}" % (a, w) for a, w in zip(align, widths))
    lines = [fmt.format(*headers), "  ".join("-" * w for w in widths)]
    lines += [fmt.format(*r) for r in cells]
    return "\n".join("  " + l.rstrip() for l in lines)


def info_data(trace: Trace) -> dict:
    """The summary `earlc info` prints, as plain data (also its JSON form)."""
    procs = [p for p in trace.processes if p.type == "PROCESS"]
    threads = [l for l in trace.locations if l.type == "CPU_THREAD"]
    by_paradigm = Counter(r.paradigm for r in trace.regions)
    return {
        "path": trace.path,
        "creator": trace.creator,
        "otf2_version": trace.otf2_version,
        "timer_resolution": trace.timer_resolution,
        "duration_ticks": trace.duration_ticks,
        "duration_seconds": trace.duration,
        "events": len(trace),
        "processes": len(procs),
        "locations": len(trace.locations),
        "cpu_threads": len(threads),
        "locations_by_type": dict(Counter(l.type for l in trace.locations)),
        "definitions": trace.definition_count,
        "regions": len(trace.regions),
        "communicators": len(trace.communicators),
        "events_by_kind": trace.kind_counts(),
        "regions_by_paradigm": dict(sorted(by_paradigm.items(), key=lambda kv: (-kv[1], kv[0]))),
        "warnings": {k: v for k, v in trace.warnings.counts.items() if v},
        "warning_details": [
            {"code": c, "location": l, "position": p, "event": e, "detail": d}
            for c, l, p, e, d in trace.warnings.details],
        "other_records": trace.warnings.other_records,
        "memory_bytes": trace.memory(),
    }


def format_info(trace: Trace, data: dict) -> str:
    out = []
    out.append("Trace      %s" % data["path"])
    out.append("Creator    %s (OTF2 %s)" % (data["creator"] or "unknown", data["otf2_version"]))
    out.append("Duration   %.6f s (%d ticks at %d ticks/s)" % (
        data["duration_seconds"], data["duration_ticks"], data["timer_resolution"]))
    types = ", ".join("%d %s" % (n, t.lower().replace("_", " "))
                      for t, n in sorted(data["locations_by_type"].items()))
    out.append("Processes  %d, locations %d (%s)" % (data["processes"], data["locations"], types))
    out.append("Events     %d" % data["events"])
    out.append("")
    out.append("Events by kind")
    rows = sorted(data["events_by_kind"].items(), key=lambda kv: (-kv[1], kv[0]))
    out.append(_table(rows, ["kind", "events"], ["<", ">"]))
    out.append("")
    out.append("Locations")
    rows = [(l.index, l.process.name, l.name, l.type, l.events) for l in trace.locations]
    if len(rows) > 24:
        rows = rows[:20] + [("...", "", "", "", "")] + rows[-3:]
    out.append(_table(rows, ["#", "process", "location", "type", "events"],
                      [">", "<", "<", "<", ">"]))
    out.append("")
    out.append("Regions by paradigm (%d regions, %d communicators, %d definitions)" % (
        data["regions"], data["communicators"], data["definitions"]))
    out.append(_table(list(data["regions_by_paradigm"].items()), ["paradigm", "regions"],
                      ["<", ">"]))
    out.append("")
    if data["warnings"]:
        out.append("Warnings (reading went on)")
        out.append(_table(sorted(data["warnings"].items()), ["code", "count"], ["<", ">"]))
        for d in data["warning_details"][:10]:
            loc = trace.locations[d["location"]] if d["location"] >= 0 else None
            out.append("  - %s: location %s, event %d (position %d): %s" % (
                d["code"], loc.index if loc else "?", d["event"], d["position"], d["detail"]))
        if len(data["warning_details"]) > 10:
            out.append("  ... %d more in detail (earlc info --format json)"
                       % (len(data["warning_details"]) - 10))
    else:
        out.append("Warnings   none")
    return "\n".join(out)


