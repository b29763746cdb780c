"""Verification by replay: `earlc verify` and `earlc.verify(command, ...)`.

    v = earlc.verify(["mpiexec", "-n", "3", "./prog"], out="check", timeout=10)
    v.status                 # 0: every run completed, 1: a schedule failed
    v.to_dataframe()         # one row per run
    print(v.to_text())

A wildcard receive (MPI_ANY_SOURCE) lets the messages' arrival order choose
what a program does; a bug that needs another order than the one the test
machine gives stays hidden.  This module finds it the way DAMPI does (Vo's
dissertation, chapter 5): run the program once, free, with the recorder;
list the alternative matches of its wildcard operations (earlc.races: the
sends each could have taken, in the matches-before order); then run the
program again once per alternative, the recorder forcing every wildcard
operation that matched before the chosen one to the source it took, the
chosen one to the alternative, and leaving the rest free.  Each such run is
recorded, and its own new decisions are explored in turn: a depth-first
search of the tree of match decisions, where a run's children flip only
decisions it made freely, so no order is run twice.  `bound` limits the
flips a run may carry (bounded mixing), `max_runs` the runs.

Every run has an outcome (completed, deadlock, abort, signal, exit,
output, or unforceable when the schedule could not be applied), a schedule
file naming every decision it made (`--replay` runs it again), and an
archive.  verify_schedule.py reads the decisions and writes schedules;
verify_report.py writes the reports.  docs/verify.md is the user's account.
"""
from __future__ import annotations

import difflib
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .record import RecordError, run_and_assemble
from .record_files import resolve_addresses
from .verify_schedule import (Decision, Forced, RunDecisions, VerifyError, decisions_of,
                              find_alternatives, forced_from, load_schedule, recorder_text,
                              schedule_json)
from .verify_report import OUTCOMES

#: the outcomes a verification fails on (OUTCOMES names them all)
FAILED = ("deadlock", "abort", "signal", "exit", "output")

#: the timeout of the first run when none is given, and the least of the others'
FIRST_TIMEOUT = 60.0
LEAST_TIMEOUT = 10.0
#: the others': this many times the first run's time
TIMEOUT_FACTOR = 5.0


