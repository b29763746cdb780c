"""Decisions and schedules of `earlc verify` (docs/verify.md).

A *wildcard operation* is a receive or probe that asked for MPI_ANY_SOURCE.
Each process numbers its own 0, 1, 2, ... in the order it makes them (an
MPI_Iprobe only when it finds a message), as DAMPI numbers the
nondeterministic events of a process; the recorder writes the number into
the operation's ENTER record (csrc/record/record_schedule.c).  A *decision*
is one such operation with the source it took; a *schedule* is a list of
decisions that a run is made to follow: the recorder gives each named
operation the decision's source instead of MPI_ANY_SOURCE.

This module reads the decisions a run made from the recorder's files
(`decisions_of`), finds their alternatives with the race analysis of
earlc.races (`find_alternatives`), and reads and writes schedules: the JSON
file a user keeps and replays, and the text file the recorder reads.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import record_files as rf
from .events import KINDS
from .record import RecordError

#: the calls that can be wildcard operations
WILDCARD_CALLS = ("MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Probe",
                  "MPI_Iprobe")
_RECEIVES = ("MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace")
_PROBES = ("MPI_Probe", "MPI_Iprobe")
SCHEDULE_FORMAT = 1


class VerifyError(RecordError):
    """Bad input to `earlc verify`: a one-line message for the user."""


@dataclass
class Decision:
    """One wildcard operation of a run and the source it took.

    rank, index: the process (MPI_COMM_WORLD rank) and the operation's number
    there; call: MPI_Recv, MPI_Irecv, ...; source: the rank it took, in the
    operation's communicator (what a schedule forces); source_rank: the same
    in MPI_COMM_WORLD; tag: the message's tag; members: the communicator's
    world ranks (source_rank = members[source]); forced: the run was made to
    take source.  event: the trace event of its receive record (a probe's:
    the receive that took the probed message), or -1; time: when it matched
    (ticks, for the order of a run's decisions); site: the return address of
    the call, site_text: where in the program it was made; alternatives: the
    other sources it could have taken (ranks in the communicator)."""

    rank: int
    index: int
    call: str
    source: int
    source_rank: int
    tag: int
    members: Tuple[int, ...]
    forced: bool = False
    event: int = -1
    time: int = 0
    site: int = 0
    site_text: str = ""
    alternatives: List[int] = field(default_factory=list)
    # for a probe: the requested tag (-1 any) its receive is analysed with
    probe_tag: Optional[int] = None

    @property
    def key(self) -> Tuple[int, int]:
        return (self.rank, self.index)

    def world(self, source: int) -> int:
        """A source of this operation's communicator as an MPI_COMM_WORLD rank."""
        return self.members[source] if 0 <= source < len(self.members) else source


@dataclass
class OpenOperation:
    """A wildcard operation a process was still in when its record ended (a
    hang), or an MPI_Iprobe it kept polling without finding a message:
    forced to `forced` (-1: not forced)."""

    rank: int
    index: int
    call: str
    forced: int
    site: int
    polling: bool = False


@dataclass
class RunDecisions:
    """What the recorder's files tell about a run's wildcard operations."""

    decisions: List[Decision]               # in the order they matched
    open: List[OpenOperation]               # unfinished ones
    made: Dict[int, int]                    # rank -> wildcard operations numbered
    misses: List[Tuple[int, int, str]]      # (rank, index, what) the recorder did not apply
    schedule_errors: List[str]              # the recorder could not read the schedule


def _address(peer: int, tag: int) -> int:
    return (int(peer) & 0xFFFFFFFF) | (int(tag) & 0xFFFFFFFF) << 32


def _members(r: rf.RankRecord, comm: int) -> Tuple[int, ...]:
    key = r.comms.get(int(comm))
    if key is None:
        return ()
    if key == ("self",):
        return (r.rank,)
    return tuple(key[0])


def decisions_of(records: Sequence[rf.RankRecord], trace) -> RunDecisions:
    """The decisions of a run from the recorder's files of its processes, in
    the order they matched, each with its trace event; the operations left
    open; what the recorder said about the schedule."""
    ev = trace.events
    location_of = {l.rank: l.index for l in trace.locations if l.thread == 0 and l.rank >= 0}
    decisions: List[Decision] = []
    opened: List[OpenOperation] = []
    made: Dict[int, int] = {}
    misses: List[Tuple[int, int, str]] = []
    errors: List[str] = []
    for r in records:
        for line in r.schedule:
            key, _, rest = line.partition(" ")
            if key == "schedule-miss":
                index, _, what = rest.partition(" ")
                misses.append((r.rank, int(index), what))
            elif key == "schedule-error":
                errors.append("rank %d: %s" % (r.rank, rest))
        if r.rank not in location_of:
            continue
        ids = ev.of_location(location_of[r.rank])
        mine, still, count = _rank_decisions(r, rf.written_positions(r), ids)
        decisions.extend(mine)
        opened.extend(still)
        made[r.rank] = count
    return RunDecisions(_in_match_order(decisions), opened, made, misses, errors)


def _rank_decisions(r: rf.RankRecord, position: np.ndarray, ids: np.ndarray):
    """(decisions, open operations, operations numbered) of one process."""
    ev = r.events
    rtype = (ev["bytes_type"] & 0xFF).astype(np.int64)
    request = ev["request"].astype(np.int64)
    extra = ev.view(rf.EXTRA_DTYPE)
    leaves = np.flatnonzero(rtype == rf.LEAVE)
    receipts = np.flatnonzero((rtype == rf.RECV) | (rtype == rf.IRECV))
    completions = np.flatnonzero(rtype == rf.IRECV)
    # request ids are 1, 2, ... per process, never reused: the completion of each
    completed = dict(zip(request[completions][::-1].tolist(), completions[::-1].tolist()))
    out, still = [], []
    count = 0
    last_poll = None  # an MPI_Iprobe that found nothing, with no wildcard operation after it

    def event_of(row: int) -> int:
        p = int(position[row]) if row is not None and row >= 0 else -1
        return int(ids[p]) if 0 <= p < len(ids) else -1

    for i in np.flatnonzero((rtype == rf.ENTER) & (request > 0)).tolist():
        call = r.calls.get(int(ev["comm"][i]), "?")
        index = int(request[i]) - 1
        forced = int(ev["bytes_type"][i] >> 8) - 1
        site = _address(ev["peer"][i], ev["tag"][i])
        k = np.searchsorted(leaves, i)
        end = int(leaves[k]) if k < len(leaves) else len(ev)
        inside = range(i + 1, end)
        if k == len(leaves):  # the record ends inside the call
            still.append(OpenOperation(r.rank, index, call, forced, site,
                                       polling=call == "MPI_Iprobe"))
            if call != "MPI_Iprobe":
                count = max(count, index + 1)
            continue
        match = None  # the record of what it took
        if call in _RECEIVES:
            match = next((j for j in inside if rtype[j] == rf.RECV), None)
        elif call == "MPI_Irecv":
            posted = next((j for j in inside if rtype[j] == rf.IRECV_REQUEST), None)
            if posted is not None:
                match = completed.get(int(request[posted]))
                if match is None:
                    still.append(OpenOperation(r.rank, index, call, forced, site))
        elif call in _PROBES:
            match = next((j for j in inside if rtype[j] == rf.PROBE), None)
            if match is not None and int(ev["peer"][match]) == rf.RECORD_NONE:
                last_poll = OpenOperation(r.rank, index, call, forced, site, polling=True)
                continue  # an MPI_Iprobe that found nothing: a poll, not a decision
        last_poll = None
        count = max(count, index + 1)
        if match is None:
            continue
        comm = int(ev["comm"][match])
        members = _members(r, comm)
        source, tag = int(ev["peer"][match]), int(ev["tag"][match])
        d = Decision(r.rank, index, call, source,
                     members[source] if 0 <= source < len(members) else -1, tag, members,
                     forced=forced >= 0, time=int(ev["time"][match]), site=site)
        if call in _PROBES:
            # its alternatives are those of the receive that took the probed message
            d.event = -1
            for j in receipts[np.searchsorted(receipts, end):].tolist():
                if ev["comm"][j] == comm and ev["peer"][j] == source and ev["tag"][j] == tag:
                    d.event = event_of(j)
                    break
            # the tag it asked for, MPI_ANY_TAG as -1 (in the RECORD_EXTRA before it)
            d.probe_tag = int(extra["requested_tag"][match - 1]) if rtype[match - 1] == rf.EXTRA \
                else tag
        else:
            d.event = event_of(match)
        out.append(d)
    if last_poll is not None and not r.finalized:
        still.append(last_poll)  # polled until the end of its record
    return out, still, count


def _in_match_order(decisions: List[Decision]) -> List[Decision]:
    """The run's decisions in the order they matched.  A process's operation
    is taken as matched no later than its later ones (a non-blocking receive
    completes late, but MPI's non-overtaking rule matched it before a later
    receive of the same kind), then by time; ties by rank and number."""
    by_rank: Dict[int, List[Decision]] = {}
    for d in decisions:
        by_rank.setdefault(d.rank, []).append(d)
    when = {}
    for mine in by_rank.values():
        mine.sort(key=lambda d: d.index)
        earliest = None
        for d in reversed(mine):
            earliest = d.time if earliest is None else min(earliest, d.time)
            when[d.key] = earliest
    return sorted(decisions, key=lambda d: (when[d.key], d.rank, d.index))


# -- alternatives: the race analysis of the run's trace -------------------------------------

def find_alternatives(trace, decisions: Sequence[Decision]) -> None:
    """Fill each decision's alternatives: the other sources it could have
    taken, from earlc.races on the run's trace (Vo's matches-before order,
    lazy vector clocks).  Receives are analysed as the program asked (the
    recorded requested source and tag); a wildcard probe through the receive
    that took the message it found, analysed as if that receive had asked
    for any source and for the probe's tag."""
    from . import _core
    from .races import NOT_RECORDED, WILDCARD, Races, _requested_columns

    if not decisions:
        return
    m = trace.events.messages
    source, tag = _requested_columns(trace)
    rows = len(m.event)
    source = np.full(rows, NOT_RECORDED, np.int32) if source is None else source.copy()
    tag = np.full(rows, NOT_RECORDED, np.int32) if tag is None else tag.copy()
    ev = trace.events
    for d in decisions:
        if d.probe_tag is None or d.event < 0:
            continue
        row = int(ev.ref_of(d.event))
        posted = int(m.partner_of(row)) if ev.kind[d.event] == KINDS["MPI_IRECV"] else -1
        for x in (row, posted):
            if x >= 0:
                source[x] = WILDCARD
                tag[x] = d.probe_tag
    core = _core.Races(trace._core, trace.states._core, requested_source=source,
                       requested_tag=tag, lamport=False, progress=None)
    races = Races(trace, core, {"wildcard": "recorded", "description": "earlc verify"})
    start = races.alt_start
    alternatives = {int(e): races.alt_send[int(start[k]):int(start[k + 1])]
                    for k, e in enumerate(races.recv.tolist())}
    rank_of = np.array([l.rank for l in trace.locations], dtype=np.int64)
    for d in decisions:
        sends = alternatives.get(d.event)
        if sends is None:
            continue
        world = rank_of[ev.location[sends]].tolist()
        found = sorted({d.members.index(w) for w in world if w in d.members} - {d.source})
        d.alternatives = found


# -- schedules ----------------------------------------------------------------------------

@dataclass
class Forced:
    """A decision of a schedule: wildcard operation `index` of process `rank`
    takes `source` (a rank in its communicator).  flipped: the exploration
    chose it against what the operation took (`took`) in the run it came
    from; site: where the program makes it (for people)."""

    rank: int
    index: int
    call: str
    source: int
    flipped: bool = False
    took: Optional[int] = None
    site: str = ""

    @property
    def key(self) -> Tuple[int, int]:
        return (self.rank, self.index)

    def to_dict(self) -> dict:
        out = {"rank": self.rank, "wildcard": self.index, "call": self.call,
               "source": self.source, "flipped": self.flipped}
        if self.took is not None:
            out["took"] = self.took
        if self.site:
            out["site"] = self.site
        return out

    def text(self) -> str:
        """'rank 0 wildcard #1 (MPI_Recv) from 2'."""
        return "rank %d wildcard #%d (%s) from %d" % (self.rank, self.index, self.call,
                                                     self.source)


def forced_from(d: Decision, source: Optional[int] = None, site: str = "") -> Forced:
    """The decision d as a schedule entry: as it was, or flipped to source."""
    if source is None or source == d.source:
        return Forced(d.rank, d.index, d.call, d.source, site=site)
    return Forced(d.rank, d.index, d.call, source, flipped=True, took=d.source, site=site)


def schedule_json(forced: Sequence[Forced], command: Sequence[str], processes: int) -> str:
    """The schedule file: JSON, one decision per line."""
    head = json.dumps({"earlc_schedule": SCHEDULE_FORMAT, "command": list(command),
                       "processes": processes})
    body = ",\n".join("  " + json.dumps(f.to_dict()) for f in forced)
    return head[:-1] + ', "decisions": [\n' + body + ("\n" if body else "") + "]}"


def recorder_text(forced: Iterable[Forced]) -> str:
    """The schedule as the recorder reads it (record_schedule.c): one line per
    decision, each process's in increasing number."""
    lines = ["earlc-schedule %d" % SCHEDULE_FORMAT]
    for f in sorted(forced, key=lambda f: f.key):
        lines.append("%d %d %d %s" % (f.rank, f.index, f.source, f.call))
    return "\n".join(lines) + "\n"


def load_schedule(path: str) -> List[Forced]:
    """The decisions of a schedule file; VerifyError names the file and the
    first thing wrong in it."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as exc:
        raise VerifyError("%s: %s" % (path, exc.strerror or exc)) from None
    except ValueError as exc:
        raise VerifyError("%s is not a schedule (not JSON: %s)" % (path, exc)) from None
    if not isinstance(data, dict) or data.get("earlc_schedule") != SCHEDULE_FORMAT \
            or not isinstance(data.get("decisions"), list):
        raise VerifyError("%s is not a schedule of earlc verify (no \"earlc_schedule\": %d and "
                          "\"decisions\" list)" % (path, SCHEDULE_FORMAT))
    out, seen = [], set()
    for n, d in enumerate(data["decisions"], 1):
        what = "%s: decision %d" % (path, n)
        if not isinstance(d, dict):
            raise VerifyError("%s is not an object" % what)
        values = {}
        for name in ("rank", "wildcard", "source"):
            v = d.get(name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise VerifyError("%s: %r must be a whole number >= 0, not %r" % (what, name, v))
            values[name] = v
        if d.get("call") not in WILDCARD_CALLS:
            raise VerifyError("%s: \"call\" must be one of %s, not %r"
                              % (what, ", ".join(WILDCARD_CALLS), d.get("call")))
        f = Forced(values["rank"], values["wildcard"], d["call"], values["source"],
                   flipped=bool(d.get("flipped", False)),
                   took=d.get("took") if isinstance(d.get("took"), int) else None,
                   site=str(d.get("site", "")))
        if f.key in seen:
            raise VerifyError("%s: rank %d wildcard #%d is named twice" % (what, f.rank, f.index))
        seen.add(f.key)
        out.append(f)
    return out
