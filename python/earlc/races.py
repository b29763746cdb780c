"""Message races: which wildcard receives could have taken another message.

    r = earlc.races(trace, wildcard="all")   # or "recorded", a region name, ranks, a predicate
    r.to_dataframe()                         # one row per (receive, alternative send)
    print(r.to_text())
    r.to_json()

A receive that accepts any source (MPI_ANY_SOURCE) may take a different message on the
next run.  earlc replays the trace once in the matches-before order of Vo's dissertation
with lazy vector clocks (LVCP) and lazy Lamport clocks (LLCP) and lists, for every wildcard
receive, each send that could have matched it instead (Theorem 5.5), the receives with
most alternatives first.  It also lists other nondeterministic calls (MPI_Waitany,
MPI_Waitsome, MPI_Testany, MPI_Testsome, probes) and the resource leaks a trace shows
(requests never completed, communicators never freed).  docs/races.md has the rules and the
JSON schema.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core
from .display import format_seconds, time_columns, time_fields
from .events import KINDS, column


class RacesError(_core.Error, ValueError):
    """A choice of wildcard receives (or of clocks) that cannot be made on this trace:
    the message says what to choose instead."""


WILDCARD = -1       #: requested source or tag: MPI_ANY_SOURCE / MPI_ANY_TAG
NOT_RECORDED = -2   #: the trace does not say what the receive asked for

_RECV_KINDS = (KINDS["MPI_RECV"], KINDS["MPI_IRECV"])

Wildcard = Union[None, str, Sequence[int], Callable]


class WildcardsNotRecorded(RacesError):
    """The trace has receives but does not say which of them asked for any source:
    the caller must choose (`wildcard=`, `--wildcard`).  `cli_message` is the same
    advice in the command line's terms."""

    def __init__(self, path: str, receives: int):
        what = ("%s has %d receive%s but does not say which asked for any source (OTF2 has no "
                "field for it; traces written by `earlc record` carry it as an attribute)"
                % (path, receives, "" if receives == 1 else "s"))
        super().__init__(what + ": choose which receives to take as wildcards with wildcard='all', "
                                "a region name, a list of ranks or a predicate")
        self.cli_message = (what + ": choose with --wildcard all, --wildcard REGION (the "
                                   "receives called inside it) or --wildcard RANKS (e.g. 0,2-4)")


@dataclass(frozen=True)
class Finding:
    """Another source of nondeterminism or a resource leak on one location: `kind`
    (waitany, waitsome, testany, testsome, probe, request_not_completed, comm_not_freed),
    its first event (for comm_not_freed the last creating call) and how many."""

    kind: str
    location: int
    event: int
    count: int


def _requested_columns(trace):
    """The trace's requested source and tag per message row, when its model has them."""
    m = trace.events.messages
    source = getattr(m, "requested_source", None)
    tag = getattr(m, "requested_tag", None)
    if source is not None:
        source = np.ascontiguousarray(source, dtype=np.int32)
    if tag is not None:
        tag = np.ascontiguousarray(tag, dtype=np.int32)
    return source, tag


def _receive_rows(trace) -> np.ndarray:
    """Message-table rows of the receive records (MPI_RECV, MPI_IRECV)."""
    m = trace.events.messages
    kinds = trace.events.kind[m.event]
    return np.nonzero(np.isin(kinds, _RECV_KINDS))[0]


def _posted(trace, events: np.ndarray) -> np.ndarray:
    """Where each receive record was posted: itself or its MPI_IRECV_REQUEST."""
    ev = trace.events
    partner = ev.messages.partner_of(ev.ref_of(events))
    irecv = (ev.kind[events] == KINDS["MPI_IRECV"]) & (partner >= 0)
    return np.where(irecv, partner, events)


