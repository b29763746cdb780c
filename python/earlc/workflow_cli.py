"""The workflow subcommands of `earlc`: check, annotate, compare and logical
(docs/workflow.md).  earlc.cli adds them with `add_workflow_commands`; each follows
the rule of docs/cli.md: user errors are one line and exit status 2, found before
any long work starts.

    check TRACE RULES        the rules of a TOML file: 0 when all hold, 1 when one fails
    annotate TRACE -o OUT    OTF2 markers for pattern matches and wait states
    compare A B [C ...]      what changed between runs
    logical TRACE            logical steps, lateness, the locations late most often
"""
from __future__ import annotations

import json
import os
import sys

from . import cliargs
from .cliargs import count, output_file, write_output
from .progress import ProgressBar

#: exit status of `earlc check` when a rule fails
RULE_FAILED = 1


def _open(args, bar):
    from .trace import open as open_trace

    return open_trace(args.trace, threads=args.threads, progress=bar,
                      salvage=getattr(args, "salvage", False))


def _pattern_texts(args) -> list:
    from .cli import _pattern_text

    return [_pattern_text(p) for p in (args.pattern or [])]


# -- check ----------------------------------------------------------------------------

def cmd_check(args) -> int:
    from .analysis.catalog import assemble
    from .checks import check, load_rules

    if not os.path.isfile(args.rules):
        raise cliargs.UsageError("the rules file %s %s" % (
            args.rules, "is a folder" if os.path.isdir(args.rules) else "does not exist"))
    catalog = assemble(files=args.plugin or ())
    plugins = [p for p in catalog.properties if p.source != "built-in"]
    rules, _ = load_rules(args.rules, catalog)  # every rule checked before the trace is read
    bar = ProgressBar()
    try:
        trace = _open(args, bar)
        result = check(trace, rules, progress=bar, threads=args.threads, plugins=plugins)
    finally:
        bar.close()
    result.rules_path = args.rules
    if args.junit:
        try:
            result.to_junit(args.junit)
        except OSError as exc:
            raise cliargs.UsageError("%s: %s" % (args.junit, exc.strerror or exc)) from None
    if args.format == "json":
        write_output(args.output, json.dumps(result.to_dict(), indent=1))
    else:
        write_output(args.output, result.to_text())
    return 0 if result.passed else RULE_FAILED


# -- annotate -------------------------------------------------------------------------

def cmd_annotate(args) -> int:
    from .markers import annotate, check_output

    if not os.path.exists(args.trace):  # the trace's own error first, as every command's
        _open(args, None)
    if args.in_place == (args.output is not None):
        raise cliargs.UsageError("give -o OUT (a new folder for the annotated copy) or "
                                 "--in-place, %s"
                                 % ("not both" if args.in_place else "one of them"))
    texts = _pattern_texts(args)
    if args.output is not None:
        anchor = args.trace if os.path.isfile(args.trace) else os.path.join(args.trace, "x")
        check_output(args.output, anchor)  # before the trace is read
    properties = args.properties
    if properties:
        from .analysis.catalog import assemble

        assemble().select(properties)  # unknown names: one line, before reading
    bar = ProgressBar()
    try:
        trace = _open(args, bar)
        result = annotate(trace, out=args.output, in_place=args.in_place,
                          pattern=texts or None, pattern_name=args.name,
                          properties=properties, top=args.top, limit=args.limit,
                          keep=args.keep, progress=bar)
    finally:
        bar.close()
    groups = ", ".join("%s %d" % (g[len("earlc: "):], n) for g, n in result.groups.items())
    print("earlc annotate: %d markers (%s) -> %s; %d markers of other tools kept%s"
          % (result.written, groups or "none", result.path, result.kept,
             ", %d of an earlier annotation replaced" % result.replaced if result.replaced
             else ""))
    return 0


# -- compare --------------------------------------------------------------------------

def cmd_compare(args) -> int:
    from .comparison import compare

    if args.labels is not None and len(args.labels) != len(args.runs):
        raise cliargs.UsageError("--labels names %d runs, but %d are given"
                                 % (len(args.labels), len(args.runs)))
    for path in args.runs:
        if not os.path.exists(path):
            raise cliargs.UsageError("%s: no such file or folder" % path)
    if args.plot:
        from .plot import MissingDependency, require_matplotlib
        from .plot.style import check_path

        try:
            check_path(args.plot)
            require_matplotlib()
        except (ValueError, MissingDependency) as exc:
            raise cliargs.UsageError(str(exc)) from None
    bar = ProgressBar()
    try:
        c = compare(*args.runs, labels=args.labels, progress=bar, threads=args.threads,
                    salvage=args.salvage)
    finally:
        bar.close()
    if args.format == "csv":
        text = c.changes(args.basis).to_csv()
    elif args.format == "json":
        ch = c.changes(args.basis)
        text = json.dumps({"schema": "earlc-compare/1", "runs": [
            {"label": r.label, "path": r.trace.path, "processes": r.processes,
             "events": len(r.trace)} for r in c.runs],
            "basis": ch.attrs.get("basis"),
            "changes": [dict(metric=m, callpath=p, **{k: (None if v != v else v)
                                                      for k, v in row.items()})
                        for (m, p), row in ch.replace([float("inf")], None).iterrows()]},
            indent=1)
    else:
        text = c.to_text(top=args.top)
    write_output(args.output, text)
    if args.plot:
        try:
            c.plot(args.plot, top=args.top, basis=args.basis)
        except OSError as exc:
            raise cliargs.UsageError("%s: %s" % (args.plot, exc.strerror or exc)) from None
        print("earlc compare: picture of the top changes -> %s" % args.plot, file=sys.stderr)
    return 0


