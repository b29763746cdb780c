"""The earlc command line: `earlc COMMAND ...` or `python -m earlc COMMAND ...`.

Commands:
    analyze TRACE   the performance properties of a trace: what is wrong, where, and
                    how much time it costs (docs/cli.md, docs/properties.md)
    properties      the properties available: built-in, from installed packages, from
                    --plugin files
    info TRACE      summary of a trace: creator, OTF2 version, processes and threads,
                    events per kind, duration, regions by paradigm, warnings
    races TRACE     message races: the sends each wildcard receive could have taken
                    instead, other nondeterminism, resource leaks (docs/races.md)
    export TRACE --format perfetto -o FILE
                    a time window as trace-event JSON for Perfetto (docs/exports.md)
    plot timeline|report|comm TRACE -o FILE
                    pictures of a window, of the analysis, of the communication
    report TRACE -o FILE.html
                    the analysis as one self-contained HTML page
    synth KIND -o DIR
                    generate a program's trace with known inefficiencies and its
                    expected.json (docs/generator.md)
    search TRACE PATTERN
                    the matches of a causal pattern (docs/patterns.md)
    record [-o DIR] COMMAND...
                    run an MPI program with earlc's recorder and write its trace
                    (docs/record.md)
    verify [-o DIR] -- COMMAND...
                    run an MPI program in every match order of its wildcard
                    receives and report the failing schedules (docs/verify.md)
    check TRACE RULES, annotate TRACE -o OUT, compare A B [C ...], logical TRACE
                    the workflow: rules as checks, markers for Vampir, runs compared,
                    logical time (earlc.workflow_cli, docs/workflow.md)

Every user error is one line on standard error and exit status 2, found before any
long work starts (earlc.cliargs: the rule every subcommand follows).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

from . import cliargs
from .cliargs import Parser, count, output_file, write_output
from .progress import ProgressBar
from .summary import format_info, info_data
from .trace import open as open_trace


def _write(args, text: str) -> None:
    write_output(args.output, text)


def _catalog(args):
    """Built-ins, installed packages and --plugin files; the names of
    --properties checked against them.  Before the trace is read."""
    from .analysis.catalog import assemble

    catalog = assemble(files=args.plugin or (), strict=args.strict)
    if getattr(args, "properties", None):
        catalog.select(args.properties)
    return catalog


def cmd_analyze(args) -> int:
    from .analysis import analyze

    if args.format == "cube" and not args.output:
        raise cliargs.UsageError("--format cube writes a binary file: give it with -o "
                                 "FILE.cubex")
    html = args.format == "html"
    if html and not (args.output or "").lower().endswith((".html", ".htm")):
        raise cliargs.UsageError("--format html writes a page: give it with -o FILE.html")
    # the page lists --rows occurrences of each inefficiency: the analysis keeps them
    top = max(args.top, 1, args.rows) if html else max(args.top, 1)
    catalog = _catalog(args)
    plugins = [p for p in catalog.properties if p.source != "built-in"]
    bar = _progress_bar()
    try:
        parts = _in_parts(args, plugins, page=html)
        if parts is not None:
            with cliargs.terminate_as_interrupt(), parts:  # Ctrl-C, SIGTERM: scratch removed
                parts.progress.fn = bar
                report = parts.analyze(properties=args.properties, top=top,
                                       plugins=plugins, strict=args.strict, packages=False)
                if html:  # the parts run again for the page, with the scratch folder
                    report.package_problems = catalog.problems
                    with cliargs.user_errors(output=args.output):
                        report.to_html(args.output, top=args.top, rows=args.rows)
                    return 0
        else:
            trace = _open_for_analysis(args, bar, plugins)
            report = analyze(trace, properties=args.properties, top=top,
                             progress=bar, plugins=plugins, strict=args.strict, packages=False,
                             threads=args.threads)
    finally:
        bar.close()
    report.package_problems = catalog.problems
    if html:  # collective in parts: every process computes its rows of the page
        with cliargs.user_errors(output=args.output):
            report.to_html(args.output, top=args.top, rows=args.rows)
        return 0
    if not _writes_outputs():
        return 0
    if args.format == "json":
        _write(args, report.to_json(indent=1))
    elif args.format == "cube":
        with cliargs.user_errors(output=args.output):
            report.to_cube(args.output)
    else:
        _write(args, report.to_text(top=args.top, rows=args.rows))
    return 0


def _progress_bar() -> ProgressBar:
    """The terminal's progress bar: shown by one process of an MPI job only."""
    from .parts import mpi_world_rank

    return ProgressBar(enabled=None if mpi_world_rank() == 0 else False)


