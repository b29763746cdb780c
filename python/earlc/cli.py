"""The earlc command line: `earlc COMMAND ...` or `python -m earlc COMMAND ...`.

Commands:
    info TRACE      summary of a trace: creator, OTF2 version, processes and threads,
                    events per kind, duration, regions by paradigm, warnings
    synth KIND -o DIR
                    generate a program's trace with known inefficiencies and its
                    expected.json (docs/generator.md)

Errors in the input exit with status 2 and one line naming the file and the problem.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import List, Optional

from . import TraceError
from .progress import ProgressBar
from .trace import Trace, open as open_trace


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


def cmd_info(args) -> int:
    trace = open_trace(args.trace, threads=args.threads, progress=ProgressBar())
    data = info_data(trace)
    text = json.dumps(data, indent=2) if args.format == "json" else format_info(trace, data)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


def cmd_synth(args) -> int:
    from .synth import OPTIONS, synth

    options = {name: getattr(args, name) for name in OPTIONS if getattr(args, name, None) is not None}
    bar = ProgressBar()
    try:
        r = synth(args.kind, args.output, progress=bar, overwrite=args.overwrite, **options)
    finally:
        bar.close()
    exp = r.expected()
    found = {k: v["total"] for k, v in exp["properties"].items()
             if v["total"] and k not in ("time", "visits")}
    print("earlc synth %s: %d events (%d iterations, %d ticks) in %.2f s, %.1f M events/s -> %s"
          % (r.kind, r.events, r.iterations, r.duration, r.seconds, r.rate / 1e6, r.anchor))
    print("  expected severities (ticks): %s" % (
        ", ".join("%s %d" % kv for kv in found.items()) or "none"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="earlc", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="summarise a trace")
    info.add_argument("trace", help="OTF2 anchor file (traces.otf2) or its folder")
    info.add_argument("--format", choices=["text", "json"], default="text")
    info.add_argument("-o", "--output", help="write to FILE instead of standard output")
    info.add_argument("--threads", type=int, default=0,
                      help="reading threads (default: one per core)")
    info.set_defaults(func=cmd_info)

    from .synth import KINDS, OPTIONS
    syn = sub.add_parser("synth", help="generate a trace with known inefficiencies",
                         description="Simulate a program and write its trace plus expected.json "
                                     "(see docs/generator.md).")
    syn.add_argument("kind", choices=KINDS, help="the program to simulate")
    syn.add_argument("-o", "--output", required=True, help="archive folder to create")
    syn.add_argument("--overwrite", action="store_true", help="replace an existing archive")
    for name, text in OPTIONS.items():
        flag = "--" + name.replace("_", "-")
        if name in ("wrong_order", "any_source"):
            syn.add_argument(flag, type=int, choices=[0, 1], dest=name, help=text)
        else:
            syn.add_argument(flag, type=int, dest=name, help=text)
    syn.set_defaults(func=cmd_synth)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except TraceError as exc:
        print("earlc: error: %s" % exc.args[0], file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