# -- logical --------------------------------------------------------------------------

def cmd_logical(args) -> int:
    bar = ProgressBar()
    try:
        trace = _open(args, bar)
        lt = trace.logical_time(progress=bar)
    finally:
        bar.close()
    if args.format == "json":
        df = lt.late_processes(args.top)
        write_output(args.output, json.dumps({
            "schema": "earlc-logical/1", "trace": trace.path, "events": len(lt),
            "steps": lt.steps, "cycles_broken": lt.cycles_broken,
            "late_processes": json.loads(df.to_json(orient="records"))}, indent=1))
    else:
        write_output(args.output, lt.to_text(top=args.top))
    return 0


# -- the parsers ----------------------------------------------------------------------

def add_workflow_commands(sub) -> None:
    """Add check, annotate, compare and logical to earlc's subparsers."""
    from .checks import RulesError
    from .comparison import CompareError
    from .markers import AnnotateError

    cliargs.user_error_types(RulesError, CompareError, AnnotateError)

    from .cli import _trace_argument as trace_arg  # TRACE and --salvage, as every command

    def threads(p):
        p.add_argument("--threads", type=cliargs.threads, default=0,
                       help="reading threads (default: one per core)")

    def out(p):
        p.add_argument("-o", "--output", type=output_file, metavar="FILE",
                       help="write to FILE instead of standard output")

    ck = sub.add_parser("check", help="check a trace against rules (exit 1 when one fails)",
                        description="Check a trace against the rules of a TOML file: "
                                    "properties within limits, patterns that must not "
                                    "occur, no message races (docs/workflow.md). Exit "
                                    "status 0 when every rule holds, 1 when one fails, 2 "
                                    "for a usage error.")
    trace_arg(ck)
    ck.add_argument("rules", help="the rules file (TOML)")
    ck.add_argument("--junit", type=output_file, metavar="FILE",
                    help="also write the result as JUnit XML for CI systems")
    ck.add_argument("--format", choices=["text", "json"], default="text")
    out(ck)
    ck.add_argument("--plugin", action="append", metavar="FILE", type=cliargs.existing_file,
                    help="load every Property class of this Python file (repeatable)")
    threads(ck)
    ck.set_defaults(func=cmd_check)

    an = sub.add_parser("annotate", help="write pattern matches and wait states as OTF2 "
                                         "markers (for Vampir)",
                        description="Write OTF2 markers for the matches of patterns and the "
                                    "worst occurrences of properties into a copy of the "
                                    "archive (-o) or the archive itself (--in-place); events "
                                    "and definitions are never changed (docs/workflow.md).")
    trace_arg(an)
    an.add_argument("-o", "--output", metavar="OUT", type=cliargs.output_folder,
                    help="a new folder for the annotated copy of the archive")
    an.add_argument("--in-place", action="store_true",
                    help="write the markers into the archive itself")
    an.add_argument("--pattern", action="append", metavar="FILE_OR_TEXT",
                    help="annotate the matches of this pattern (repeatable)")
    an.add_argument("--name", help="the pattern of the text to search (default: the last one)")
    an.add_argument("--properties", type=cliargs.name_list, metavar="A,B,...",
                    help="annotate the worst occurrences of these properties (default without "
                         "--pattern: every wait state found)")
    an.add_argument("--top", type=count(1), default=20,
                    help="occurrences annotated per property (20)")
    an.add_argument("--limit", type=count(1), default=1000,
                    help="matches annotated per pattern (1000)")
    an.add_argument("--keep", action="store_true",
                    help="keep earlc's earlier marker groups that this run does not write")
    threads(an)
    an.set_defaults(func=cmd_annotate)

    cp = sub.add_parser("compare", help="compare the analyses of two or more runs",
                        description="Analyse two or more traces and show what changed, per "
                                    "property and call path, aligned by name; runs of "
                                    "different process counts are compared per process "
                                    "(docs/workflow.md).")
    cp.add_argument("runs", nargs="+", metavar="TRACE",
                    help="two or more traces; the first is the baseline")
    cp.add_argument("--salvage", action="store_true",
                    help="event files cut short keep the records before the cut (as for "
                         "every command that reads a trace)")
    cp.add_argument("--labels", type=cliargs.name_list, metavar="A,B,...",
                    help="names of the runs (default: their folders)")
    cp.add_argument("--basis", choices=["total", "per_process"],
                    help="compare totals or per-process values (default: per process when "
                         "the process counts differ)")
    cp.add_argument("--format", choices=["text", "csv", "json"], default="text")
    out(cp)
    cp.add_argument("--top", type=count(1), default=15, help="changes shown (15)")
    cp.add_argument("--plot", metavar="FILE.png",
                    help="also draw the top changes (.png, .svg or .pdf; needs matplotlib)")
    threads(cp)
    cp.set_defaults(func=_at_least_two)

    lg = sub.add_parser("logical", help="logical time: steps, lateness, the locations late "
                                        "most often",
                        description="Give the communication events logical steps that "
                                    "respect the happened-before order and rank the "
                                    "locations by how often they were the last of their "
                                    "step (docs/workflow.md). The picture: earlc plot "
                                    "timeline --logical.")
    trace_arg(lg)
    lg.add_argument("--format", choices=["text", "json"], default="text")
    out(lg)
    lg.add_argument("--top", type=count(1), default=10, help="locations listed (10)")
    threads(lg)
    lg.set_defaults(func=cmd_logical)


def _at_least_two(args) -> int:
    if len(args.runs) < 2:
        raise cliargs.UsageError("compare needs two traces or more (the first is the baseline)")
    return cmd_compare(args)