def _writes_outputs() -> bool:
    """Whether this process writes the outputs: rank 0 of an MPI job, or the
    only process."""
    from .parts import mpi_world_rank

    return mpi_world_rank() == 0


def _in_parts(args, plugins=(), causal: bool = False, what: str = "search",
              packages: bool = False, page: bool = False):
    """The analysis in parts one after another (earlc.parts.inturn) when the
    trace needs more memory than --memory gives, or without --memory than the
    machine has available (with a note saying so); None to analyse it in one
    piece.  Under mpiexec each process holds its part already.  causal: for a
    search or the races (`what`: every collective member in each part, the
    analysis's memory model); packages: whether the installed packages'
    properties are analysed; page: the HTML page is written, parts planned with
    room for it (page_inturn)."""
    from .parts import under_mpi
    from .parts.budget import format_size
    from .parts.inturn import InTurn, needs_parts

    if under_mpi():
        if args.memory is not None or args.scratch is not None:
            raise cliargs.UsageError("--memory and --scratch apply to an analysis in one "
                                     "process: under mpiexec each process holds its part of "
                                     "the trace (docs/parallel.md)")
        return None
    need = needs_parts(args.trace, args.memory, getattr(args, "properties", None), plugins,
                       packages=packages, strict=getattr(args, "strict", False))
    if need is None:
        return None
    model, reserve = need.model, 0
    if page:
        from .parts.page_inturn import with_page

        model, reserve = with_page(model, args.trace)
    parts = InTurn(args.trace, need.budget, scratch=args.scratch, threads=args.threads,
                   salvage=args.salvage, model=model,
                   collectives="all" if causal else need.collectives)
    parts.page_reserve = reserve
    if args.memory is None:
        print("earlc: the %s of %s needs about %s, more than the %s this machine has "
              "available: it runs in %d parts one after another (--memory sets the budget)"
              % (what if causal else "analysis", args.trace, format_size(need.whole),
                 format_size(need.budget),
                 parts.pp.parts), file=sys.stderr)
    return parts


def _open_for_analysis(args, bar, plugins=None):
    """The trace, or under mpiexec with several processes this process's part
    of it (docs/parallel.md); for the analysis of a catalog (plugins given),
    with the collectives its properties read (parts.collectives_for)."""
    from .parts import collectives_for, under_mpi

    if under_mpi():
        collectives = "all"
        if plugins is not None:
            collectives = collectives_for(getattr(args, "properties", None), plugins,
                                          packages=False, strict=getattr(args, "strict", False))
        return open_trace(args.trace, threads=args.threads, progress=bar, salvage=args.salvage,
                          parts="mpi", collectives=collectives)
    return open_trace(args.trace, threads=args.threads, progress=bar, salvage=args.salvage,
                      memory=getattr(args, "memory", None))


def _root_kinds(p):
    """The root event kinds of a property in the paper's form (else None)."""
    root = getattr(p, "root", None)
    return list(getattr(root, "kinds", ())) or None