def _inside_region(trace, events: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Whether each event's call path (its enterptr chain) holds one of the regions."""
    st = trace.states
    region_of = trace.events.region_of
    inside = np.zeros(len(events), dtype=bool)
    cur = st.enterptr_of(events)
    while True:
        live = cur >= 0
        if not live.any():
            return inside
        inside[live] |= np.isin(region_of(cur[live]), refs)
        cur = np.where(live, st.enterptr_of(np.maximum(cur, 0)), -1)


def _select(trace, wildcard) -> tuple:
    """(requested_source, requested_tag, assumption dict) for the C core.  Of a
    part of a trace (earlc.parts) collective: what the whole trace records
    decides, and the same error ends every part."""
    source, tag = _requested_columns(trace)
    recorded = source is not None and bool((source != NOT_RECORDED).any())
    tag_recorded = tag is not None and bool((tag != NOT_RECORDED).any())
    rows = _receive_rows(trace)
    n_receives = len(rows)
    part = trace.part
    if part is not None:  # the whole trace's: every part counts its own receives
        own = part.own[trace.events.location[trace.events.messages.event[rows]]]
        rows = rows[own]
        n_receives, recorded, tag_recorded = (int(x) for x in part.exchange.allreduce_sum(
            np.array([len(rows), recorded, tag_recorded], np.int64)))
    tags = tag if tag is not None and tag_recorded else None
    if wildcard is None or (isinstance(wildcard, str) and wildcard == "recorded"):
        if not n_receives:
            # nothing to choose among: whatever a trace records, a trace without a
            # completed receive has no wildcard receive (not an error)
            return None, tags, {"wildcard": "recorded",
                                "description": "no receive completed in this trace, so none "
                                               "is a wildcard receive"}
        if not recorded:
            raise WildcardsNotRecorded(trace.path, n_receives)
        return source, tags, {"wildcard": "recorded",
                              "description": "the requested sources and tags the trace recorded"}
    events = trace.events.messages.event[rows]
    if isinstance(wildcard, str) and wildcard == "all":
        return None, tags, {"wildcard": "all",
                            "description": "every receive taken as asking for any source"}
    if isinstance(wildcard, str):
        refs = np.array([r.id for r in trace.regions if r.name == wildcard], dtype=np.uint32)
        if not len(refs):
            raise RacesError("no region named %r in %s" % (wildcard, trace.path))
        chosen = _inside_region(trace, _posted(trace, events), refs)
        assumption = {"wildcard": "region", "value": wildcard,
                      "description": "the receives called inside %s taken as asking for any "
                                     "source" % wildcard}
    elif callable(wildcard):
        chosen = np.array([bool(wildcard(trace.event(int(e)))) for e in events], dtype=bool)
        name = getattr(wildcard, "__name__", "predicate")
        assumption = {"wildcard": "predicate", "value": name,
                      "description": "the receives the predicate %s chose taken as asking for "
                                     "any source" % name}
    else:
        try:
            ranks = sorted({int(r) for r in wildcard})
        except (TypeError, ValueError):
            raise RacesError("wildcard must be 'all', 'recorded', a region name, a list of ranks "
                             "or a predicate, not %r" % (wildcard,)) from None
        rank_of = np.array([l.rank if l.rank is not None else -1 for l in trace.locations],
                           dtype=np.int64)
        known = set(int(r) for r in rank_of if r >= 0)
        unknown = [r for r in ranks if r not in known]
        if unknown or not ranks:
            raise RacesError("no MPI rank %s in %s (ranks 0..%d)" % (
                ", ".join(map(str, unknown)) or "given", trace.path, max(known, default=-1)))
        chosen = np.isin(rank_of[trace.events.location[events]], ranks)
        assumption = {"wildcard": "ranks", "value": ranks,
                      "description": "the receives of ranks %s taken as asking for any source"
                                     % ", ".join(map(str, ranks))}
    requested = np.full(len(trace.events.messages), NOT_RECORDED, dtype=np.int32)
    requested[rows[chosen]] = WILDCARD
    return requested, tags, assumption


def parse_wildcard(text: Optional[str]) -> Wildcard:
    """The command line's --wildcard: None, "all", "recorded", ranks ("0,2-4") or a
    region name (anything else)."""
    if text is None or text in ("all", "recorded"):
        return text
    t = text.replace(" ", "")
    if t and all(c.isdigit() or c in ",-" for c in t):
        ranks = []
        for part in t.split(","):
            lo, dash, hi = part.partition("-")
            if not lo.isdigit() or (dash and not hi.isdigit()):
                raise RacesError("bad rank list %r (write ranks as 0,2-4)" % text)
            a, b = int(lo), int(hi) if dash else int(lo)
            if b < a:
                raise RacesError("bad rank range %r in %r" % (part, text))
            ranks.extend(range(a, b + 1))
        return ranks
    return text


def races(trace, wildcard: Wildcard = None, clocks: str = "vector",
          progress: Optional[Callable[[str, int, int], None]] = None,
          root: Optional[int] = None, memory=None, scratch=None) -> "Races":
    """The message races of a trace.

    wildcard: which receives asked for any source.  None or "recorded": what the trace
    recorded (an error when it recorded nothing); "all": every receive; a region name: the
    receives called inside that region; a list of MPI ranks: the receives of those ranks; a
    callable: the receive records (Event) for which it returns true.  Tags are taken as
    recorded, MPI_ANY_TAG where the trace records it.
    clocks: "vector" (LVCP, every alternative; what LLCP alone finds is marked) or
    "lamport" (LLCP alone: cheaper, may miss some).
    Raises ValueError for a bad choice; the C work runs without the GIL.

    Of a trace in parts (earlc.open(path, parts="mpi")) collective: every MPI
    process calls it with the same arguments and gets the whole trace's races
    (event ids of the whole trace), or with root=R process R only (the others
    get None): the command line's choice, where rank 0 writes the report.

    trace may also be the path of an archive: it is opened (under mpiexec with
    several processes, in parts), or when its analysis needs more than memory
    ("8G", "512M", bytes; None: what the machine has available; "unlimited":
    never) analysed in parts one after another within that budget, with what
    crosses parts in scratch (a folder; default the system's temporary folder;
    docs/memory.md): the same races.
    """
    if clocks not in ("vector", "lamport"):
        raise RacesError("clocks must be 'vector' or 'lamport', not %r" % (clocks,))
    if isinstance(trace, (str, os.PathLike)):
        from .parts.inturn import InTurn
        from .search import _open_path

        trace = _open_path(trace, memory, None if scratch is None else scratch, 0, progress)
        if isinstance(trace, InTurn):  # in parts one after another
            with trace as parts:
                return parts.races(wildcard=wildcard, clocks=clocks, progress=progress)
    elif memory is not None or scratch is not None:
        raise ValueError("memory and scratch apply to the races of a path: this trace is in "
                         "memory already")
    if getattr(trace, "is_view", False):  # the receives in a view (earlc.view)
        return races(trace.trace, wildcard=wildcard, clocks=clocks,
                     progress=progress).restrict(trace.contains)
    if trace.part is not None:
        from .parts.races import races as races_parts

        return races_parts(trace, wildcard, clocks, progress, root)
    source, tag, assumption = _select(trace, wildcard)
    core = _core.Races(trace._core, trace.states._core, requested_source=source,
                       requested_tag=tag, lamport=clocks == "lamport", progress=progress)
    return Races(trace, core, assumption)


class Races:
    """The result of `earlc.races`: wildcard receives, their alternative sends, other
    sources of nondeterminism and resource leaks."""

    def __init__(self, trace, core, assumption: dict):
        self.trace = trace
        self._core = core
        #: which receives were taken as wildcards: {"wildcard", "description", "value"?}
        self.assumption = assumption
        info = core.info()
        self.clocks: str = info["clocks"]
        #: alternatives LLCP (Lamport clocks) alone would not have found
        self.lamport_missed: int = info["lamport_missed"]
        #: counted inconsistencies met (cycle_broken, recv_without_send)
        self.warnings: Dict[str, int] = info["warnings"]
        #: bytes: the analysis's working memory at its peak, and what the result holds
        self.memory = {"peak": info["peak_bytes"], "result": info["bytes"]}
        self.recv = column(core, "recv", "q")            #: wildcard receive records
        self.recv_posted = column(core, "recv_posted", "q")
        self.recv_send = column(core, "recv_send", "q")  #: the send each one took, -1
        self.recv_any_tag = column(core, "recv_any_tag", "B").astype(bool)
        self.alt_start = column(core, "alt_start", "Q")
        self.alt_send = column(core, "alt_send", "q")
        self.alt_lamport = column(core, "alt_lamport", "B").astype(bool)
        kinds = info["finding_kinds"]
        self.findings: List[Finding] = [
            Finding(kinds[k], int(l), int(e), int(n)) for k, l, e, n in zip(
                column(core, "finding_kind", "B"), column(core, "finding_location", "i"),
                column(core, "finding_event", "q"), column(core, "finding_count", "Q"))]
        self._paths: Dict[int, str] = {}

    def restrict(self, contains) -> "Races":
        """These races for the wildcard receives for which contains(ids) holds (a
        view's), with all their alternatives; findings on those receives' locations
        only where their event is in it too.  Changes this object and returns it."""
        keep = contains(self.recv) if len(self.recv) else np.zeros(0, dtype=bool)
        counts = self.n_alternatives
        pair_keep = np.repeat(keep, counts)
        self.recv, self.recv_posted = self.recv[keep], self.recv_posted[keep]
        self.recv_send, self.recv_any_tag = self.recv_send[keep], self.recv_any_tag[keep]
        self.alt_start = np.concatenate(([0], np.cumsum(counts[keep]))).astype(np.uint64)
        self.alt_send, self.alt_lamport = self.alt_send[pair_keep], self.alt_lamport[pair_keep]
        events = np.array([f.event for f in self.findings], dtype=np.int64)
        inside = contains(events) if len(events) else np.zeros(0, dtype=bool)
        self.findings = [f for f, k in zip(self.findings, inside.tolist()) if k]
        return self

    # -- counts ----------------------------------------------------------------------
    def __len__(self) -> int:
        """(receive, alternative send) pairs."""
        return len(self.alt_send)

    @property
    def n_alternatives(self) -> np.ndarray:
        """Alternatives of each wildcard receive (in the order of `recv`)."""
        return np.diff(self.alt_start.astype(np.int64))

    def alternatives(self, recv: int) -> np.ndarray:
        """The alternative sends of one wildcard receive record."""
        k = np.nonzero(self.recv == recv)[0]
        if not len(k):
            raise KeyError("event %d is no wildcard receive of this analysis" % recv)
        k = int(k[0])
        return self.alt_send[int(self.alt_start[k]):int(self.alt_start[k + 1])]

    def __repr__(self) -> str:
        return "<earlc.Races %d wildcard receives, %d with alternatives, %d pairs (%s)>" % (
            len(self.recv), int((self.n_alternatives > 0).sum()), len(self),
            self.assumption["wildcard"])

    # -- call paths --------------------------------------------------------------------
    def callpath(self, event: int) -> str:
        """'main/work/MPI_Send': the regions enclosing an event, outermost first."""
        st = self.trace.states
        enter = int(st.enterptr_of(event))
        if enter in self._paths:
            return self._paths[enter]
        chain = []
        e = enter
        while e >= 0 and e not in self._paths:
            chain.append(e)
            e = int(st.enterptr_of(e))
        prefix = self._paths.get(e, "") if e >= 0 else ""
        names = self.trace._region_name_array()
        region_of = self.trace.events.region_of
        for e in reversed(chain):
            ref = int(region_of(e))
            name = names[ref] if ref < len(names) and names[ref] is not None else "?"
            prefix = name if not prefix else prefix + "/" + name
            self._paths[e] = prefix
        return self._paths.get(enter, "")

    def _tags(self, events: np.ndarray) -> np.ndarray:
        """The message tags of point-to-point records (read from the message table, not
        the trace-wide event-aligned copy)."""
        ev = self.trace.events
        return ev.messages.tag[ev.ref_of(events)].astype(np.int64)

    def _tag_of(self, e: int) -> Optional[int]:
        """The tag of a point-to-point record, None for another event."""
        return int(self._tags(np.array([e]))[0]) if self.trace.events.ref_of(e) >= 0 else None

    def _locations(self, events: np.ndarray) -> np.ndarray:
        return self.trace.events.location[events]

    def _times(self, events: np.ndarray) -> np.ndarray:
        """Timestamps (ticks) of events."""
        return self.trace.events.time[events]

    # -- tables ------------------------------------------------------------------------
    def _pair_arrays(self):
        counts = self.n_alternatives
        recv = np.repeat(self.recv, counts)
        return recv, self.alt_send, np.repeat(self.recv_send, counts), np.repeat(counts, counts)

    def to_dataframe(self):
        """One row per (wildcard receive, alternative send), receives with most
        alternatives first: event ids `recv` and `send` (the receive record and the
        alternative send record), their locations, ranks, tags, times (`recv_time`,
        `send_time`: seconds from the trace's start, with `recv_time_ticks`,
        `send_time_ticks` beside them) and call paths, `recv_posted`, the send the
        receive took (`actual_send`), the receive's number of `alternatives`, and
        `lamport` (LLCP finds it too)."""
        import pandas as pd

        recv, send, actual, counts = self._pair_arrays()
        ranks = np.array([l.rank if l.rank is not None else -1 for l in self.trace.locations],
                         dtype=np.int64)
        posted = np.repeat(self.recv_posted, self.n_alternatives)
        recv_loc, send_loc = self._locations(recv), self._locations(send)
        return pd.DataFrame({
            "recv": recv, "send": send,
            "recv_location": recv_loc, "send_location": send_loc,
            "recv_rank": ranks[recv_loc], "send_rank": ranks[send_loc],
            "recv_tag": self._tags(recv), "send_tag": self._tags(send),
            **time_columns(self.trace, self._times(recv), "recv_time"),
            **time_columns(self.trace, self._times(send), "send_time"),
            "recv_callpath": [self.callpath(int(e)) for e in recv],
            "send_callpath": [self.callpath(int(e)) for e in send],
            "recv_posted": posted, "actual_send": actual, "alternatives": counts,
            "lamport": self.alt_lamport,
        })

    def receives_dataframe(self):
        """One row per wildcard receive: `recv`, `recv_posted`, `actual_send`,
        `location`, `time` (seconds from the trace's start) and `time_ticks`,
        `alternatives`, `any_tag`."""
        import pandas as pd

        return pd.DataFrame({"recv": self.recv, "recv_posted": self.recv_posted,
                             "actual_send": self.recv_send,
                             "location": self._locations(self.recv),
                             **time_columns(self.trace, self._times(self.recv)),
                             "alternatives": self.n_alternatives, "any_tag": self.recv_any_tag})

    def findings_dataframe(self):
        """One row per finding: `kind`, `location`, `event` (its first call), `time`
        (seconds from the trace's start) and `time_ticks`, `count`."""
        import pandas as pd

        events = np.array([f.event for f in self.findings], dtype=np.int64)
        return pd.DataFrame({
            "kind": [f.kind for f in self.findings],
            "location": np.array([f.location for f in self.findings], dtype=np.int64),
            "event": events, **time_columns(self.trace, self._times(events)),
            "count": np.array([f.count for f in self.findings], dtype=np.int64)})

    # -- reports ------------------------------------------------------------------------
    def _event_dict(self, e: int) -> dict:
        loc = self.trace.locations[int(self._locations(np.array([e]))[0])]
        return {"event": int(e), "location": loc.name, "rank": loc.rank, "tag": self._tag_of(e),
                **time_fields(self.trace, int(self._times(np.array([e]))[0])),
                "callpath": self.callpath(int(e))}

    def to_dict(self, limit: Optional[int] = None) -> dict:
        """The report as plain data (docs/races.md, "JSON"); `limit` keeps the first
        receives with alternatives only."""
        counts = self.n_alternatives
        receives = []
        for k in range(len(self.recv)):
            if counts[k] == 0 or (limit is not None and len(receives) >= limit):
                break
            r = self._event_dict(int(self.recv[k]))
            r.update(posted=int(self.recv_posted[k]), any_tag=bool(self.recv_any_tag[k]),
                     took=int(self.recv_send[k]) if self.recv_send[k] >= 0 else None)
            alts = []
            for a in range(int(self.alt_start[k]), int(self.alt_start[k + 1])):
                d = self._event_dict(int(self.alt_send[a]))
                d["lamport"] = bool(self.alt_lamport[a])
                alts.append(d)
            r["alternatives"] = alts
            receives.append(r)
        findings = []
        for f in self.findings:
            loc = self.trace.locations[f.location]
            findings.append({"kind": f.kind, "location": loc.name, "rank": loc.rank,
                             "event": f.event,
                             **time_fields(self.trace, int(self._times(np.array([f.event]))[0])),
                             "count": f.count, "callpath": self.callpath(f.event)})
        return {
            "trace": self.trace.path,
            "timer_resolution": self.trace.timer_resolution,
            "assumption": self.assumption,
            "clocks": self.clocks,
            "summary": {"wildcard_receives": int(len(self.recv)),
                        "receives_with_alternatives": int((counts > 0).sum()),
                        "alternatives": int(len(self)),
                        "lamport_missed": int(self.lamport_missed)},
            "receives": receives,
            "findings": findings,
            "warnings": {k: v for k, v in self.warnings.items() if v},
        }

    def to_json(self, indent: Optional[int] = None, limit: Optional[int] = None) -> str:
        return json.dumps(self.to_dict(limit), indent=indent)

    def to_text(self, top: int = 10) -> str:
        """A readable report: the assumption, the counts, the `top` receives with most
        alternatives, the other findings and warnings."""
        d = self.to_dict(limit=top)
        s = d["summary"]

        def where(x):
            rank = "rank %s" % x["rank"] if x["rank"] is not None else x["location"]
            return "%s at %s in %s" % (rank, format_seconds(x["time"]), x["callpath"] or "?")

        lines = ["Message races in %s" % d["trace"],
                 "  wildcards: %s" % d["assumption"]["description"],
                 "  %d wildcard receives, %d with alternatives, %d alternatives in all (%s clocks%s)"
                 % (s["wildcard_receives"], s["receives_with_alternatives"], s["alternatives"],
                    d["clocks"], ", %d of them missed by Lamport clocks alone" % s["lamport_missed"]
                    if d["clocks"] == "vector" else "")]
        if not s["wildcard_receives"]:
            lines.append("")
            lines.append("No wildcard receive, so no message race.")
            if any(l.incomplete is not None for l in self.trace.locations):
                lines.append("Receives still waiting when the run ended have no receive record; "
                             "`earlc analyze` says where each location stopped.")
        for r in d["receives"]:
            lines.append("")
            took = "took #%d" % r["took"] if r["took"] is not None else "took nothing"
            lines.append("receive #%d on %s %s, could also have taken:"
                         % (r["event"], where(r), took))
            for a in r["alternatives"]:
                lines.append("    send #%d tag %d on %s%s" % (a["event"], a["tag"], where(a),
                                                            "" if a["lamport"] else "  [LVCP only]"))
        if s["receives_with_alternatives"] > len(d["receives"]):
            lines.append("")
            lines.append("... %d more receives with alternatives"
                         % (s["receives_with_alternatives"] - len(d["receives"])))
        if d["findings"]:
            lines.append("")
            lines.append("Other nondeterminism and resource leaks:")
            for f in d["findings"]:
                rank = "rank %s" % f["rank"] if f["rank"] is not None else f["location"]
                lines.append("  %-22s %6d on %s, first #%d at %s in %s"
                             % (f["kind"], f["count"], rank, f["event"],
                                format_seconds(f["time"]), f["callpath"] or "?"))
        if d["warnings"]:
            lines.append("")
            lines.append("Warnings: " + ", ".join("%s %d" % kv for kv in d["warnings"].items()))
        return "\n".join(lines)
