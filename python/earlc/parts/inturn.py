"""A trace bigger than memory: its parts analysed one after another in one
process, with what crosses parts spilled to a scratch folder.

The analysis in parts (docs/parallel.md) splits the locations into parts of
whole processes; each part holds its own events plus the ghosts of other
locations that its own events point to, and the catalog, run unchanged on
each part, gives the values of the part's own locations exactly.  Under MPI
the parts run at once and trade their ghosts by messages.  Here they run in
turn, and the budget of resident memory decides how many there are:

  pass 1, part by part: read the part's own locations; write the ghosts they
          give every other part, and each own location's timestamps, to the
          scratch folder (Scratch, spill.LocationTimes); drop the part.
  pass 2, part by part: read the part's own locations again, add the ghosts
          the other parts wrote for it (one C call: earl_part_add_packed),
          order, analyse with `own` (engine.run), and keep what it found, said
          in terms of keys (timestamp, location, position in the whole trace)
          instead of the part's event ids (merge._findings); drop the part.
          The next part is opened on a thread (ahead.py) while one is
          analysed, where both fit in the budget (_open_ahead_fits).
  again:  with properties that compute across parts (the root causes), a part
          stops at each of their collective steps until every part wrote its
          data there (steps.py), and pass 2 runs again, one step further,
          until no part stops: the last run gives the findings.
  merge:  turn the keys into the whole trace's event ids and instance numbers
          (counts over the spilled timestamps and instance keys) and merge the
          findings as the MPI analysis does (merge.merge): the same report.

Only one part is held at a time (besides the next one's reading or opening
where the budget leaves room for it), so the peak is that of the largest
part: its own events and ghosts times the analysis's bytes per event, plus
the fixed costs (budget.Model).  The partition is the MPI one (plan.plan) with as
many parts as the budget needs; the ghosts are known only once pass 1 has
exported them, so the plan assumes a share of ghosts, pass 1 measures them
(the first part's exports early, all of them at its end), and a plan they
overflow is made again with more parts.  A budget in which even one process
with its ghosts does not fit is refused with the smallest budget that works.
"""
from __future__ import annotations

import functools
import gc
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import numpy as np

from .. import _core
from .budget import DEFAULT, ROOT_CAUSES, BudgetError, Model, format_size, parse_size
from .plan import Partition, plan, process_of_locations
from .part import (COLL_MEMBER, COLLECTIVES, GHOST_RECORD, Part, collectives_of, finish_part,
                   folds, holds_enough, positions_of)
from .ahead import Ahead
from .scratch import Scratch, ScratchError
from .spill import BLOCK, Instances, LocationTimes
from .steps import StepExchange, Steps, StepsMisaligned, StepsSuspended
from .timing import Phases

#: the share of its own events a part is first assumed to hold in ghosts (pass 1
#: measures the real share and plans again when a part overflows the budget)
GHOST_SHARE = 0.5
#: timestamps copied from a reading at once when they are spilled
TIMES_CHUNK = BLOCK * 2048
#: bytes a ghost takes packed in the scratch folder (_spill_ghosts), on the
#: large side: about 9 on the generated programs (the first part measures)
PACKED_GHOST_BYTES = 24
#: plans made before giving up (each after a pass 1 that overflowed)
ATTEMPTS = 4
#: time of pass 2 per event relative to pass 1's, until measured
PASS2_COST = 3.0
#: collective steps the root causes usually take (properties/rootcause/parts.py;
#: 20 with three rounds of the long-term replay): pass 2 runs one more time
#: than the steps, which the progress's estimate expects
EXPECTED_STEPS = 20
#: members of one part that are representatives of an instance, at most in
#: the usual case (earl_part.h: first, completing, latest begins, earliest
#: end, root, first of another part); scans may have more
REPRESENTATIVES = 7


class PartsPlan:
    """The parts of an analysis in turn: the partition, and per part its own
    events (announced by the definitions), and once pass 1 ran, its ghosts."""

    def __init__(self, partition: Partition, declared: np.ndarray, model: Model, budget: int):
        self.partition = partition
        self.parts = partition.parts
        self.own_events = partition.events(declared)
        self.locations = np.bincount(partition.part_of, minlength=self.parts)
        self.ghosts = np.zeros(self.parts, dtype=np.int64)
        self.model, self.budget = model, budget

    def peak(self, p: int, ghost_share: float = 0.0) -> int:
        ghosts = self.ghosts[p] if ghost_share is None else int(self.own_events[p] * ghost_share)
        return self.model.part(int(self.own_events[p]), int(ghosts), int(self.locations[p]))


def declared_events(path, raw_defs: dict) -> np.ndarray:
    """Events per location as the definitions announce them, at most what its
    event file can hold (OTF2 needs at least EVENT_FILE_BYTES bytes per event);
    where a location announces none, that upper bound."""
    declared = np.array([loc[4] for loc in raw_defs["locations"]], dtype=np.float64)
    folder = os.path.splitext(raw_defs["path"])[0]
    for i, loc in enumerate(raw_defs["locations"]):
        try:
            most = os.path.getsize(os.path.join(folder, "%d.evt" % loc[0])) / EVENT_FILE_BYTES
        except OSError:
            continue
        # a count announced wrongly (docs/model.md) cannot exceed what the file holds
        declared[i] = most if declared[i] <= 0 else min(declared[i], most)
    return declared


#: the fewest bytes OTF2 writes per event (a record type and a timestamp delta)
EVENT_FILE_BYTES = 3.0