def cmd_properties(args) -> int:
    from .analysis.catalog import ordered
    from .analysis.report import _tree_order

    catalog = _catalog(args)
    props = ordered(catalog.properties)
    metrics = _tree_order([p for p in props if p.metric])
    rows = metrics + [p for p in props if not p.metric]
    data = [{"name": p.name, "title": p.title, "parent": p.parent, "unit": p.unit,
             "subscribes": p.subscribes, "reads": list(p.reads), "root": _root_kinds(p),
             "metric": p.metric,
             "source": p.source, "replaces": p.replaces} for p in rows]
    if args.format == "json":
        _write(args, json.dumps({"properties": data, "problems": catalog.problems}, indent=1))
        return 0
    depth = {}
    for p in metrics:
        depth[p.name] = depth[p.parent] + 1 if p.parent in depth else 0
    table = [("  " * depth.get(p.name, 0) + p.name if p.metric else p.name + " (event)",
              p.title, p.parent or "-", p.unit,
              p.subscribes or ("root " + ",".join(_root_kinds(p)) if _root_kinds(p) else "-"),
              p.source or "")
             for p in rows]
    heads = ("name", "title", "parent", "unit", "subscribes to", "from")
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    for problem in catalog.problems:
        lines.append("warning: %s" % problem)
    _write(args, "\n".join(lines))
    return 0


def cmd_info(args) -> int:
    trace = open_trace(args.trace, threads=args.threads, progress=ProgressBar(),
                       salvage=args.salvage)
    data = info_data(trace)
    _write(args, json.dumps(data, indent=2) if args.format == "json" else format_info(trace, data))
    return 0


def cmd_races(args) -> int:
    from .races import WildcardsNotRecorded, parse_wildcard, races

    with cliargs.user_errors(ValueError):
        wildcard = parse_wildcard(args.wildcard)
    bar = _progress_bar()
    try:
        parts = _in_parts(args, causal=True, what="race analysis")
        # an unknown region or rank; a trace that does not say which receives were wildcards
        with cliargs.user_errors(ValueError, WildcardsNotRecorded):
            if parts is not None:
                with cliargs.terminate_as_interrupt(), parts:  # Ctrl-C: scratch removed
                    parts.progress.fn = bar
                    result = parts.races(wildcard=wildcard, clocks=args.clocks)
            else:
                trace = _open_for_analysis(args, bar)
                result = races(trace, wildcard=wildcard, clocks=args.clocks, progress=bar,
                               root=0)
    finally:
        bar.close()
    if not _writes_outputs():
        return 0
    if args.format == "json":
        _write(args, result.to_json(indent=1))
    else:
        _write(args, result.to_text(top=max(args.top, 0)))
    return 0


def _window_arguments(parser, what: str = "") -> None:
    """--from, --to and --locations of the commands that draw or export a window,
    parsed once, by argparse: seconds from the trace start and location indices."""
    from .timeline import parse_locations, parse_seconds

    parser.add_argument("--from", dest="start", metavar="T", type=cliargs.parsed(parse_seconds),
                        help=what + "window start from the trace start: seconds, or 20ms, "
                        "300us, 40ns")
    parser.add_argument("--to", dest="end", metavar="T", type=cliargs.parsed(parse_seconds),
                        help=what + "window end, as --from")
    parser.add_argument("--locations", metavar="LIST", type=cliargs.parsed(parse_locations),
                        help=what + "location indices (earlc info lists them), e.g. 0,2-5 "
                        "(default: all)")


def _window_options(args):
    """(start, end, locations) of --from, --to and --locations, checked together
    before the trace is read; bounds outside the trace are found once it is
    (window_ticks)."""
    start, end = args.start, args.end
    if start is not None and end is not None:
        if end < start:
            raise cliargs.UsageError("--to %g s is before --from %g s" % (end, start))
        if end == start:
            raise cliargs.UsageError("--from %g s --to %g s is an empty window: give an end "
                                     "after the start" % (start, end))
    return start, end, args.locations


def cmd_export(args) -> int:
    from .export.perfetto import write_perfetto

    start, end, locations = _window_options(args)
    bar = ProgressBar()
    trace = open_trace(args.trace, threads=args.threads, progress=bar, salvage=args.salvage)
    try:
        # a location the trace does not have, a window outside it: the user's
        with cliargs.user_errors(ValueError, output=args.output):
            written = write_perfetto(trace, args.output, start=start, end=end,
                                     locations=locations, wait_states=not args.no_wait_states)
    finally:
        bar.close()
    print("earlc export: %(slices)d region slices, %(wait_states)d wait states, %(flows)d "
          "messages on %(tracks)d tracks -> " % written + args.output)
    return 0


