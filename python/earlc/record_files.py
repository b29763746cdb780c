"""The recorder's files and the OTF2 archive made from them (`earlc record`).

While an MPI program runs under `earlc record`, each process writes
rank-R.events (fixed-size binary records) and rank-R.defs (text lines), laid
out in csrc/include/earlc_record.h.  Once the command has ended, however it
ended, `assemble` reads them and writes the OTF2 archive with earlc's writer
(earlc.TraceWriter): the processes' records as Score-P lays them out, the
communicators with their members, clock offsets, and for every process whose
record ends early why, and where in the program its open calls were made.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._core import Error
from .events import KINDS
from .writer import TraceWriter

#: location property (string) of an incomplete location: the calls still open at its
#: end with where the program made them (earl.h EARL_PROPERTY_CALL_SITES)
PROPERTY_CALL_SITES = "earlc::call_sites"
#: location property (string, ticks of the location's clock) of a location whose run
#: was ended (--timeout, Ctrl-C): when `earlc record` ended it
PROPERTY_RUN_ENDED = "earlc::run_ended"

#: one record of rank-R.events (struct record_event of earlc_record.h): the type in
#: the low byte of bytes_type, the size above it
RECORD_DTYPE = np.dtype([("time", "<u8"), ("comm", "<u4"), ("peer", "<i4"), ("tag", "<i4"),
                         ("request", "<u4"), ("bytes_type", "<u8")])
#: the same 32 bytes read as a RECORD_EXTRA (struct record_extra)
EXTRA_DTYPE = np.dtype([("requested_source", "<i4"), ("requested_tag", "<i4"), ("index", "<i4"),
                        ("op", "<i4"), ("unused", "<u8"), ("bytes2_type", "<u8")])
assert RECORD_DTYPE.itemsize == EXTRA_DTYPE.itemsize == 32

# enum record_type of earlc_record.h
(END, ENTER, LEAVE, SEND, ISEND, ISEND_COMPLETE, IRECV_REQUEST, IRECV, RECV, REQUEST_TEST,
 REQUEST_CANCELLED, COLLECTIVE_BEGIN, COLLECTIVE_END, PROBE, EXTRA) = range(15)
RECORD_NONE = -2

BUILT_FOR = "MPICH (libmpich.so.12)"


class RecordError(Error):
    """Bad input to `earlc record`: a one-line message for the user."""


@dataclass
class RunResult:
    status: int            # the command's exit status (128 + signal when killed;
                           # 124 when the timeout ended it, 130 after Ctrl-C)
    timed_out: bool
    interrupted: bool
    seconds: float
    ended_ns: int = 0      # when it ended or was told to, on CLOCK_MONOTONIC of `host`
    host: str = ""
    dropped: Dict[str, int] = field(default_factory=dict)  # what could not be recorded
    records: List["RankRecord"] = field(default_factory=list)  # the processes' files, read


# -- reading the recorder's files -------------------------------------------------------

@dataclass
class RankRecord:
    """What one process left: its defs lines and its events."""
    rank: int
    size: int = 0
    host: str = ""
    library: str = ""
    mismatch: bool = False
    calls: Dict[int, str] = field(default_factory=dict)
    objects: List[Tuple[int, int, int, str]] = field(default_factory=list)  # start, end, bias, path
    comms: Dict[int, Tuple] = field(default_factory=dict)  # id -> ("self",) or (members, seq)
    clock: List[Tuple[int, int]] = field(default_factory=list)
    finalized: bool = False
    abort: Optional[Tuple[int, int]] = None
    exit: Optional[int] = None  # the status it exited with, without MPI_Finalize
    lost: Dict[str, int] = field(default_factory=dict)
    schedule: List[str] = field(default_factory=list)  # the schedule lines (record_schedule.c)
    events: np.ndarray = field(default_factory=lambda: np.empty(0, RECORD_DTYPE))


def read_rank(folder: str, rank: int) -> RankRecord:
    r = RankRecord(rank)
    with open(os.path.join(folder, "rank-%d.defs" % rank), errors="replace") as f:
        for line in f:
            key, _, rest = line.rstrip("\n").partition(" ")
            fields = rest.split()
            if key == "rank":
                r.size, r.host = int(fields[1]), " ".join(fields[3:])
            elif key == "library":
                r.library = rest
            elif key == "library-mismatch":
                r.mismatch = True
            elif key == "call":
                r.calls[int(fields[0])] = fields[1]
            elif key == "object" and len(fields) >= 4:
                r.objects.append((int(fields[0]), int(fields[1]), int(fields[2]),
                                  rest.split(" ", 3)[3]))
            elif key == "comm" and len(fields) >= 2:
                cid = int(fields[0])
                if fields[1] == "self":
                    r.comms[cid] = ("self",)
                else:
                    seq, n = int(fields[1]), int(fields[2])
                    r.comms[cid] = (tuple(int(x) for x in fields[3:3 + n]), seq)
            elif key == "clock":
                r.clock.append((int(fields[0]), int(fields[1])))
            elif key == "finalized":
                r.finalized = True
            elif key == "abort":
                r.abort = (int(fields[0]), int(fields[1]))
            elif key == "exit" and len(fields) >= 2:
                r.exit = int(fields[1])
            elif key in ("lost-request", "lost-comm") and fields and fields[0].isdigit():
                r.lost[key] = int(fields[0])
            elif key.startswith("schedule"):
                r.schedule.append(line.rstrip("\n"))
    path = os.path.join(folder, "rank-%d.events" % rank)
    if os.path.exists(path):
        events = np.fromfile(path, dtype=RECORD_DTYPE,
                             count=os.path.getsize(path) // RECORD_DTYPE.itemsize)
        # the written part ends at the first record whose type is 0
        ends = np.flatnonzero((events["bytes_type"] & 0xFF) == END)
        r.events = events[:ends[0]] if len(ends) else events
    return r


def _rank_files(folder: str) -> List[int]:
    ranks = []
    for name in os.listdir(folder):
        m = re.fullmatch(r"rank-(\d+)\.defs", name)
        if m:
            ranks.append(int(m.group(1)))
    return sorted(ranks)


def _times(r: RankRecord) -> np.ndarray:
    """The records' times on the process's clock, never going backwards (the
    threads of an MPI_THREAD_MULTIPLE process share one location); a
    RECORD_EXTRA takes the time of the record it belongs to."""
    t = r.events["time"].astype(np.int64)
    extras = np.flatnonzero((r.events["bytes_type"] & 0xFF) == EXTRA)
    extras = extras[extras + 1 < len(t)]
    t[extras] = t[extras + 1]
    return np.maximum.accumulate(t) if len(t) else t


def _clock_offsets(w: TraceWriter, r: RankRecord, times: np.ndarray) -> None:
    """The offsets to rank 0's clock that a process on another machine measured
    (MPI_Init, MPI_Finalize), as OTF2 clock offsets: readers correct its times.
    A process that ended before MPI_Finalize keeps its one offset constant."""
    clock = sorted(r.clock)
    if len(clock) == 1 and len(times) and int(times[-1]) > clock[0][0]:
        clock.append((int(times[-1]), clock[0][1]))
    if len(clock) >= 2:
        for when, offset in clock:
            w.clock_offset(r.rank, when, offset)


# -- assembling the archive -------------------------------------------------------------

def _ended_how(r: RankRecord, run: RunResult, aborts: List[RankRecord],
               exits: List[RankRecord]) -> str:
    if aborts:
        a = aborts[0]
        return "rank %d called MPI_Abort (error code %d)" % (a.rank, a.abort[1])
    if exits:
        # the launcher then ends the others (MPICH's kills them)
        e = r if r in exits else exits[0]
        return "rank %d exited with status %d without calling MPI_Finalize" % (e.rank, e.exit)
    if run.timed_out:
        return "the run did not finish within the timeout and was ended"
    if run.interrupted:
        return "the run was interrupted"
    return "the process ended without MPI_Finalize (command exit status %d)" % run.status


def assemble(folder: str, out: str, run: RunResult, overwrite: bool = False,
             command: Sequence[str] = ()) -> Dict[str, int]:
    """Write the OTF2 archive `out` from the recorder's files in `folder`;
    returns what could not be recorded or written, counted (empty when all was)."""
    ranks = _rank_files(folder)
    records = [read_rank(folder, r) for r in ranks]
    run.records = records
    if not records:
        raise RecordError(
            "%s recorded nothing: no process called MPI_Init, so it is not an MPI program "
            "(or one linked statically); exit status %d" % (" ".join(command[:1]) or "the command",
                                                          run.status))
    mismatched = [r for r in records if r.mismatch]
    if mismatched:
        raise RecordError("the program uses %s; the recorder was built for %s"
                          % (mismatched[0].library or "another MPI library", BUILT_FOR))
    size = max(r.size for r in records)
    by_rank = {r.rank: r for r in records}
    aborts = [r for r in records if r.abort]
    exits = [r for r in records if r.exit is not None and not r.finalized]
    dropped = {"records on a communicator the recorder had no room for": 0,
               "requests the recorder had no room for": sum(r.lost.get("lost-request", 0)
                                                            for r in records),
               "communicators the recorder had no room for": sum(r.lost.get("lost-comm", 0)
                                                                 for r in records)}
    with TraceWriter(out, ranks=size, overwrite=overwrite,
                     creator="earlc record (%s)" % " ".join(records[0].library.split())) as w:
        comm_refs = _define_comms(w, records, size)
        for rank in range(size):
            r = by_rank.get(rank)
            if r is None:
                w.mark_incomplete(rank, "no record: the process ended before MPI_Init returned")
                continue
            dropped["records on a communicator the recorder had no room for"] += \
                _write_rank(w, r, comm_refs[rank])
            if not r.finalized:
                w.mark_incomplete(rank, _ended_how(r, run, aborts, exits))
                sites = _open_call_sites(r)
                if sites:
                    w.location_property(rank, PROPERTY_CALL_SITES, sites)
                if (run.timed_out or run.interrupted) and run.ended_ns and r.host == run.host:
                    # the same clock as the process's records: when it was ended
                    w.location_property(rank, PROPERTY_RUN_ENDED, str(run.ended_ns))
    return {k: v for k, v in dropped.items() if v}


def _open_call_sites(r: RankRecord) -> str:
    """For a process whose record ends early: each call still open at its end,
    outermost first, with the place in the program that made it, e.g.
    "MPI_Recv from main (prog.c:31)" (docs/record.md)."""
    kinds = (r.events["bytes_type"] & 0xFF).tolist()
    stack = []
    for i, kind in enumerate(kinds):
        if kind == ENTER:
            stack.append(i)
        elif kind == LEAVE and stack:
            stack.pop()
    if not stack:
        return ""
    ev = r.events[stack]
    addresses = [(int(lo) & 0xFFFFFFFF) | (int(hi) & 0xFFFFFFFF) << 32
                 for lo, hi in zip(ev["peer"].tolist(), ev["tag"].tolist())]
    places = resolve_addresses(r.objects, addresses)
    out = []
    for call, address in zip(ev["comm"].tolist(), addresses):
        name = r.calls.get(call, "MPI call %d" % call)
        out.append("%s from %s" % (name, places[address]) if address in places else name)
    return "; ".join(out)


def resolve_addresses(objects: Sequence[Tuple[int, int, int, str]],
                      addresses: Sequence[int]) -> Dict[int, str]:
    """'function (file:line)' of return addresses, through the program's
    executable segments and addr2line (binutils); what cannot be resolved is
    left out, or named by its object and offset."""
    by_object: Dict[Tuple[str, int], List[int]] = {}
    for a in set(addresses):
        for start, end, bias, path in objects:
            if start <= a < end:
                by_object.setdefault((path, bias), []).append(a)
                break
    out = {}
    for (path, bias), found in by_object.items():
        # a return address is just after its call: look up the call's byte
        offsets = ["0x%x" % (a - bias - 1) for a in found]
        try:
            lines = subprocess.run(["addr2line", "-f", "-C", "-e", path, *offsets],
                                   capture_output=True, text=True, timeout=30).stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            lines = []
        for k, a in enumerate(found):
            func = lines[2 * k] if 2 * k < len(lines) else "??"
            where = lines[2 * k + 1].split(" ")[0] if 2 * k + 1 < len(lines) else "??"
            text = func if func != "??" else "%s+0x%x" % (os.path.basename(path), a - bias)
            if not where.startswith("??"):
                text += " (%s)" % os.path.basename(where)
            out[a] = text
    return out


def _define_comms(w: TraceWriter, records: List[RankRecord], size: int) -> Dict[int, Dict[int, int]]:
    """Writer references of every process's communicator ids: a communicator
    is named alike by all its members, by (members, seq)."""
    world = (tuple(range(size)), 0)
    refs: Dict[Tuple, int] = {world: w.world}
    out: Dict[int, Dict[int, int]] = {}
    for r in records:
        mine = out.setdefault(r.rank, {})
        for cid, key in sorted(r.comms.items()):
            if key == ("self",):
                mine[cid] = w.self_comm
                continue
            if key not in refs:
                members, seq = key
                refs[key] = w.comm("MPI communicator %d" % (len(refs)), list(members))
            mine[cid] = refs[key]
    return out


# the event kind (earlc.KINDS) each record type is written as; PROBE and EXTRA
# write none (their fields go to other records), an ISEND without a request id
# (the request table was full) is written as an MPI_SEND
_WRITTEN_AS = {ENTER: "ENTER", LEAVE: "LEAVE", SEND: "MPI_SEND", ISEND: "MPI_ISEND",
               ISEND_COMPLETE: "MPI_ISEND_COMPLETE", IRECV_REQUEST: "MPI_IRECV_REQUEST",
               IRECV: "MPI_IRECV", RECV: "MPI_RECV", REQUEST_TEST: "MPI_REQUEST_TEST",
               REQUEST_CANCELLED: "MPI_REQUEST_CANCELLED", COLLECTIVE_BEGIN: "MPI_COLLECTIVE_BEGIN",
               COLLECTIVE_END: "MPI_COLLECTIVE_END"}
_KIND_OF = np.zeros(EXTRA + 1, dtype=np.uint8)
for _type, _name in _WRITTEN_AS.items():
    _KIND_OF[_type] = KINDS[_name]
_ON_COMM = [SEND, ISEND, RECV, IRECV, COLLECTIVE_END, PROBE]
UNDEFINED = 0xFFFFFFFF


def _written(rtype: np.ndarray, lost: np.ndarray) -> np.ndarray:
    """Which records become events of the archive (PROBE and EXTRA do not, nor
    records on a communicator the recorder had no room for)."""
    return np.isin(rtype, list(_WRITTEN_AS)) & ~lost


def written_positions(r: RankRecord) -> np.ndarray:
    """For each record of r, its position among the location's events in the
    archive `assemble` writes (-1: not written), so that a record can be found
    in the opened trace: ``trace.events.of_location(loc)[position]``."""
    rtype = (r.events["bytes_type"] & 0xFF).astype(np.int64)
    lost = np.isin(rtype, _ON_COMM) & ~np.isin(r.events["comm"], list(r.comms))
    keep = _written(rtype, lost)
    return np.where(keep, np.cumsum(keep) - 1, -1)


def _write_rank(w: TraceWriter, r: RankRecord, comms: Dict[int, int]) -> int:
    """Write one process's events, all columns at once; returns the records
    dropped because the recorder had no room for their communicator."""
    ev = r.events
    n = len(ev)
    times = _times(r)
    _clock_offsets(w, r, times)
    rtype = (ev["bytes_type"] & 0xFF).astype(np.int64)
    absent = TraceWriter.ABSENT

    # a RECORD_EXTRA holds fields of the record after it
    x = ev.view(EXTRA_DTYPE)
    extra = np.flatnonzero(rtype == EXTRA)
    extra = extra[extra + 1 < n]
    target = extra + 1
    req_source = np.full(n, absent, dtype=np.int64)
    req_tag = np.full(n, absent, dtype=np.int64)
    index = np.full(n, absent, dtype=np.int64)
    asked = (x["requested_source"][extra] != RECORD_NONE) | (x["requested_tag"][extra] != RECORD_NONE)
    req_source[target[asked]] = x["requested_source"][extra[asked]]
    req_tag[target[asked]] = x["requested_tag"][extra[asked]]
    completed = x["index"][extra] >= 0
    index[target[completed]] = x["index"][extra[completed]]
    op = np.zeros(n, dtype=np.uint8)
    op[target] = x["op"][extra]
    bytes2 = np.zeros(n, dtype=np.uint64)
    bytes2[target] = x["bytes2_type"][extra] >> 8
    # a probe has no OTF2 record: what it asked for rides on its LEAVE, next
    probe = np.flatnonzero(rtype == PROBE)
    probe = probe[probe + 1 < n]
    probe = probe[rtype[probe + 1] == LEAVE]
    req_source[probe + 1] = req_source[probe]
    req_tag[probe + 1] = req_tag[probe]

    # references: communicators of the MPI records, regions of ENTER/LEAVE
    # (whose comm field is the call)
    ids = ev["comm"]
    ref = np.zeros(n, dtype=np.uint32)
    on_comm = np.isin(rtype, _ON_COMM)
    known = np.zeros(n, dtype=bool)
    for cid, cref in comms.items():
        mine = on_comm & (ids == cid)
        ref[mine] = cref
        known |= mine
    lost = on_comm & ~known
    region_records = (rtype == ENTER) | (rtype == LEAVE)
    for call in np.unique(ids[region_records]).tolist():
        ref[region_records & (ids == call)] = w.region_ref(r.calls.get(call, "MPI call %d" % call))

    kind = _KIND_OF[np.minimum(rtype, EXTRA)]
    kind[(rtype == ISEND) & (ev["request"] == 0)] = KINDS["MPI_SEND"]
    peer = ev["peer"].view(np.uint32).copy()
    peer[(rtype == COLLECTIVE_END) & (ev["peer"] == RECORD_NONE)] = UNDEFINED  # no root
    keep = _written(rtype, lost)

    attributes = {}
    asks = np.isin(rtype, [RECV, IRECV_REQUEST, LEAVE]) & (req_source != absent)
    if asks[keep].any():
        source_ref, tag_ref = w.requested_attributes()
        attributes[source_ref] = np.where(asks, req_source, absent)[keep]
        attributes[tag_ref] = np.where(asks, req_tag, absent)[keep]
    tells = np.isin(rtype, [ISEND_COMPLETE, IRECV, REQUEST_CANCELLED]) & (index != absent)
    if tells[keep].any():
        attributes[w.request_index_attribute()] = np.where(tells, index, absent)[keep]
    w.events(r.rank, kind[keep], times[keep], ref=ref[keep], peer=peer[keep],
             tag=ev["tag"].view(np.uint32)[keep], bytes=(ev["bytes_type"] >> 8)[keep],
             bytes2=bytes2[keep], id=ev["request"][keep], op=op[keep], attributes=attributes)
    return int((lost & (rtype != PROBE)).sum())