@dataclass
class Run:
    """One run of the program.

    number: 0 for the first (free) run; parent: the run whose decision it
    flipped; forced: the schedule it was started with (the flipped decisions
    carry flipped=True); outcome: one of OUTCOMES; status: the command's
    exit status (124 when the timeout ended it); seconds; folder: the run's
    folder; archive: its OTF2 archive (None when removed: completed runs
    other than the first); schedule: the schedule file of every decision it
    made; decisions: those decisions (with their alternatives); stopped: the
    stop report of a run that did not end well (earlc.analysis.stopped);
    not_applied: [(Forced, why)] the decisions of `forced` the run could not
    follow; output_differs: lines of its output not in the first run's."""

    number: int
    parent: Optional[int]
    forced: List[Forced]
    outcome: str = "completed"
    status: int = 0
    seconds: float = 0.0
    folder: str = ""
    archive: Optional[str] = None
    schedule: str = ""
    output: str = ""
    decisions: List[Decision] = field(default_factory=list)
    stopped: Optional[dict] = None
    stopped_text: str = ""
    not_applied: List[Tuple[Forced, str]] = field(default_factory=list)
    output_differs: List[str] = field(default_factory=list)
    signal: Optional[int] = None
    made: Dict[int, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.outcome in FAILED

    @property
    def flips(self) -> List[Forced]:
        return [f for f in self.forced if f.flipped]

    @property
    def flip(self) -> Optional[Forced]:
        """The decision this run was made to explore (its last flip)."""
        flips = self.flips
        return flips[-1] if flips else None

    @property
    def applied(self) -> bool:
        return not self.not_applied


@dataclass
class _Branch:
    parent: int
    forced: List[Forced]


class _Context:
    def __init__(self, command, folder, timeout, compare_output, progress):
        self.command = list(command)
        self.folder = folder
        self.timeout = timeout
        self.compare_output = compare_output
        self.progress = progress
        self.first_lines: Optional[List[str]] = None


def verify(command: Sequence[str], out: Optional[str] = None, timeout: Optional[float] = None,
           max_runs: Optional[int] = None, bound: Optional[int] = None,
           compare_output: bool = False, replay: Optional[str] = None, force: bool = False,
           progress: Optional[Callable[["Run", int], None]] = None) -> "Verification":
    """Verify an MPI program over the match orders of its wildcard receives.

    command: the command that runs it, e.g. ["mpiexec", "-n", "4", "./prog"].
    out: the folder of the runs (default earlc-verify-DATE-TIME); force
    replaces an earlier verification there.  timeout: seconds after which a
    run is ended and called a deadlock (default: 60 s for the first run, for
    the others 5 times the first run's time, at least 10 s).  max_runs: at
    most this many runs in all; bound: at most this many flipped decisions
    per run (bounded mixing).  compare_output: a run whose standard output
    differs from the first run's fails.  replay: a
    schedule file to run once, exactly, instead of the search.
    progress(run, pending) is called after every run.

    Raises VerifyError (an earlc.RecordError) for bad input: not an MPI
    program, no wildcard operation (one run suffices), a schedule that does
    not fit the program."""
    command = list(command)
    if not command:
        raise VerifyError("no command to verify")
    for name, value, least in (("--timeout", timeout, None), ("--max-runs", max_runs, 1),
                               ("--bound", bound, 1)):
        if value is None:
            continue
        if least is None and value <= 0:
            raise VerifyError("%s must be positive, not %s" % (name, value))
        if least is not None and value < least:
            raise VerifyError("%s must be at least %d, not %s" % (name, least, value))
    if replay is not None and (max_runs is not None or bound is not None):
        raise VerifyError("--replay runs one schedule: --max-runs and --bound do not apply")
    forced = []
    if replay is not None:
        forced = load_schedule(replay)
        processes = _processes_of(command)
        for n, f in enumerate(forced, 1):
            if processes is not None and f.rank >= processes:
                raise VerifyError("%s does not fit the program: decision %d (%s) cannot be "
                                  "applied: the command starts %d processes"
                                  % (replay, n, f.text(), processes))
    target = os.path.abspath(out or default_folder())
    created = not os.path.exists(target)
    folder = _prepare_folder(target, force)
    ctx = _Context(command, folder, timeout or FIRST_TIMEOUT, compare_output, progress)
    try:
        first = _execute(ctx, 0, None, forced)
    except RecordError:
        # not an MPI program, command not found, ...: leave no empty folder behind
        if created and not os.listdir(folder):
            os.rmdir(folder)
        raise
    v = Verification(command, folder, [first], timeout=timeout, max_runs=max_runs, bound=bound,
                     compare_output=compare_output, replay=replay)
    if replay is not None:
        _check_replay(replay, first)
        v._finish()
        return v
    if not first.decisions and not any(first.made.values()):
        if not first.failed:
            raise VerifyError("%s made no wildcard receive or probe (MPI_ANY_SOURCE): its "
                              "messages can match in one order only, so one run suffices; it "
                              "completed (%s)" % (" ".join(command), first.folder))
        v.note = ("the program made no wildcard receive or probe: one run suffices, and it "
                  "failed")
        v._finish()
        return v
    if timeout is None:
        ctx.timeout = max(LEAST_TIMEOUT, TIMEOUT_FACTOR * first.seconds) \
            if first.outcome == "completed" else FIRST_TIMEOUT
    _search(ctx, v)
    v._finish()
    return v


def _search(ctx: _Context, v: "Verification") -> None:
    """Depth first over the match decisions: the alternatives of a run's own
    decisions are pushed after it ran; the last decision's are tried first."""
    stack: List[_Branch] = []
    _push_branches(v, v.runs[0], stack)
    if ctx.progress:
        ctx.progress(v.runs[0], len(stack))
    try:
        while stack:
            if v.max_runs is not None and len(v.runs) >= v.max_runs:
                v.cut_max_runs = len(stack)
                break
            b = stack.pop()
            run = _execute(ctx, len(v.runs), b.parent, b.forced)
            v.runs.append(run)
            _push_branches(v, run, stack)
            if ctx.progress:
                ctx.progress(run, len(stack))
    except KeyboardInterrupt:
        # Ctrl-C ends the search, not the report of what was run
        v.interrupted = True
        v.note = "interrupted after %d runs, with %d alternatives unexplored" % (len(v.runs),
                                                                                 len(stack))


def _push_branches(v: "Verification", run: Run, stack: List[_Branch]) -> None:
    """One branch per alternative of every decision the run made freely: the
    run's schedule, its free decisions before that one as they were, that one
    flipped.  A run that could not follow its schedule is not extended: its
    later decisions are not those of the order it was to explore."""
    if not run.applied:
        return
    given = {f.key for f in run.forced}
    flips = len(run.flips)
    prefix = list(run.forced)
    for d in run.decisions:
        if d.key in given:
            continue
        for alt in d.alternatives:
            if v.bound is not None and flips + 1 > v.bound:
                v.cut_bound += 1
                continue
            stack.append(_Branch(run.number, prefix + [forced_from(d, alt, d.site_text)]))
        prefix.append(forced_from(d, None, d.site_text))


# -- one run ------------------------------------------------------------------------------

def _execute(ctx: _Context, number: int, parent: Optional[int], forced: List[Forced]) -> Run:
    """Run the program once under the schedule `forced`, record it, and
    classify how it ended."""
    run = Run(number, parent, list(forced))
    run.folder = os.path.join(ctx.folder, "run-%d" % number)
    hidden = os.path.join(ctx.folder, ".run-%d" % number)
    env = {}
    if forced:
        with open(hidden + ".schedule", "w") as f:
            f.write(recorder_text(forced))
        env["EARLC_RECORD_SCHEDULE"] = hidden + ".schedule"
    try:
        with open(hidden + ".stdout", "wb") as out, open(hidden + ".stderr", "wb") as err:
            trace, result = run_and_assemble(ctx.command, run.folder, ctx.timeout, False,
                                             env=env, stdout=out, stderr=err)
    finally:
        if os.path.exists(hidden + ".schedule"):
            os.remove(hidden + ".schedule")
        if os.path.isdir(run.folder):
            for name, final in ((".stdout", "output.txt"), (".stderr", "errors.txt")):
                if os.path.exists(hidden + name):
                    os.replace(hidden + name, os.path.join(run.folder, final))
        for name in (".stdout", ".stderr"):
            if os.path.exists(hidden + name):
                os.remove(hidden + name)
    if result.interrupted:
        raise KeyboardInterrupt
    run.status, run.seconds = result.status, result.seconds
    run.archive = trace.path
    run.output = os.path.join(run.folder, "output.txt")
    rd = decisions_of(result.records, trace)
    if rd.schedule_errors:
        raise VerifyError("the recorder could not read the schedule: %s" % rd.schedule_errors[0])
    find_alternatives(trace, rd.decisions)
    _name_sites(result.records, rd)
    run.decisions, run.made = rd.decisions, rd.made
    run.not_applied = _not_applied(run, rd, result.records)
    _classify(ctx, run, rd, result)
    if run.outcome != "completed" or number == 0:
        from .analysis.stopped import format_stop_report, stop_report

        run.stopped = stop_report(trace)
        if run.stopped:
            run.stopped_text = format_stop_report(trace, run.stopped)
    given = {f.key: f for f in run.forced}
    kept = [given[d.key] if d.key in given and d.source == given[d.key].source
            else forced_from(d, None, d.site_text) for d in run.decisions]
    run.schedule = os.path.join(run.folder, "schedule.json")
    with open(run.schedule, "w") as f:
        f.write(schedule_json(kept, ctx.command, len(result.records)) + "\n")
    if number > 0 and run.outcome == "completed":
        _remove_archive(run.folder)
        run.archive = None
    return run


def _remove_archive(folder: str) -> None:
    """The OTF2 archive of a run (traces.otf2, traces.def, traces/), not its
    schedule and output."""
    for name in ("traces.otf2", "traces.def"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            os.remove(path)
    shutil.rmtree(os.path.join(folder, "traces"), ignore_errors=True)


def _name_sites(records, rd: RunDecisions) -> None:
    """'main (prog.c:31)' for every decision, through the program's segments
    and addr2line; the call's name where it cannot be resolved."""
    by_rank = {r.rank: r for r in records}
    wanted: Dict[int, List[int]] = {}
    for d in rd.decisions:
        wanted.setdefault(d.rank, []).append(d.site)
    for rank, addresses in wanted.items():
        places = resolve_addresses(by_rank[rank].objects, addresses) if rank in by_rank else {}
        for d in rd.decisions:
            if d.rank == rank:
                d.site_text = places.get(d.site, "")


def _not_applied(run: Run, rd: RunDecisions, records) -> List[Tuple[Forced, str]]:
    """The decisions of run.forced the run did not follow, and why."""
    out = []
    made = {d.key: d for d in rd.decisions}
    finished = {r.rank for r in records if r.finalized}
    stuck = {(o.rank, o.index): o for o in rd.open if o.forced >= 0}
    missed = {(rank, index): what for rank, index, what in rd.misses}
    for f in run.forced:
        d = made.get(f.key)
        if f.key in missed:
            what = missed[f.key]
            if what.startswith("call "):
                why = "its wildcard operation #%d is %s, not %s" % (f.index, what[5:], f.call)
            else:
                m = re.match(r"source (-?\d+) of (\d+)", what)
                why = ("source %d is not a rank of its communicator (%s processes)"
                       % (f.source, m.group(2)) if m else what)
            out.append((f, why))
        elif f.key in stuck:
            o = stuck[f.key]
            how = "kept polling with MPI_Iprobe" if o.polling else "waited in %s" % o.call
            out.append((f, "rank %d %s for a message from %d that never came: on this path the "
                           "program did not send it" % (f.rank, how, f.source)))
        elif d is None:
            if f.rank in finished:
                out.append((f, "rank %d made %d wildcard operation%s: #%d was never reached"
                               % (f.rank, rd.made.get(f.rank, 0),
                                  "" if rd.made.get(f.rank, 0) == 1 else "s", f.index)))
        elif d.source != f.source or d.call != f.call:
            out.append((f, "it took %d instead" % d.source))
    return out


_SIGNAL_TEXT = re.compile(rb"\(signal (\d+)\)")


def _classify(ctx: _Context, run: Run, rd: RunDecisions, result) -> None:
    """The outcome of a run, from how the command ended and the records."""
    records = result.records
    stuck_forced = any(o.forced >= 0 for o in rd.open)
    if result.timed_out:
        run.outcome = "unforceable" if stuck_forced else "deadlock"
        return
    if any(r.abort for r in records):
        run.outcome = "abort"
        return
    unfinished = [r for r in records if not r.finalized]
    if any(r.exit is not None for r in unfinished):
        run.outcome = "exit"  # a process left without MPI_Finalize; the others were ended
        return
    if unfinished or result.status != 0:
        # MPICH's mpiexec exits with a killed process's signal number and says so
        # in its output; other launchers and shells with 128 + the number
        said = None
        for name in ("output.txt", "errors.txt"):
            path = os.path.join(run.folder, name)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    m = _SIGNAL_TEXT.search(f.read())
                if m:
                    said = int(m.group(1))
                    break
        if said is None and result.status > 128:
            said = result.status - 128
        if said is not None and (unfinished or result.status > 128):
            run.outcome, run.signal = "signal", said
        else:
            run.outcome = "exit"
        return
    if run.flip is not None and not run.applied:
        run.outcome = "unforceable"
        return
    with open(run.output, "rb") as f:
        lines = f.read().decode(errors="replace").splitlines()
    if run.number == 0:
        ctx.first_lines = lines
    elif ctx.compare_output and ctx.first_lines is not None and lines != ctx.first_lines:
        diff = difflib.unified_diff(ctx.first_lines, lines, n=1, lineterm="")
        run.output_differs = [d for d in list(diff)[2:] if not d.startswith("@@")]
        run.outcome = "output"
        return
    run.outcome = "completed"


def _check_replay(path: str, run: Run) -> None:
    """A replayed schedule must fit the program: every decision applied."""
    if not run.not_applied:
        return
    f, why = run.not_applied[0]
    n = next(i for i, g in enumerate(run.forced, 1) if g.key == f.key)
    raise VerifyError("%s does not fit the program: decision %d (%s) cannot be applied: %s "
                      "(the run is in %s)" % (path, n, f.text(), why, run.folder))


# -- input --------------------------------------------------------------------------------

def _processes_of(command: Sequence[str]) -> Optional[int]:
    """The process count of an mpiexec/mpirun command line (-n, -np), if given."""
    if not command or not os.path.basename(command[0]).startswith(("mpiexec", "mpirun")):
        return None
    for i, arg in enumerate(command[1:-1], 1):
        if arg in ("-n", "-np") and command[i + 1].isdigit():
            return int(command[i + 1])
    return None


def default_folder() -> str:
    return time.strftime("earlc-verify-%Y%m%d-%H%M%S")


def _prepare_folder(folder: str, force: bool) -> str:
    """An empty folder for the runs: made, or (force) rid of an earlier
    verification's files, and of no other file."""
    if os.path.exists(folder):
        if not os.path.isdir(folder):
            raise VerifyError("%s exists and is not a folder" % folder)
        names = os.listdir(folder)
        ours = [n for n in names if n == "verify.json" or re.fullmatch(r"\.?run-\d+(\.\w+)?", n)]
        if names and not force:
            raise VerifyError("%s exists and is not empty (--force replaces an earlier "
                              "verification there)" % folder)
        if names and "run-0" not in ours:
            raise VerifyError("%s holds files but no earlier verification; not replacing "
                              "it even with --force" % folder)
        for n in ours:
            path = os.path.join(folder, n)
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
    os.makedirs(folder, exist_ok=True)
    return folder


# -- the result ---------------------------------------------------------------------------

class Verification:
    """The result of `earlc.verify`: every run, how it ended, and how much of
    the search was cut.  status: 0 when no run failed, 1 otherwise (the exit
    status of `earlc verify`)."""

    def __init__(self, command, folder, runs, timeout=None, max_runs=None, bound=None,
                 compare_output=False, replay=None):
        self.command: List[str] = list(command)
        self.folder: str = folder
        self.runs: List[Run] = runs
        self.timeout, self.max_runs, self.bound = timeout, max_runs, bound
        self.compare_output, self.replay = compare_output, replay
        #: alternatives left unexplored because a run would have carried more than
        #: `bound` flips, and those pending when `max_runs` stopped the search
        self.cut_bound = 0
        self.cut_max_runs = 0
        self.note = ""
        #: Ctrl-C ended the search (`earlc verify` then exits with 130)
        self.interrupted = False

    def _finish(self) -> None:
        from .verify_report import write_report

        write_report(self)

    @property
    def status(self) -> int:
        return 1 if self.failed else 0

    @property
    def failed(self) -> List[Run]:
        return [r for r in self.runs if r.failed]

    @property
    def unforceable(self) -> List[Tuple[Run, Forced, str]]:
        """(run, decision, why): the alternatives a run could not force."""
        out = []
        for r in self.runs:
            for f, why in r.not_applied:
                if f.flipped:
                    out.append((r, f, why))
        return out

    def __repr__(self) -> str:
        return "<earlc.Verification %d runs, %d failed>" % (len(self.runs), len(self.failed))

    def to_dataframe(self):
        from .verify_report import runs_dataframe

        return runs_dataframe(self)

    def to_dict(self) -> dict:
        from .verify_report import report_dict

        return report_dict(self)

    def to_json(self, indent=None) -> str:
        import json

        return json.dumps(self.to_dict(), indent=indent)

    def to_text(self) -> str:
        from .verify_report import report_text

        return report_text(self)