def cmd_plot(args) -> int:
    from .plot import MissingDependency, require_matplotlib
    from .plot.style import check_path

    with cliargs.user_errors(ValueError, MissingDependency):
        check_path(args.output)
        require_matplotlib()
    if args.what != "timeline" and (args.start is not None or args.end is not None
                                    or args.locations is not None or args.logical):
        raise cliargs.UsageError("--from, --to, --locations and --logical apply to plot "
                                 "timeline only")
    start, end, locations = _window_options(args)
    from .analysis import analyze
    from .plot import plot_comm, plot_report, plot_timeline

    bar = ProgressBar()
    trace = open_trace(args.trace, threads=args.threads, progress=bar, salvage=args.salvage)
    try:
        # a location the trace does not have, a window outside it: the user's
        with cliargs.user_errors(ValueError, output=args.output):
            if args.what == "comm":
                plot_comm(trace, args.output, output=args.value, by=args.by)
            else:
                # a timeline's wait states come from the window's own analysis
                report = None if args.what == "timeline" else analyze(
                    trace, progress=bar, threads=args.threads)
                if args.what == "report":
                    plot_report(report, args.output)
                elif args.logical:
                    from .plot import plot_logical_timeline

                    plot_logical_timeline(trace, args.output, start=start, end=end,
                                          locations=locations)
                else:
                    plot_timeline(trace, args.output, start=start, end=end,
                                  locations=locations, report=report,
                                  wait_states=not args.no_wait_states,
                                  metrics=not args.no_metrics)
    finally:
        bar.close()
    print("earlc plot %s -> %s" % (args.what, args.output))
    return 0


def cmd_report(args) -> int:
    from .analysis import analyze
    from .parts import under_mpi

    if not args.output.lower().endswith((".html", ".htm")):
        raise cliargs.UsageError("the report is an HTML page: give -o a name ending in .html")
    if args.pattern is not None and under_mpi():
        raise cliargs.UsageError("--pattern runs in one process: under mpiexec, write the "
                                 "matches with earlc search (docs/parallel.md)")
    bar = _progress_bar()
    try:
        parts = _in_parts(args, packages=True, page=True)
        if parts is not None:
            if args.pattern is not None:
                parts.close()
                raise cliargs.UsageError(
                    "--pattern needs the whole trace in memory: the trace is analysed in parts "
                    "one after another here; write the matches with earlc search --memory, "
                    "or give --memory unlimited (docs/memory.md)")
            with cliargs.terminate_as_interrupt(), parts:  # Ctrl-C, SIGTERM: scratch removed
                parts.progress.fn = bar
                report = parts.analyze(top=max(args.top, 1, args.rows), packages=True)
                with cliargs.user_errors(output=args.output):
                    report.to_html(args.output, top=args.top, rows=args.rows,
                                   pictures=not args.no_pictures)
            print("earlc report -> %s" % args.output)
            return 0
    finally:
        bar.close()
    text = _pattern_text(args.pattern) if args.pattern is not None else None
    bar = _progress_bar()
    trace = _open_for_analysis(args, bar)
    matches = None
    try:
        report = analyze(trace, top=max(args.top, 1, args.rows), progress=bar,
                         threads=args.threads)
        if text is not None:
            import warnings

            from .search import MAX_MATCHES_DRAWN, PatternWarning, search

            with warnings.catch_warnings():  # matches.warnings says them, once each, below
                warnings.simplefilter("ignore", PatternWarning)
                matches = search(trace, text, name=args.pattern_name, limit=MAX_MATCHES_DRAWN,
                                 progress=bar, threads=args.threads)
    finally:
        bar.close()
    for message in (matches.warnings if matches is not None else ()):
        print("earlc: warning: %s" % message, file=sys.stderr)  # no match: still a page
    with cliargs.user_errors(output=args.output):  # collective in parts
        report.to_html(args.output, top=args.top, rows=args.rows, pictures=not args.no_pictures,
                       matches=matches)
    if _writes_outputs():
        print("earlc report -> %s" % args.output)
    return 0


