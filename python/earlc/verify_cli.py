"""`earlc verify`: the subcommand's arguments and its run (docs/verify.md).

    earlc verify [-o DIR] [--timeout SECONDS] [--max-runs N] [--bound K]
                 [--compare-output] [--replay SCHEDULE] [--format text|json]
                 [--force] -- COMMAND ARGS...

Exit status as a test runner's: 0 when no run failed, 1 when a schedule
failed, 2 for a usage error (one line on standard error).
"""
from __future__ import annotations

import argparse
import sys

from . import cliargs


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % text) from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive, not %s" % text)
    return value


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="run an MPI program in every match order of its wildcard "
                                      "receives",
                       description="Run COMMAND (e.g. mpiexec -n 4 ./prog) with earlc's recorder, "
                                   "then again once per alternative match of its wildcard "
                                   "receives (MPI_ANY_SOURCE), forcing it, and report the "
                                   "schedules that deadlock, abort, crash or change the output "
                                   "(docs/verify.md). Exit status: 0 no run failed, 1 a "
                                   "schedule failed, 2 a usage error.")
    p.add_argument("-o", "--output", metavar="DIR", type=cliargs.output_folder,
                   help="the folder of the runs (default: earlc-verify-DATE-TIME)")
    p.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS",
                   help="end a run after SECONDS and call it a deadlock (default: 60 s for the "
                        "first run, then 5 times its time, at least 10 s)")
    p.add_argument("--max-runs", type=cliargs.count(1), metavar="N",
                   help="at most N runs in all")
    p.add_argument("--bound", type=cliargs.count(1), metavar="K",
                   help="at most K flipped decisions per run (bounded mixing)")
    p.add_argument("--compare-output", action="store_true",
                   help="a run whose standard output differs from the first run's fails")
    p.add_argument("--replay", metavar="SCHEDULE", type=cliargs.existing_file,
                   help="run this schedule file once, exactly, instead of the search")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--force", action="store_true", help="replace an earlier verification in DIR")
    p.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- COMMAND ...")
    p.set_defaults(func=run)


def _progress(run, pending: int) -> None:
    flip = run.flip
    what = ("rank %d wildcard #%d from %d" % (flip.rank, flip.index, flip.source)
            if flip else "the schedule")
    sys.stderr.write("earlc verify: run %d (%s): %s in %.1f s; %d alternative%s pending\n"
                     % (run.number, what, run.outcome, run.seconds, pending,
                        "" if pending == 1 else "s"))
    sys.stderr.flush()


def run(args) -> int:
    from .record import RecordError
    from .verify import verify

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    if not command:
        raise cliargs.UsageError("no command to verify: earlc verify [OPTIONS] -- mpiexec -n N "
                                 "./prog ARGS")
    try:
        v = verify(command, out=args.output, timeout=args.timeout, max_runs=args.max_runs,
                   bound=args.bound, compare_output=args.compare_output, replay=args.replay,
                   force=args.force, progress=_progress if sys.stderr.isatty() else None)
    except RecordError as exc:  # VerifyError too: not an MPI program, a schedule that does not fit
        raise cliargs.UsageError(str(exc)) from None
    cliargs.write_output(None, v.to_json(indent=1) if args.format == "json" else v.to_text())
    return 130 if v.interrupted else v.status