def model_for(chosen) -> Model:
    """The memory model of an analysis evaluating these properties."""
    return ROOT_CAUSES if any(getattr(p, "group", None) == "root_cause" for p in chosen) \
        else DEFAULT


def plan_parts(raw_defs: dict, declared: np.ndarray, model: Model, budget: int,
               ghost_share: float = GHOST_SHARE, at_least: int = 1) -> PartsPlan:
    """The fewest parts (at least `at_least`) whose largest, with ghost_share of
    its own events in ghosts, fits the budget; BudgetError when even a part of
    one process does not."""
    process = process_of_locations(raw_defs)
    n_proc = int(process.max()) + 1 if len(process) else 0
    per_proc = np.bincount(process, weights=declared, minlength=n_proc)
    locs_per_proc = np.bincount(process, minlength=n_proc)
    if n_proc:
        worst = int(np.argmax(per_proc))
        need = model.part(int(per_proc[worst]), int(per_proc[worst] * ghost_share),
                          int(locs_per_proc[worst]))
        if need > budget:
            raise too_small(raw_defs, budget, need, worst, int(per_proc[worst]))
    total = float(declared.sum())
    cap = max(model.events_within(budget, int(locs_per_proc.max(initial=1))), 1)
    parts = max(at_least, int(np.ceil(total * (1 + ghost_share) / cap)), 1)
    parts = min(parts, max(n_proc, 1))
    while True:
        pp = PartsPlan(plan(raw_defs, parts), declared, model, budget)
        if all(pp.peak(p, ghost_share) <= budget for p in range(parts)) or parts >= n_proc:
            return pp
        parts = min(n_proc, parts + max(1, parts // 8))


def too_small(raw_defs, budget: int, need: int, process: int, events: int) -> BudgetError:
    groups = raw_defs["location_groups"]
    name = raw_defs["strings"][groups[process][1]] if process < len(groups) and \
        0 <= groups[process][1] < len(raw_defs["strings"]) else "process %d" % process
    return BudgetError("a memory budget of %s is too small for this trace: its largest process "
                       "(%s, %s events, with the events of others it needs) takes about %s "
                       "alone; the smallest budget that works is %s"
                       % (format_size(budget), name, format(events, ","), format_size(need),
                          _round_up(need)))


def _round_up(n: int) -> str:
    """A budget to give on the command line, at least n bytes: 8.5G, 600M."""
    g = n / (1 << 30)
    if g >= 1:
        return "%gG" % (np.ceil(g * 10) / 10)
    return "%dM" % int(np.ceil(n / (1 << 20)))


# -- progress ---------------------------------------------------------------------------

class Progress:
    """Which pass and part is running, and an estimate of the time left, for a
    ProgressBar (its `show`) or a plain progress(phase, done, total) callback."""

    #: within a part of pass 2: where reading, ordering and analysing start
    STAGES = {"reading": (0.0, 0.3), "ordering": (0.3, 0.4), "analysing": (0.4, 1.0)}

    def __init__(self, fn, pp: PartsPlan):
        self.fn = fn
        self.pp = pp
        self.t0 = time.monotonic()
        self.rate = [None, None, None]  # events per second of each pass, once measured
        self.done_events = [0.0, 0.0, 0.0]
        self.pass_no, self.part = 0, 0
        self.part_t0 = self.t0
        #: the passes over the parts with their ghosts after pass 1: 1 for the
        #: analysis, 2 for the stamps of a search (causal_inturn.py)
        self.later = 1
        #: runs of the analysis's pass 2 expected (the root causes' steps, steps.py)
        #: and made before this one
        self.runs, self.repeats = 1, 0
        self.shown = 0.0  # the largest fraction shown
        #: what a run of pass 2 is called on the bar ("page run" for the page's)
        self.title = "pass"
        #: passes that run only some parts (the races' sweeps after the first):
        #: pass number -> which parts run (a bool per part)
        self.subset = {}

    @property
    def first(self) -> float:
        own = float(self.pp.own_events.sum())
        return own / (own + PASS2_COST * own * (1 + GHOST_SHARE) * self.later * self.runs) \
            if own else 0.5

    def expect(self, runs: int) -> None:
        """The analysis's pass 2 is expected to run `runs` times."""
        self.runs = max(int(runs), 1)

    def again(self) -> None:
        """The analysis's pass 2 runs once more (the parts stopped at a step)."""
        self.repeats += 1
        self.done_events[1] = 0.0

    def work(self, pass_no: int) -> np.ndarray:
        own = self.pp.own_events.astype(np.float64)
        w = own if pass_no == 0 else own + self.pp.ghosts
        return w * self.subset[pass_no] if pass_no in self.subset else w

    def add_pass(self, runs: np.ndarray) -> int:
        """One pass more after those expected, over the parts `runs` says (a
        bool per part): its number, which `start` takes."""
        self.later += 1
        self.rate.append(None)
        self.done_events.append(0.0)
        self.subset[self.later] = np.asarray(runs, dtype=np.float64)
        return self.later

    def start(self, pass_no: int, part: int) -> None:
        self.pass_no, self.part = pass_no, part
        self.part_t0 = time.monotonic()
        self("starting", 0, 1)

    def end(self) -> None:
        """The part is done: its events count as done, its time measures the rate."""
        w = float(self.work(self.pass_no)[self.part])
        self.done_events[self.pass_no] += w
        elapsed = time.monotonic() - self.part_t0
        if elapsed > 0 and w > 0:
            r = w / elapsed
            old = self.rate[self.pass_no]
            self.rate[self.pass_no] = r if old is None else 0.5 * (old + r)

    def left(self, within: float) -> Optional[float]:
        """Seconds left, once a part was measured."""
        rate1 = self.rate[0]
        if rate1 is None:
            return None
        w1, w2 = self.work(0).sum(), self.work(1).sum()
        cur = float(self.work(self.pass_no)[self.part]) * within
        left = max(w1 - self.done_events[0] - (cur if self.pass_no == 0 else 0), 0) / rate1
        for k in range(1, self.later + 1):
            rate = self.rate[k] or self.rate[min(k, 2)] or self.rate[1] or rate1 / PASS2_COST
            runs = max(self.runs - self.repeats, 1) if k == 1 else 1
            w = self.work(k).sum() if k in self.subset else w2
            left += max(w * runs - self.done_events[k] - (cur if self.pass_no == k else 0),
                        0) / rate
        return left

    def fraction(self, within: float) -> float:
        """The share of the work done: pass 1 takes the first `self.first`
        of the bar (its events against pass 2's, with the ghosts the plan
        assumes, PASS2_COST times dearer), pass 2 the rest (its runs as
        expected); never less than shown before."""
        w = float(self.work(self.pass_no).sum())
        cur = float(self.work(self.pass_no)[self.part]) * within
        done = min((self.done_events[self.pass_no] + cur) / w, 1.0) if w else 1.0
        if self.pass_no == 0:
            frac = self.first * done
        elif self.runs > 1 or self.repeats:
            runs = max(self.runs, self.repeats + 1)
            frac = self.first + (1 - self.first) * (self.repeats + done) / runs
            if self.repeats >= self.runs:
                frac = min(frac, 0.99)  # a run more than expected stays near the end
        else:
            frac = self.first + (1 - self.first) * (self.pass_no - 1 + done) / self.later
        self.shown = max(frac, self.shown)
        return self.shown

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.fn is None or phase == "done":
            return
        within = done / total if total else 0.0
        if phase == "starting":
            within = 0.0
        elif self.pass_no >= 1 and phase in self.STAGES:
            lo, hi = self.STAGES[phase]
            within = lo + (hi - lo) * within
        elif self.pass_no == 0:  # reading, then the export and the spill
            within = 0.9 * within if phase == "reading" else 0.9
        number = self.pass_no + 1 + (self.repeats if self.pass_no == 1 else 0)
        title = self.title if self.pass_no == 1 else "pass"
        if title != "pass":
            number = self.repeats + 1
        label = "%s %d, part %d of %d: %s" % (title, number, self.part + 1, self.pp.parts, phase)
        frac = self.fraction(within)
        show = getattr(self.fn, "show", None)
        if show is not None:
            left = self.left(within)
            now = time.monotonic()
            if now - getattr(self, "_drawn", 0.0) < 0.1 and phase != "starting":
                return
            self._drawn = now
            show(label, frac, "" if left is None else "about %s left" % _duration(left))
        else:
            self.fn(label, int(frac * 1000), 1000)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if close is not None:
            close()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return "%d s" % max(int(round(seconds)), 1)
    if seconds < 5400:
        return "%d min" % int(round(seconds / 60))
    return "%.1f h" % (seconds / 3600)


# -- the driver ---------------------------------------------------------------------------

class InTurn:
    """An analysis of the trace at `path` in parts one after another within a
    memory budget (see the module).  A context manager: its scratch folder is
    removed at the end, however it ends."""

    def __init__(self, path, budget: int, scratch=None, threads: int = 0, salvage: bool = False,
                 progress=None, model: Model = DEFAULT, parts: Optional[int] = None,
                 representatives: bool = True, collectives: Optional[str] = None):
        self.path, self.threads, self.salvage = path, threads, bool(salvage)
        if collectives is None:
            collectives = "representatives" if representatives else "all"
        if collectives not in COLLECTIVES:
            raise ValueError("collectives must be 'all', 'delayers' or 'representatives', "
                             "not %r" % (collectives,))
        #: how the collectives travel (part.COLLECTIVES): "representatives" (the
        #: members the built-in wait states read, earl_part.h), "delayers"
        #: (those, and what the root causes read), or "all" (every member)
        self.collectives = collectives
        #: collectives as representatives (either kind), else every member
        self.representatives = collectives != "all"
        self.reps = {}
        self.budget, self.model = budget, model
        reading = _core.Reading(str(path), threads=threads, salvage=self.salvage)
        self.defs = reading.definitions()
        del reading
        self.declared = declared_events(path, self.defs)
        self.n_locations = len(self.defs["locations"])
        #: what the analysis in one piece would take
        self.whole_need = model.whole(int(self.declared.sum()), self.n_locations)
        if parts is not None:
            self.pp = PartsPlan(plan(self.defs, parts), self.declared, model, budget)
        else:
            self.pp = plan_parts(self.defs, self.declared, model, budget)
        self._fixed_parts = parts
        self.scratch_folder = scratch  # where the scratch folder is made (None: the default)
        self.scratch = Scratch(scratch, need=self._scratch_need())
        self.progress = Progress(progress, self.pp)
        self.times: Optional[LocationTimes] = None
        self.whole = {}
        self.passes = 0  # pass 1 runs made (a plan overflowed: more than one)
        #: collective steps the analyses across parts took (each one more pass 2)
        self.steps_taken = 0
        self.peak_part = 0
        #: where the time goes, per phase (printed with EARLC_PROFILE, timing.py)
        self.phases = Phases()

    def _scratch_need(self) -> int:
        """Bytes the scratch folder will hold, at most: 4 per event of
        timestamps, and the ghosts (assumed as the plan does)."""
        events = float(self.declared.sum())
        return int(events * 4 + events * GHOST_SHARE * PACKED_GHOST_BYTES)

    def __enter__(self) -> "InTurn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.stop_ahead()
        self.progress.close()
        if not self.closed:
            self.phases.report()
        self.scratch.remove()
        self.closed = True

    closed = False
    #: room the plan left on each part for the HTML page (page_inturn.with_page)
    page_reserve = 0

    def reopened(self, model: Optional[Model] = None) -> "InTurn":
        """The same trace in parts again, with a new scratch folder (pass 1 not
        run), planned with `model` (parts given by number stay as many): for
        the page of a report whose analysis in turn has ended, or whose parts
        leave no room for it (page_inturn.py)."""
        return InTurn(self.path, self.budget, scratch=self.scratch_folder, threads=self.threads,
                      salvage=self.salvage, progress=self.progress.fn,
                      model=model or self.model, parts=self._fixed_parts,
                      collectives=self.collectives)

    # -- pass 1 -------------------------------------------------------------------------
    def pass1(self) -> None:
        """Read every part once; spill its ghosts for the others and its own
        locations' timestamps.  Plans again with more parts while a part's own
        events and ghosts overflow the budget."""
        for attempt in range(ATTEMPTS):
            self.passes += 1
            redo = self._pass1_once()
            if redo is None:
                return
            if attempt + 1 == ATTEMPTS:
                break
            self._replan(redo)
        worst = int(np.argmax([self.pp.peak(p, None) for p in range(self.pp.parts)]))
        raise BudgetError("a memory budget of %s is too small for this trace: after %d plans, "
                          "a part still needs about %s with the events of others it needs"
                          % (format_size(self.budget), ATTEMPTS,
                             format_size(self.pp.peak(worst, None))))

    def _pass1_once(self) -> Optional[float]:
        """One pass 1 over the current plan; None when every part fits, else the
        share of ghosts to plan with.  While a part's ghosts and timestamps are
        spilled, the next part is read on a thread (ahead.py) where two
        readings fit in the budget (_ahead_fits)."""
        pp = self.pp
        for name in os.listdir(self.scratch.path):
            self.scratch.delete(name)
        self.times = LocationTimes(self.scratch)
        self.reps = {}
        pp.ghosts[:] = 0
        counts, firsts, lasts = 0, [], []
        ahead = None
        try:
            for p in range(pp.parts):
                self.progress.start(0, p)
                with self.phases("pass 1: read"):
                    reading = ahead.result() if ahead is not None else \
                        self._read(p, self.progress)
                    ahead = None
                    if p + 1 < pp.parts and self._ahead_fits(p):
                        ahead = Ahead(functools.partial(self._read, p + 1,
                                                        self._progress_of(p + 1)))
                with self.phases("pass 1: spill times"):
                    for l in pp.partition.locations(p).tolist():
                        n = self._spill_times(reading, l)
                        counts += n
                        if n:
                            firsts.append(self._first_time)
                            lasts.append(self._last_time)
                with self.phases("pass 1: export ghosts"):
                    # packed narrow as they are made: the 80-byte records are
                    # never held (_spill_ghosts)
                    got = reading.export(pp.partition.part_of, pp.parts, p,
                                         members=self.representatives, packed=True)
                    del reading
                offsets = np.frombuffer(got[0], dtype=np.uint64).astype(np.int64)
                with self.phases("pass 1: spill ghosts"):
                    self._spill_ghosts(p, offsets, np.frombuffer(got[1], dtype=np.uint64),
                                       got[2])
                reps = 0  # at most, the representatives of part 0's members others get
                if self.representatives:
                    members = np.frombuffer(got[3], dtype=COLL_MEMBER)
                    self.scratch.write("m%d.bin" % p, members)
                    key = (members["comm"].astype(np.uint64) << np.uint64(32)) | members["seq"]
                    self.scratch.write("k%d.bin" % p, key)
                    if p == 0:
                        reps = 4 * min(len(key), REPRESENTATIVES * len(np.unique(key)))
                    del members, key
                del got
                sent = np.diff(offsets)
                pp.ghosts += sent
                self.progress.end()
                if p == 0:
                    self._check_scratch_room(float(pp.own_events[0]))
                if p == 0 and pp.parts > 1 and self._fixed_parts is None:
                    # what part 0 gives the others, as a share of its events: the
                    # share each part may be expected to receive
                    share = float(sent.sum() + reps) / max(float(pp.own_events[0]), 1.0)
                    if any(pp.peak(q, share) > self.budget for q in range(pp.parts)):
                        return share * 1.1
        finally:
            if ahead is not None:  # a plan made again, or a failure: let it go first
                ahead.cancel()
        self.whole = {"events": counts, "first_time": min(firsts) if firsts else None,
                      "last_time": max(lasts) if lasts else None}
        if self.representatives:
            with self.phases("pass 1: representatives"):
                self._choose_representatives()
        if self._fixed_parts is not None:
            return None
        over = [p for p in range(pp.parts) if pp.peak(p, None) > self.budget]
        if not over:
            return None
        return 1.1 * max(float(pp.ghosts[p]) / max(float(pp.own_events[p]), 1.0)
                         for p in range(pp.parts))

    def _read(self, p: int, progress):
        """A reading of part p's own locations."""
        reading = _core.Reading(str(self.path), threads=self.threads, progress=progress,
                                salvage=self.salvage)
        reading.read(self.pp.partition.mask(p))
        return reading

    def _progress_of(self, p: int, pass_no: int = 0):
        """The progress of part p of a pass read ahead: shown once it is the
        part the bar shows (the driver then waits for the reading)."""
        progress = self.progress

        def show(phase, done, total):
            if progress.pass_no == pass_no and progress.part == p:
                progress(phase, done, total)
        return show

    def _ahead_fits(self, p: int) -> bool:
        """Whether part p + 1 may be read while part p is spilled: both
        readings, each counted as an open of its events (the model's
        open_bytes, more than a reading and its export hold), fit in the
        budget."""
        pp = self.pp
        return self.model.opening(int(pp.own_events[p] + pp.own_events[p + 1]),
                                  int(pp.locations[p] + pp.locations[p + 1])) <= self.budget

    def _spill_ghosts(self, q: int, offsets: np.ndarray, at: np.ndarray, packed) -> None:
        """Part q's ghosts for every other part, packed narrow by the export
        (earl_part_export_packed: about a ninth of their 80-byte records),
        one run per part after another in g<q>.bin; g<q>.idx holds the
        records' offsets of each part (n_parts + 1), then the packed bytes'
        (n_parts + 1)."""
        self.scratch.write("g%d.bin" % q, packed)
        self.scratch.write("g%d.idx" % q, np.concatenate([offsets, at.astype(np.int64)]))

    def _check_scratch_room(self, events_read: float) -> None:
        """After the first part of pass 1: what it wrote per event, times the
        trace's events, must fit in the scratch folder (with a quarter more
        for the representatives and the rest), else ScratchError now rather
        than a full disk later."""
        total = float(self.declared.sum())
        if events_read <= 0 or total <= events_read:
            return
        need = int(self.scratch.written / events_read * total * 1.25) - self.scratch.written
        self.scratch.check_room(need)

    #: collective members handed to one choice of representatives, at most
    MEMBERS_AT_ONCE = 1 << 20
    #: bytes a representative record takes while it is chosen: the record in
    #: its part's list, its sort key and index, and its copy in the layout
    REPRESENTATIVE_BYTES = 2 * GHOST_RECORD.itemsize + 16

    def _instances_at_once(self, members: int, instances: int) -> int:
        """Collective instances handed to one choice of representatives: what
        every part receives of an instance (up to REPRESENTATIVES members of 4
        records each) is many times the members read, so the window is sized
        by that output, within half the room the budget leaves above the
        fixed costs (at least 64 MB), and by MEMBERS_AT_ONCE members.  With
        the delayers, the part of an instance's delaying member receives
        every member besides."""
        room = max((self.budget - self.model.fixed) // 2, 64 << 20)
        per_instance = max(members / max(instances, 1), 1.0)
        out = self.pp.parts * REPRESENTATIVES * 4 * self.REPRESENTATIVE_BYTES
        if self.collectives == "delayers":
            out += int(per_instance * 4 * self.REPRESENTATIVE_BYTES)
        return max(1, min(int(room // out), int(self.MEMBERS_AT_ONCE / per_instance)))

    def _choose_representatives(self) -> None:
        """The collective ghosts of every part (earl_part_representatives),
        from the members that pass 1 listed part by part, a window of whole
        instances at a time (_instances_at_once).  Part p's are appended to
        c<p>.bin, each window's sorted by (location, position); self.reps[p][l]
        lists where location l's are: (byte offset, bytes, records) per window,
        in window order, each packed (pack_ghosts)."""
        pp = self.pp
        keys = [self.scratch.load("k%d.bin" % q, np.uint64) for q in range(pp.parts)]
        members = sum(len(k) for k in keys)
        if not members:
            return
        instances = np.unique(np.concatenate([np.unique(k) for k in keys]))
        step = self._instances_at_once(members, len(instances))
        bounds = np.append(instances[::step], np.uint64(np.iinfo(np.uint64).max))
        del instances
        cuts = [np.searchsorted(k, bounds, side="left") for k in keys]
        size = COLL_MEMBER.itemsize
        reading = _core.Reading(str(self.path), threads=self.threads, salvage=self.salvage)
        self.reps = {p: {} for p in range(pp.parts)}
        at = np.zeros(pp.parts, dtype=np.int64)
        for w in range(len(bounds) - 1):
            rows = [self.scratch.load("m%d.bin" % q, COLL_MEMBER, int(cuts[q][w]) * size,
                                      int(cuts[q][w + 1] - cuts[q][w]))
                    for q in range(pp.parts) if cuts[q][w + 1] > cuts[q][w]]
            if not rows:
                continue
            member = np.dtype((np.void, COLL_MEMBER.itemsize))  # opaque rows: faster copies
            rows = np.concatenate([r.view(member) for r in rows]).view(COLL_MEMBER)
            end = rows["time"][:, 2]
            order = np.lexsort((rows["position"][:, 2], rows["location"], end, rows["seq"],
                                rows["comm"]))
            rows = rows.view(member)[order].view(COLL_MEMBER)
            offsets, records = reading.representatives(rows, pp.partition.part_of, pp.parts,
                                                       self._represent_flags())
            del rows
            offsets = np.frombuffer(offsets, dtype=np.uint64).astype(np.int64)
            table = np.frombuffer(records, dtype=GHOST_RECORD)
            for p in range(pp.parts):
                mine = table[offsets[p]:offsets[p + 1]]
                if not len(mine):
                    continue
                locs, first, count = np.unique(mine["location"], return_index=True,
                                               return_counts=True)
                raw = memoryview(np.ascontiguousarray(mine)).cast("B")
                rsize = GHOST_RECORD.itemsize
                for l, f, c in zip(locs.tolist(), first.tolist(), count.tolist()):
                    packed = _core.pack_ghosts(raw[f * rsize:(f + c) * rsize])
                    start = self.scratch.append("c%d.bin" % p, packed)
                    self.reps[p].setdefault(l, []).append((start, len(memoryview(packed)), c))
                del raw
                pp.ghosts[p] += len(mine)
                at[p] += len(mine)
        del reading

    def _represent_flags(self) -> int:
        """What earl_part_represent chooses besides the built-in wait states'
        representatives: with "delayers", each instance's delaying member
        everywhere and every member in its part (what the root causes read)."""
        return _core.REPRESENT_DELAYERS if self.collectives == "delayers" else 0

    def _replan(self, share: float) -> None:
        old = self.pp.parts
        self.pp = plan_parts(self.defs, self.declared, self.model, self.budget,
                             ghost_share=share, at_least=old + 1)
        later = self.progress.later
        self.progress = Progress(self.progress.fn, self.pp)
        self.progress.later = later

    def _spill_times(self, reading, l: int) -> int:
        n = reading.times(l)
        buf = np.empty(min(n, TIMES_CHUNK), dtype=np.uint64)
        at = 0
        while at < n:
            k = reading.times(l, at, buf)
            chunk = buf[:k]
            if at == 0:
                self._first_time = int(chunk[0])
            self.times.add(l, chunk)
            at += k
        if n:
            self._last_time = int(buf[k - 1])
        return n

    # -- pass 2 -------------------------------------------------------------------------
    def _add_ghosts(self, reading, p: int):
        """Add to part p's reading the ghosts the other parts wrote for it and
        the representatives chosen for it, in one C call that holds no lock of
        the interpreter (earl_part_add_packed: unpacked, merged, folded and
        added a location at a time; the same part as adding the unpacked
        records through part.assemble): the ghost locations' positions and the records
        received."""
        runs, table, names, at = [], [], [], 0
        for q in range(self.pp.parts):
            if q == p:
                continue
            idx = self.scratch.load("g%d.idx" % q, np.int64)
            off, where = idx[:self.pp.parts + 1], idx[self.pp.parts + 1:]
            n, size = int(off[p + 1] - off[p]), int(where[p + 1] - where[p])
            if not n:
                continue
            runs.append(self.scratch.load("g%d.bin" % q, np.uint8, int(where[p]), size))
            if len(runs[-1]) < size:
                raise self._damaged("g%d.bin" % q, "cut short")
            table.append((-1, at, size, n))
            names.append("g%d.bin" % q)
            at += size
        ghosts = np.concatenate(runs) if len(runs) > 1 else \
            (runs[0] if runs else np.empty(0, np.uint8))
        del runs
        reps = self.reps.get(p, {})
        rep_table = [(l, start, size, count) for l in sorted(reps)
                     for start, size, count in reps[l]]
        rep_bytes = self.scratch.load("c%d.bin" % p, np.uint8) if rep_table else \
            np.empty(0, np.uint8)
        if rep_table and max(start + size for _, start, size, _ in rep_table) > len(rep_bytes):
            raise self._damaged("c%d.bin" % p, "cut short")
        try:
            locations, offsets, positions, received = reading.add_packed(
                ghosts, np.array(table, dtype=np.int64).reshape(-1, 4), rep_bytes,
                np.array(rep_table, dtype=np.int64).reshape(-1, 4), folds(self.collectives))
        except ValueError as exc:
            if len(exc.args) != 2:
                raise
            name = names[exc.args[1]] if exc.args[1] < len(names) else "c%d.bin" % p
            raise self._damaged(name, exc.args[0]) from None
        out = {}
        positions_of(np.frombuffer(locations, dtype=np.int32),
                     np.frombuffer(offsets, dtype=np.uint64).astype(np.int64),
                     np.frombuffer(positions, dtype=np.uint64), out)
        return out, received

    def _damaged(self, name: str, why: str) -> ScratchError:
        return ScratchError("the scratch folder %s holds a damaged file %s (%s): it was "
                            "changed while the analysis used it" % (self.scratch.base, name, why))

    def open(self, p: int, pass_no: int = 1, ahead: bool = False) -> Part:
        """Part p with its ghosts (pass 2; pass_no 2 for a third pass).  ahead:
        part p + 1 is opened on a thread meanwhile (ahead.py), where both fit
        in the budget (_open_ahead_fits), for the next call to take; the
        caller then ends with `stop_ahead` (a part opened ahead holds its
        memory until taken or stopped)."""
        self.progress.start(pass_no, p)
        waiting, self._opening = self._opening, None
        if waiting is not None and waiting[0] == (p, pass_no):
            with self.phases("pass 2: wait for the part opened ahead"):
                part = waiting[1].result()
        else:
            if waiting is not None:
                waiting[1].cancel()
            part = self._open_now(p, self.progress, "pass 2")
        if ahead and p + 1 < self.pp.parts and self._open_ahead_fits(p):
            self._opening = ((p + 1, pass_no), Ahead(functools.partial(
                self._open_now, p + 1, self._progress_of(p + 1, pass_no), "pass 2 ahead")))
        return part

    #: the part being opened ahead: ((part, pass), Ahead), or None
    _opening = None

    def stop_ahead(self) -> None:
        """Drop a part opened ahead that no call will take (at the end of a
        pass, or when it stops early)."""
        waiting, self._opening = self._opening, None
        if waiting is not None:
            waiting[1].cancel()

    def _open_now(self, p: int, progress, phase: str) -> Part:
        """Part p read, its ghosts added and its events ordered; the phases
        named `phase` (on the thread of an open ahead, "pass 2 ahead": their
        processor time of this thread is that thread's)."""
        with self.phases(phase + ": read"):
            reading = _core.Reading(str(self.path), threads=self.threads,
                                    progress=progress, salvage=self.salvage)
            reading.read(self.pp.partition.mask(p))
        with self.phases(phase + ": ghosts"):
            positions, received = self._add_ghosts(reading, p)
        with self.phases(phase + ": order"):
            part = finish_part(reading, self.pp.partition, p, None, positions, received,
                               self.threads)
        part.whole = self.whole
        part.collectives = self.collectives
        return part

    def _open_ahead_fits(self, p: int) -> bool:
        """Whether part p + 1 may be opened while part p is analysed: part p
        analysed (the model's part peak) and p + 1's opening, each with its
        ghosts, fit in the budget together (the fixed costs once)."""
        pp, m = self.pp, self.model
        here = m.part(int(pp.own_events[p]), int(pp.ghosts[p]), int(pp.locations[p]))
        there = m.opening(int(pp.own_events[p + 1] + pp.ghosts[p + 1]),
                          int(pp.locations[p + 1])) - m.fixed
        return here + there <= self.budget

    def parts(self):
        """Every part in turn, with its ghosts (pass 1 first when not run yet).
        A part is let go when the next is asked for: keep none of them."""
        if self.times is None:
            self.pass1()
        try:
            for p in range(self.pp.parts):
                part = self.open(p, ahead=True)
                yield part
                self.let_go(part)
                del part
                self.progress.end()
        finally:
            self.stop_ahead()

    @staticmethod
    def let_go(part: Part) -> None:
        """Free a part's memory now: a part and its trace point at each other,
        which only the cycle collector would otherwise undo."""
        if part.trace is not None:
            part.trace.part = None
        part.trace = None
        gc.collect()

    def __iter__(self):
        return self.parts()

    # -- the analysis -----------------------------------------------------------------------
    def analyze(self, properties=None, top: int = 10, plugins=(), strict: bool = False,
                packages: bool = True):
        """The report of the whole trace.  Without properties that compute
        across parts, pass 2 runs once; with them (the root causes), pass 2
        runs again while the parts are suspended at a collective step whose
        data not every part has written (steps.py): one more step a pass."""
        from ..analysis import engine
        from ..analysis.catalog import packages_held
        from . import merge

        if self.times is None:
            self.pass1()
        _, chosen = engine.selection(properties, plugins, packages, strict)
        need = collectives_of(chosen)
        if not holds_enough(self.collectives, need):
            raise ValueError("these parts hold the collectives as %s, which this catalog "
                             "cannot analyse: analyse it in parts with collectives=%r "
                             "(earlc.parts.in_turn(..., collectives=%r))"
                             % (self.collectives, need, need))
        steps = Steps(self.scratch, self.pp.parts) \
            if any(getattr(p, "across_parts", False) for p in chosen) else None
        if steps is not None:
            self.progress.expect(EXPECTED_STEPS + 1)
        try:
            with packages_held():
                while True:
                    found = self._pass2(steps, properties, top, plugins, strict, packages)
                    if found is not None:
                        break
                    before = steps.complete
                    steps.end_of_pass()
                    if steps.complete <= before:
                        raise RuntimeError("the parts analysed in turn stopped at step %d: a "
                                           "part did not write it" % before)
                    self.progress.again()
        finally:
            if steps is not None:
                self.steps_taken = steps.complete
                steps.remove()
        pieces, keys, instances, light = found
        with self.phases("merge"):
            # one count over every location's timestamps for the keys of all parts
            counted = np.split(self.times.count_before(*map(np.concatenate, zip(*(
                k for _, k, _, _ in keys)))), np.cumsum([len(k[0]) for _, k, _, _ in keys])[:-1]) \
                if keys else []
            for piece, (valid, k, ivalid, ik), ids in zip(pieces, keys, counted):
                gids = np.full(len(valid), -1, dtype=np.int64)
                gids[valid] = ids
                ginst = np.full(len(ivalid), -1, dtype=np.int64)
                ginst[ivalid] = instances.before(*ik)
                merge._globalize(piece, gids, ginst)
            report = merge.merge(pieces, self.stub(), light, top)
        # its page runs the parts again (page_inturn.py): with the same analysis
        report._in_turn = self
        report._analysis = dict(properties=properties, top=top, plugins=plugins, strict=strict,
                                packages=packages)
        return report

    def _pass2(self, steps: Optional[Steps], properties, top, plugins, strict, packages):
        """One pass 2 over every part: their findings (pieces, keys, instances,
        the light catalog), or None when the parts were suspended at a step
        (every part is, or none: they take the same steps).  Each part's
        successor is opened on a thread while it is analysed (open's ahead)."""
        try:
            return self._pass2_parts(steps, properties, top, plugins, strict, packages)
        finally:
            self.stop_ahead()

    def _pass2_parts(self, steps, properties, top, plugins, strict, packages):
        """_pass2's loop over the parts."""
        from ..analysis import engine
        from . import merge

        pieces, keys, instances = [], [], Instances()
        light = None
        suspended = []
        for p in range(self.pp.parts):
            part = self.open(p, ahead=True)
            if steps is not None:
                part.exchange = StepExchange(steps, p)
            previous = _core.use_store_memory()
            try:
                with self.phases("pass 2: catalog"):
                    # on threads, as in one piece, unless the properties
                    # exchange with the other parts (steps: one after another)
                    local = engine.run(part.trace, properties, top=top, progress=self.progress,
                                       plugins=plugins, strict=strict, packages=packages,
                                       own=part.own, last_time=self.whole.get("last_time"),
                                       threads=self.threads or os.cpu_count() or 1)
                with self.phases("pass 2: findings"):
                    piece = merge._findings(local, part, top)
            except StepsSuspended as stop:
                suspended.append(stop.step)
                local = None
            except StepsMisaligned as wrong:
                raise RuntimeError(str(wrong)) from None
            finally:
                _core.restore_numpy_memory(previous)
            if local is not None:
                ids = piece.pop("ids")
                inst = piece.pop("instances")
                valid = ids >= 0
                firsts = part._instance_firsts()
                ivalid = inst >= 0
                keys.append((valid, part.keys(ids[valid]), ivalid,
                             part.keys(firsts[inst[ivalid]])))
                own_firsts = np.sort(firsts[part.own[part.trace.events.location[firsts]]]) \
                    if len(firsts) else firsts
                instances.add(*part.keys(own_firsts))
                pieces.append(piece)
                if light is None:
                    light = merge.PartsCatalog(local)
                light.add(local)
                del local
            with self.phases("pass 2: let go"):
                self.let_go(part)
                del part
            self.progress.end()
        if suspended:
            if len(suspended) != self.pp.parts or len(set(suspended)) != 1:
                raise RuntimeError("the parts analysed in turn took different steps: %s"
                                   % suspended)
            return None
        return pieces, keys, instances, light

    def search(self, pattern, name=None, limit=None, threads=None, teams: int = 1,
               pruning: bool = True, progress=None):
        """The matches of a pattern in the whole trace (earlc.search.search's
        arguments), its parts stamped one after another
        (causal_inturn.py): the same matches as in one piece."""
        from .causal_inturn import matches_in_turn

        return matches_in_turn(self, pattern, name=name, limit=limit, threads=threads,
                               teams=teams, pruning=pruning, progress=progress)

    def races(self, wildcard=None, clocks: str = "vector", progress=None):
        """The message races of the whole trace (earlc.races's arguments), its
        parts replayed one after another (races_inturn.py): the same races as
        in one piece."""
        from .races_inturn import races_in_turn

        return races_in_turn(self, wildcard=wildcard, clocks=clocks, progress=progress)

    def stub(self):
        """What the merged report keeps of the parts: the definitions (a trace
        of no events), the whole trace's counts, the partition."""
        reading = _core.Reading(str(self.path), threads=self.threads, salvage=self.salvage)
        reading.read(bytes(self.n_locations))
        from ..trace import Trace

        trace = Trace(reading.finish(), self.threads)
        part = Part(trace, self.pp.partition, -1, None, {}, 0)
        part.whole = self.whole
        part.in_turn = True
        return part


def choose_budget(memory) -> Optional[int]:
    """The budget of an analysis: memory as given (a size), or None to let the
    machine's available memory decide (budget.default_budget)."""
    from .budget import default_budget

    if memory is None:
        return default_budget()
    return parse_size(memory)


@dataclass(frozen=True)
class Need:
    """An analysis that must run in parts: its budget, its memory model, and
    how the collectives may travel (part.collectives_of: "representatives",
    the members the built-in wait states read, earl_part.h; "delayers", those
    and what the root causes read; "all" for a plugin, which may read every
    member)."""

    budget: int
    model: Model
    representatives: bool
    whole: int  #: what the analysis in one piece would take
    collectives: str = "all"


def needs_parts(path, memory=None, properties=None, plugins=(), packages: bool = True,
                strict: bool = False) -> Optional[Need]:
    """How the analysis of the trace at path must run in parts within its
    budget, or None when it fits in one piece (or memory="unlimited")."""
    from ..analysis.engine import selection

    if isinstance(memory, str) and memory.strip().lower() == "unlimited":
        return None
    budget = choose_budget(memory)
    if budget is None:
        return None
    reading = _core.Reading(str(path))
    defs = reading.definitions()
    del reading
    _, chosen = selection(properties, plugins, packages, strict)
    model = model_for(chosen)
    declared = declared_events(path, defs)
    whole = model.whole(int(declared.sum()), len(declared))
    if whole <= budget:
        return None
    # a plugin may read every member of a collective; the root causes read,
    # besides the representatives, the member that delays the others and
    # every member in its part (collectives_of)
    collectives = collectives_of(chosen)
    return Need(budget, model, representatives=collectives != "all", whole=whole,
                collectives=collectives)


__all__ = ["InTurn", "Need", "PartsPlan", "plan_parts", "needs_parts", "declared_events",
           "model_for", "Progress"]