def cmd_synth(args) -> int:
    from .synth import OPTIONS, synth

    options = {name: getattr(args, name) for name in OPTIONS if getattr(args, name, None) is not None}
    bar = ProgressBar()
    try:
        with cliargs.terminate_as_interrupt():
            r = synth(args.kind, args.output, progress=bar, overwrite=args.overwrite, **options)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the C core removed its work
        print("earlc: %s; nothing was written to %s" % (
            "terminated" if isinstance(exc, cliargs.Terminated) else "interrupted", args.output),
            file=sys.stderr)
        return cliargs.interrupt_status(exc)
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


def _pattern_text(arg: str) -> str:
    """The pattern given on the command line: a file's contents, or the text itself."""
    import os

    if os.path.isfile(arg):
        try:
            with open(arg) as f:
                return f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise cliargs.UsageError("cannot read the pattern file %s: %s" % (arg, exc)) from None
    if ":=" not in arg:
        raise cliargs.UsageError("%s is neither a pattern file nor a pattern text (a pattern "
                                 "text defines Name := ...)" % arg)
    return arg


def cmd_search(args) -> int:
    import warnings

    from .search import PatternWarning, search

    text = _pattern_text(args.pattern)
    bar = _progress_bar()
    try:
        parts = _in_parts(args, causal=True)
        with warnings.catch_warnings():  # m.warnings says them, once each, below
            warnings.simplefilter("ignore", PatternWarning)
            if parts is not None:
                with cliargs.terminate_as_interrupt(), parts:  # Ctrl-C: scratch removed
                    parts.progress.fn = bar
                    m = parts.search(text, name=args.name, limit=args.limit,
                                     threads=args.threads, teams=args.teams)
                trace = m._trace
            else:
                trace = _open_for_analysis(args, bar)
                m = search(trace, text, name=args.name, limit=args.limit, progress=bar,
                           threads=args.threads, teams=args.teams, root=0)
    finally:
        bar.close()
    say = sys.stderr if _writes_outputs() else open(os.devnull, "w")
    for message in m.warnings:  # a class matching no event: zero matches, not an error
        print("earlc: %s: %s" % ("error" if args.strict else "warning", message), file=say)
    if m.warnings and args.strict:
        return 2
    if not _writes_outputs():
        return 0
    if args.format == "json":
        _write(args, json.dumps(m.to_dict(), indent=1))
        return 0
    lines = ["%s: %d match%s%s (%s nodes, %s checks, %.3f s)" % (
        m.pattern, len(m), "" if len(m) == 1 else "es",
        ", stopped at the limit" if m.truncated else "", m.stats["nodes"],
        m.stats["checks"], m.stats["seconds"])]
    if len(m):
        df = m.to_dataframe()
        shown = []
        for c in m.columns:
            shown += [c, c + ".time", c + ".location", c + ".kind", c + ".region"]
        # times as every output shows them: seconds from the trace's start, to the tick
        digits = max(0, len(str(max(trace.timer_resolution, 1))) - 1)
        lines.append(df[shown].to_string(
            index=False, formatters={c + ".time": ("{:.%df}" % digits).format
                                     for c in m.columns}))
    _write(args, "\n".join(lines))
    return 0


def cmd_record(args) -> int:
    from .record import RecordError, run_and_assemble

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    with cliargs.user_errors(RecordError), cliargs.terminate_as_interrupt():
        # SIGTERM ends the run and keeps what it recorded
        trace, run = run_and_assemble(command, args.output, args.timeout, args.force)
    how = " (ended after the %g s timeout)" % args.timeout if run.timed_out else ""
    incomplete = trace.warnings.counts.get("location_incomplete", 0)
    n = len(trace.locations)
    print("earlc record: %d events of %d process%s in %.2f s%s -> %s%s"
          % (len(trace), n, "" if n == 1 else "es", run.seconds, how, trace.path,
             "; %d incomplete (earlc analyze says where they stopped)" % incomplete
             if incomplete else ""), file=sys.stderr)
    for what, n in run.dropped.items():
        print("earlc record: warning: %d %s" % (n, what), file=sys.stderr)
    return run.status


def _plugin_options(parser) -> None:
    parser.add_argument("--plugin", action="append", metavar="FILE", type=cliargs.existing_file,
                        help="load every Property class of this Python file (repeatable)")
    parser.add_argument("--strict", action="store_true",
                        help="a property that raises, or an installed package that fails to "
                             "load, is an error (default: switched off, listed in the warnings)")


def _trace_argument(parser) -> None:
    parser.add_argument("trace", help="OTF2 anchor file (traces.otf2, or any NAME.otf2) or "
                                      "the folder that holds it")
    parser.add_argument("--salvage", action="store_true",
                        help="an event file cut short (a crashed run) keeps the records before "
                             "the cut, with a warning saying how much was lost (default: "
                             "refused)")


def _output_option(parser, required: bool = False,
                   text: str = "write to FILE instead of standard output") -> None:
    parser.add_argument("-o", "--output", type=output_file, metavar="FILE", required=required,
                        help=text)


def _memory_options(parser) -> None:
    parser.add_argument("--memory", type=cliargs.memory_size, metavar="SIZE",
                        help="budget of resident memory, e.g. 8G or 512M: a trace that needs "
                             "more is analysed in parts one after another, with the same "
                             "results (default: what the machine has available; 'unlimited': "
                             "always in one piece; docs/memory.md)")
    parser.add_argument("--scratch", type=cliargs.scratch_folder, metavar="DIR",
                        help="where an analysis in parts keeps what crosses parts, removed at "
                             "its end (default: the system's temporary folder)")


def _threads_option(parser, text: str = "reading threads (default: one per core)") -> None:
    parser.add_argument("--threads", type=cliargs.threads, default=0, help=text)


def _version_text() -> str:
    """'earlc 0.1.0 (libotf2 3.0.2, Python 3.11.7)'."""
    import platform

    from . import __version__, _core

    otf2 = getattr(_core, "OTF2_VERSION", None)
    return "earlc %s (%sPython %s)" % (__version__, "libotf2 %s, " % otf2 if otf2 else "",
                                       platform.python_version())


def build_parser() -> Parser:
    p = Parser(prog="earlc", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=_version_text(),
                   help="earlc's version and the libotf2 it reads with, then exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    an = sub.add_parser("analyze", help="find and quantify inefficiencies",
                        description="Detect the performance properties of a trace and report "
                                    "the time they cost per call path and location.")
    _trace_argument(an)
    an.add_argument("--properties", type=cliargs.name_list, metavar="A,B,...",
                    help="comma-separated property names or groups (default: every "
                         "property but the root causes, which 'all' or 'root_cause' add; "
                         "their parents and declared inputs are added)")
    _plugin_options(an)
    an.add_argument("--format", choices=["text", "json", "cube", "html"], default="text",
                    help="cube: a CUBE4 file for Cube and Scalasca (needs -o); html: the page "
                         "of earlc report (needs -o)")
    _output_option(an)
    an.add_argument("--top", type=count(0), default=5,
                    help="properties detailed in the text report, occurrences kept each (5)")
    an.add_argument("--rows", type=count(1), default=5,
                    help="call paths, locations and occurrences shown (5)")
    _threads_option(an, "threads for reading and analysing (default: one per core; the "
                        "report is the same for any number)")
    _memory_options(an)
    an.set_defaults(func=cmd_analyze)

    pr = sub.add_parser("properties", help="list the properties available",
                        description="List the built-in properties, those of installed packages "
                                    "(entry-point group earlc.properties) and of --plugin "
                                    "files, with title, parent, unit and subscription.")
    _plugin_options(pr)
    pr.add_argument("--format", choices=["text", "json"], default="text")
    _output_option(pr)
    pr.set_defaults(func=cmd_properties)

    info = sub.add_parser("info", help="summarise a trace")
    _trace_argument(info)
    info.add_argument("--format", choices=["text", "json"], default="text")
    _output_option(info)
    _threads_option(info)
    info.set_defaults(func=cmd_info)

    rc = sub.add_parser("races", help="message races of wildcard receives",
                        description="List, for every wildcard receive, the sends it could have "
                                    "taken on another run (matches-before order, lazy vector "
                                    "clocks), other nondeterministic calls and resource leaks.")
    _trace_argument(rc)
    rc.add_argument("--wildcard", metavar="all|recorded|REGION|RANKS",
                    help="which receives asked for any source: every one (all), what the trace "
                         "recorded (the default when it recorded it), those called inside "
                         "REGION, or those of RANKS (0,2-4)")
    rc.add_argument("--clocks", choices=["vector", "lamport"], default="vector",
                    help="vector clocks find every race; lamport is cheaper and may miss some")
    rc.add_argument("--format", choices=["text", "json"], default="text")
    _output_option(rc)
    rc.add_argument("--top", type=count(0), default=10,
                    help="receives detailed in the text report (10)")
    _threads_option(rc)
    _memory_options(rc)
    rc.set_defaults(func=cmd_races)

    ex = sub.add_parser("export", help="write a trace window for a timeline viewer",
                        description="Write a time window of the trace as Chrome trace-event "
                                    "JSON for Perfetto: regions, wait states and messages "
                                    "(docs/exports.md).")
    _trace_argument(ex)
    ex.add_argument("--format", choices=["perfetto"], default="perfetto")
    _output_option(ex, required=True, text="the JSON file to write")
    _window_arguments(ex)
    ex.add_argument("--no-wait-states", action="store_true",
                    help="skip the analysis: regions and messages only")
    _threads_option(ex)
    ex.set_defaults(func=cmd_export)

    pl = sub.add_parser("plot", help="draw a picture (needs matplotlib)",
                        description="Draw a timeline of a window, the analysis (metric tree and "
                                    "heat maps) or the communication matrix as PNG, SVG or PDF "
                                    "(docs/exports.md).")
    pl.add_argument("what", choices=["timeline", "report", "comm"], help="the picture")
    _trace_argument(pl)
    _output_option(pl, required=True,
                   text="the picture file; .png, .svg or .pdf chooses the format")
    _window_arguments(pl, "timeline: ")
    pl.add_argument("--no-wait-states", action="store_true",
                    help="timeline: skip the analysis, draw regions and messages only")
    pl.add_argument("--no-metrics", action="store_true",
                    help="timeline: no panels of the counters sampled on METRIC locations")
    pl.add_argument("--value", choices=["bytes", "count"], default="bytes",
                    help="comm: bytes or messages (bytes)")
    pl.add_argument("--by", choices=["location", "rank"], default="location",
                    help="comm: between locations or MPI ranks (location)")
    pl.add_argument("--logical", action="store_true",
                    help="timeline: logical steps instead of time, coloured by lateness "
                         "(docs/workflow.md)")
    _threads_option(pl, "threads for reading and analysing (default: one per core)")
    pl.set_defaults(func=cmd_plot)

    rp = sub.add_parser("report", help="write the analysis as one HTML page",
                        description="Analyse the trace and write one self-contained HTML page: "
                                    "the metric tree, the worst call paths and locations, the "
                                    "pictures and the warnings (docs/exports.md).")
    _trace_argument(rp)
    _output_option(rp, required=True, text="the page to write (.html)")
    rp.add_argument("--top", type=count(0), default=5, help="properties detailed (5)")
    rp.add_argument("--rows", type=count(1), default=5,
                    help="call paths, locations, occurrences (5)")
    rp.add_argument("--no-pictures", action="store_true", help="leave the pictures out")
    rp.add_argument("--pattern", help="a pattern file (or text) whose matches the timeline "
                                      "marks (docs/patterns.md)")
    rp.add_argument("--pattern-name", help="the pattern of the text to search (default: the "
                                           "last one)")
    _memory_options(rp)
    _threads_option(rp, "threads for reading and analysing (default: one per core)")
    rp.set_defaults(func=cmd_report)

    from .synth import KINDS, OPTIONS
    syn = sub.add_parser("synth", help="generate a trace with known inefficiencies",
                         description="Simulate a program and write its trace plus expected.json "
                                     "(see docs/generator.md).")
    syn.add_argument("kind", choices=KINDS, help="the program to simulate")
    syn.add_argument("-o", "--output", required=True, type=cliargs.output_folder, metavar="DIR",
                     help="archive folder to create")
    syn.add_argument("--overwrite", action="store_true", help="replace an existing archive")
    for name, text in OPTIONS.items():
        flag = "--" + name.replace("_", "-")
        if name in ("wrong_order", "any_source"):
            syn.add_argument(flag, type=int, choices=[0, 1], dest=name, help=text)
        else:
            syn.add_argument(flag, type=int, dest=name, help=text)
    syn.set_defaults(func=cmd_synth)

    se = sub.add_parser("search", help="find the matches of a causal pattern",
                        description="Search the happened-before order of a trace for the "
                                    "matches of a pattern (see docs/patterns.md).")
    _trace_argument(se)
    se.add_argument("pattern", help="a pattern file, or the pattern text itself")
    se.add_argument("--name", help="the pattern of the text to search (default: the last one)")
    se.add_argument("--limit", type=count(1), help="the first K matches in canonical order")
    se.add_argument("--format", choices=["text", "json"], default="text")
    _output_option(se)
    _threads_option(se, "threads for reading, timestamps and the search (default: one per "
                        "core); the matches do not depend on it")
    _memory_options(se)
    se.add_argument("--teams", type=count(1, 4096), default=1,
                    help="teams of threads sharing work (default: 1)")
    se.add_argument("--strict", action="store_true",
                    help="a class that matches no event is an error (exit status 2), not a "
                         "warning with zero matches")
    se.set_defaults(func=cmd_search)

    rec = sub.add_parser("record", help="record an MPI program's trace",
                         description="Run COMMAND (e.g. mpiexec -n 4 ./prog) with earlc's MPI "
                                     "recorder and write DIR/traces.otf2 (docs/record.md). "
                                     "The exit status is the command's.")
    rec.add_argument("-o", "--output", type=cliargs.output_folder, metavar="DIR",
                     help="archive folder (default: earlc-DATE-TIME)")
    rec.add_argument("--timeout", type=float, help="end the run after SECONDS "
                     "(SIGTERM, then SIGKILL) and keep what it recorded")
    rec.add_argument("--force", action="store_true", help="replace an archive at DIR")
    rec.add_argument("command_line", nargs=argparse.REMAINDER, metavar="COMMAND ...")
    rec.set_defaults(func=cmd_record)

    from . import verify_cli
    verify_cli.add_parser(sub)
    from .workflow_cli import add_workflow_commands  # check, annotate, compare, logical
    add_workflow_commands(sub)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    from .analysis import PropertyError
    from .parts import mpi_world_size
    from .search import PatternError

    cliargs.user_error_types(PropertyError, PatternError)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.error("name a command: %s" % ", ".join(
            parser._subparsers._group_actions[0].choices))
    func = args.func
    if args.func not in _IN_PARTS and (mpi_world_size() or 1) > 1:
        func = _one_process_only
    return cliargs.run_command(func, args)


def _one_process_only(args) -> int:
    """A command that an MPI job does not divide: P copies of it would each do the
    whole work and write the same files."""
    raise cliargs.UsageError(
        "earlc %s runs in one process: start it without mpiexec (an MPI job of several "
        "processes runs %s in parts; docs/parallel.md)"
        % (args.command, ", ".join("earlc " + f.__name__[4:] for f in _IN_PARTS)))


#: the commands an MPI job of several processes runs in parts, each holding its share
_IN_PARTS = (cmd_analyze, cmd_search, cmd_races, cmd_report)
