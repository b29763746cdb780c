"""Write OTF2 traces from Python: earlc.TraceWriter.

A readable face over the C writer (earlc._core.TraceWriter, earl_writer in
csrc/).  A test or a user describes a scenario in a few lines::

    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=1024); w.leave(0, 60, "MPI_Send")
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=1024); w.leave(1, 80, "MPI_Recv")

Conventions:

* a location is addressed by its rank (its master thread) or by
  ``(rank, thread)``; the processes, threads, system tree and
  MPI_COMM_WORLD are made by the constructor, with Score-P's names and ids;
* a region is addressed by its name and made on first use, with the
  paradigm and role Score-P gives it (``MPI_*``: MPI, ``!$omp ...``: OpenMP,
  otherwise a user FUNCTION); ``region()`` defines one explicitly;
* MPI peers and roots are ranks within the communicator (``comm=``, default
  MPI_COMM_WORLD), as OTF2 stores them; a communicator is given by the
  reference ``comm()`` returned or by its name;
* times are ticks of the timer (``resolution`` ticks per second) and must
  not go backwards on a location.

Leaving the ``with`` block by an exception discards the archive; nothing is
left at the path.  Errors are earlc.TraceError.
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core, mpi_calls
from .events import KINDS
from .otf2names import (COLLECTIVE_OPS, GROUP_TYPES, LOCATION_GROUP_TYPES, LOCATION_TYPES,
                        PARADIGMS, REGION_ROLES, TYPE_DOUBLE, TYPE_INT64, TYPE_UINT64,
                        UNDEFINED_UINT32)

__all__ = ["TraceWriter", "region_kind"]

Where = Union[int, Tuple[int, int]]
Ref = Union[int, str, None]


#: OTF2 attribute and property names of docs/record.md (earl.h EARL_ATTR_*)
ATTR_REQUESTED_SOURCE = "earlc::requested_source"
ATTR_REQUESTED_TAG = "earlc::requested_tag"
ATTR_REQUEST_INDEX = "earlc::request_index"
PROPERTY_INCOMPLETE = "earlc::incomplete"
#: wildcards in requested_source / requested_tag, and "not recorded"
REQUESTED_ANY, REQUESTED_UNKNOWN = -1, -2
TYPE_INT32 = 7  # OTF2_TYPE_INT32
_REQUESTED_SOURCE_TEXT = "source the receive asked for (rank in its communicator; -1: MPI_ANY_SOURCE)"
_REQUESTED_TAG_TEXT = "tag the receive asked for (-1: MPI_ANY_TAG)"
_REQUEST_INDEX_TEXT = ("position of the completed request in the array of MPI_Waitany/-some, "
                       "MPI_Testany/-some")


class WriterError(_core.Error, ValueError):
    """A trace described wrongly to the writer: an unknown name, role or paradigm, a rank
    or communicator that is not defined.  (What the C writer refuses is a TraceError.)"""


def _reverse(table):
    return {name: value for value, name in table.items()}


PARADIGM = _reverse(PARADIGMS)
ROLE = _reverse(REGION_ROLES)
COLLECTIVE_OP = _reverse(COLLECTIVE_OPS)
LOCATION_TYPE = _reverse(LOCATION_TYPES)
LOCATION_GROUP_TYPE = _reverse(LOCATION_GROUP_TYPES)
GROUP_TYPE = _reverse(GROUP_TYPES)
VALUE_TYPE = {"uint64": TYPE_UINT64, "int64": TYPE_INT64, "double": TYPE_DOUBLE}
METRIC_MODE = {
    "accumulated_start": 0, "accumulated_point": 0x10, "accumulated_last": 0x20,
    "accumulated_next": 0x30, "absolute_point": 0x11, "absolute_last": 0x21,
    "absolute_next": 0x31, "relative_point": 0x12, "relative_last": 0x22,
    "relative_next": 0x32,
}
METRIC_TYPE = {"other": 0, "papi": 1, "rusage": 2, "user": 3}
METRIC_OCCURRENCE = {"strict": 0, "synchronous": 1, "asynchronous": 2}
RECORDER_KIND = {"unknown": 0, "abstract": 1, "cpu": 2, "gpu": 3}
RMA_SYNC_LEVEL = {"none": 0, "process": 1, "memory": 2, "process_memory": 3}
RMA_SYNC_TYPE = {"memory": 0, "notify_in": 1, "notify_out": 2}
LOCK_TYPE = {"exclusive": 0, "shared": 1}
RMA_ATOMIC_TYPE = {
    "accumulate": 0, "increment": 1, "test_and_set": 2, "compare_and_swap": 3, "swap": 4,
    "fetch_and_add": 5, "fetch_and_increment": 6, "fetch_and_accumulate": 7,
}

# OpenMP constructs as Score-P names them ("!$omp <construct> @file:line").
_OMP_ROLES = {
    "parallel": "PARALLEL", "barrier": "BARRIER", "ibarrier": "IMPLICIT_BARRIER",
    "implicit barrier": "IMPLICIT_BARRIER", "critical": "CRITICAL",
    "critical sblock": "CRITICAL_SBLOCK", "for": "LOOP", "do": "LOOP",
    "sections": "SECTIONS", "section": "SECTION", "single": "SINGLE",
    "single sblock": "SINGLE_SBLOCK", "master": "MASTER", "atomic": "ATOMIC",
    "flush": "FLUSH", "ordered": "ORDERED", "ordered sblock": "ORDERED_SBLOCK",
    "task": "TASK", "untied task": "TASK_UNTIED", "create task": "TASK_CREATE",
    "task create": "TASK_CREATE", "create untied task": "TASK_CREATE",
    "taskwait": "TASK_WAIT", "workshare": "WORKSHARE", "taskgroup": "CODE",
}


def region_kind(name: str) -> Tuple[str, str]:
    """(paradigm, role) names that Score-P would give a region of this name."""
    call = mpi_calls.lookup(name)
    if call is not None:
        return "MPI", call.role
    lowered = name.lower()
    if lowered.startswith("!$omp"):
        construct = lowered[5:].split("@", 1)[0].strip()
        for words in sorted(_OMP_ROLES, key=len, reverse=True):
            if construct == words or construct.startswith(words + " "):
                return "OPENMP", _OMP_ROLES[words]
        return "OPENMP", "CODE"
    if lowered.startswith("omp_"):
        return "OPENMP", "WRAPPER"
    if lowered.startswith("pthread_"):
        return "PTHREAD", "WRAPPER"
    return "USER", "FUNCTION"


def collective_op(name: str) -> int:
    """The OTF2 collective operation of an MPI collective region's name."""
    call = mpi_calls.lookup(name if name.startswith("MPI_") else "MPI_" + name)
    if call is None or call.op is None:
        raise WriterError("cannot infer the collective operation of %r; pass op=" % name)
    return COLLECTIVE_OP[call.op]


def _enum(table: Dict[str, int], value, what: str) -> int:
    if isinstance(value, str):
        key = value if value in table else value.lower()
        if key not in table:
            key = value.upper()
        if key not in table:
            raise WriterError("unknown %s %r (one of: %s)" % (what, value, ", ".join(table)))
        return table[key]
    return int(value)


class TraceWriter:
    """An OTF2 archive being written at ``path`` (a folder).

    ``ranks`` MPI processes of ``threads_per_rank`` CPU threads each are
    defined at once (``ranks=0``: define processes yourself through
    ``process()``; ``mpi=False``: processes without MPI ranks).  The archive
    appears at ``path`` only when ``close()`` succeeds.
    """

    def __init__(self, path: Union[str, os.PathLike], ranks: int = 1, threads_per_rank: int = 1,
                 resolution: int = 1_000_000_000, *, name: str = "traces",
                 overwrite: bool = False, mpi: bool = True, creator: Optional[str] = None,
                 memory_limit: Optional[int] = None):
        self.path = os.fspath(path)
        self._w = _core.TraceWriter(self.path, name, int(resolution), bool(overwrite))
        self._anchor = self._w.anchor_path
        self.resolution = int(resolution)
        self.mpi = mpi
        if creator:
            self._w.set_creator(creator)
        if memory_limit:
            self._w.set_memory_limit(int(memory_limit))
        self._regions: Dict[str, int] = {}
        self._comms: Dict[str, int] = {}
        self._teams: Dict[Tuple[int, ...], int] = {}
        self._wins: Dict[str, int] = {}
        self._metrics: Dict[str, int] = {}
        self._classes: Dict[Union[int, str], Tuple[int, ...]] = {}
        self._member_types: Dict[int, int] = {}
        self._strings: Dict[str, int] = {}
        self._attributes: Dict[str, int] = {}
        self._locs: Dict[Tuple[int, int], int] = {}
        self._procs: Dict[int, int] = {}
        self.world: Optional[int] = None
        self._self_comm: Optional[int] = None
        machine = self._w.system_node("Linux", "machine")
        self.node = self._w.system_node("node0", "node", machine)
        for r in range(ranks):
            self.process(r)
            for t in range(threads_per_rank):
                self.thread(r, t)
        if ranks and mpi:
            self.world = self._w.comm_world()
            self._comms["MPI_COMM_WORLD"] = self.world

    # -- context manager ---------------------------------------------------
    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def close(self) -> None:
        """Write the definitions and move the finished archive to ``path``."""
        self._w.close()

    def abort(self) -> None:
        """Discard the archive."""
        self._w.abort()

    @property
    def anchor_path(self) -> str:
        """``path/NAME.otf2`` (there once closed)."""
        return self._anchor

    @property
    def closed(self) -> bool:
        return self._w.closed

    def quirks(self, *, omit_clock_properties: bool = False,
               announced_events: Optional[int] = None) -> None:
        """Write the definitions as some other tools do, to test readers (the archive
        then says what these say, not what it holds): no ClockProperties (the OTF2
        library's own test archives), or ``announced_events`` as every location's
        number of events (APEX writes one wrong count for all)."""
        self._w.set_quirks(bool(omit_clock_properties),
                           None if announced_events is None else int(announced_events))

    def event_count(self, where: Optional[Where] = None) -> int:
        return self._w.event_count(-1 if where is None else self.loc(where))

    # -- definitions ---------------------------------------------------------
    def process(self, rank: int, name: Optional[str] = None) -> int:
        """Define the process of ``rank`` (a location group)."""
        label = name or ("MPI Rank %d" % rank if self.mpi else "Process %d" % rank)
        ref = self._w.location_group(label, LOCATION_GROUP_TYPE["PROCESS"], self.node,
                                     rank=rank if self.mpi else -1)
        self._procs[rank] = ref
        return ref

    def thread(self, rank: int, thread: int, name: Optional[str] = None,
               id: Optional[int] = None) -> int:
        """Define CPU thread ``thread`` of process ``rank``; the location index."""
        label = name or ("Master thread" if thread == 0 else "OMP thread %d" % thread)
        loc = self._w.location(self._procs[rank], label, LOCATION_TYPE["CPU_THREAD"], id)
        self._locs[(rank, thread)] = loc
        return loc

    def accelerator(self, rank: int, name: str = "CUDA[0]", streams: int = 1,
                    stream_name: str = "CUDA[0:%d]") -> Tuple[int, ...]:
        """An accelerator location group created by process ``rank`` with
        ``streams`` streams; their location indices (use them as ``where``)."""
        group = self._w.location_group(name, LOCATION_GROUP_TYPE["ACCELERATOR"], self.node,
                                       creator=self._procs[rank])
        return tuple(self._w.location(group, stream_name % i if "%" in stream_name else stream_name,
                                      LOCATION_TYPE["ACCELERATOR_STREAM"])
                     for i in range(streams))

    def metric_location(self, rank: int, name: str = "metric location") -> int:
        """A location of type METRIC in the process of ``rank``, where counters are
        sampled on their own (Score-P's metric plugins: GPU power, temperature);
        its index (use it as ``("loc", index)``)."""
        return self._w.location(self._procs[rank], name, LOCATION_TYPE["METRIC"])

    def loc(self, where: Where) -> int:
        """The location index of a rank, ``(rank, thread)``, or ``("loc", i)``."""
        if isinstance(where, tuple):
            if where[0] == "loc":
                return int(where[1])
            key = (int(where[0]), int(where[1]))
        else:
            key = (int(where), 0)
        try:
            return self._locs[key]
        except KeyError:
            raise WriterError("no location for rank %d thread %d" % key) from None

    def string(self, text: str) -> int:
        if text not in self._strings:
            self._strings[text] = self._w.string(text)
        return self._strings[text]

    def region(self, name: str, *, role=None, paradigm=None, canonical_name: Optional[str] = None,
               description: Optional[str] = None, source_file: Optional[str] = None,
               begin_line: int = 0, end_line: int = 0, flags: int = 0) -> int:
        """The reference of region ``name``, defined on first use; role and
        paradigm (names or OTF2 values) default to Score-P's for the name."""
        if name in self._regions:  # the first definition wins
            return self._regions[name]
        inferred_paradigm, inferred_role = region_kind(name)
        ref = self._w.region(name, canonical_name, description, source_file,
                             _enum(ROLE, role if role is not None else inferred_role, "region role"),
                             _enum(PARADIGM, paradigm if paradigm is not None else inferred_paradigm,
                                   "paradigm"),
                             flags, begin_line, end_line)
        self._regions[name] = ref
        return ref

    def region_ref(self, name: str) -> int:
        """The reference of a region, defined on first use as for enter()."""
        return self._region(name)

    def _region(self, region: Union[int, str]) -> int:
        if isinstance(region, str):
            return self._regions.get(region) if region in self._regions else self.region(region)
        return int(region)

    def comm(self, name: str, ranks: Sequence[int], parent: Ref = "MPI_COMM_WORLD") -> int:
        """A sub-communicator; rank i of it is world rank ``ranks[i]``."""
        ref = self._w.comm(name, self._comm(parent) if parent is not None else None,
                           [int(r) for r in ranks])
        self._comms[name] = ref
        return ref

    @property
    def self_comm(self) -> int:
        """MPI_COMM_SELF, defined on first use."""
        if self._self_comm is None:
            self._self_comm = self._w.comm_self()
            self._comms["MPI_COMM_SELF"] = self._self_comm
        return self._self_comm

    def _comm(self, comm: Ref) -> int:
        if comm is None:
            if self.world is None:
                raise WriterError("no MPI_COMM_WORLD: pass comm=")
            return self.world
        if isinstance(comm, str):
            if comm == "MPI_COMM_SELF":
                return self.self_comm
            try:
                return self._comms[comm]
            except KeyError:
                raise WriterError("no communicator named %r" % comm) from None
        return int(comm)

    def team(self, members: Iterable[Where], name: Optional[str] = None, parent: Ref = None,
             paradigm="OPENMP") -> int:
        """A thread team (or thread contingent) over these locations."""
        locs = tuple(self.loc(m) for m in members)
        key = locs + (_enum(PARADIGM, paradigm, "paradigm"),)
        if key not in self._teams or name is not None or parent is not None:
            self._teams[key] = self._w.thread_team(
                name or "Thread team %d" % len(self._teams), _enum(PARADIGM, paradigm, "paradigm"),
                self._team(parent) if parent is not None else None, list(locs))
        return self._teams[key]

    def _team(self, team: Ref, where: Optional[Where] = None, paradigm="OPENMP") -> int:
        """A team reference; None: the team of every thread of where's rank."""
        if team is None:
            rank = where[0] if isinstance(where, tuple) else where
            threads = sorted(t for (r, t) in self._locs if r == rank)
            return self.team([(rank, t) for t in threads], paradigm=paradigm)
        if isinstance(team, str):
            return self._comms[team]
        return int(team)

    def group(self, name: str, members: Sequence[int], type="COMM_GROUP", paradigm="MPI",
              flags: int = 0) -> int:
        """A group written as given (e.g. for ``rma_group_sync``)."""
        return self._w.group(name, _enum(GROUP_TYPE, type, "group type"),
                             _enum(PARADIGM, paradigm, "paradigm"), flags, [int(m) for m in members])

    def rma_win(self, name: str, comm: Ref = None) -> int:
        """An RMA window over a communicator (default MPI_COMM_WORLD)."""
        ref = self._w.rma_win(name, self._comm(comm))
        self._wins[name] = ref
        return ref

    def _win(self, win: Ref) -> int:
        if isinstance(win, str):
            return self._wins[win] if win in self._wins else self.rma_win(win)
        return int(win)

    def metric_member(self, name: str, value_type="uint64", *, unit: str = "#",
                      description: str = "", mode="accumulated_start", metric_type="other",
                      base: int = 0, exponent: int = 0) -> int:
        """A metric member; ``value_type``: "uint64", "int64" or "double"."""
        vt = _enum(VALUE_TYPE, value_type, "value type")
        ref = self._w.metric_member(name, description, unit, _enum(METRIC_TYPE, metric_type, "metric type"),
                                    _enum(METRIC_MODE, mode, "metric mode"), vt, base, exponent)
        self._metrics[name] = ref
        self._member_types[ref] = vt
        return ref

    def metric_class(self, members: Sequence[Union[int, str]], occurrence="strict",
                     recorder="cpu") -> int:
        """A metric class of these members (references or names; an unknown
        name is defined as a uint64 member)."""
        refs = tuple(m if isinstance(m, int) else
                     self._metrics[m] if m in self._metrics else self.metric_member(m)
                     for m in members)
        ref = self._w.metric_class(list(refs), _enum(METRIC_OCCURRENCE, occurrence, "occurrence"),
                                   _enum(RECORDER_KIND, recorder, "recorder kind"))
        self._classes[ref] = refs
        return ref

    def _metric(self, metric: Union[int, str]) -> int:
        if isinstance(metric, str):
            if ("class", metric) not in self._classes:
                self._classes[("class", metric)] = (self.metric_class([metric]),)
            return self._classes[("class", metric)][0]
        return int(metric)

    # -- events --------------------------------------------------------------
    def event(self, kind: Union[int, str], where: Where, time: int, **fields) -> None:
        """Any event kind (name as in earlc.KIND_NAMES, or its number), with
        the fields of earl_writer_record (ref, peer, tag, count, bytes, bytes2,
        id, op, sync_level, model, exit_status, values, args)."""
        k = KINDS[kind] if isinstance(kind, str) else int(kind)
        self._w.event(k, self.loc(where), int(time), **fields)

    #: in an attribute column of events(): this event has no such attribute
    ABSENT = np.iinfo(np.int64).min

    def events(self, where: Where, kind, time, *, ref=None, peer=None, tag=None, bytes=None,
               bytes2=None, id=None, op=None, attributes=None) -> None:
        """Many events of one location at once, from arrays of one entry per
        event: ``kind`` (numbers of earlc.KINDS), ``time`` (ticks), and the fields
        of earl_writer_record by name (None: zeros); ``attributes``: {attribute
        ref: int64 array}, ``TraceWriter.ABSENT`` where an event has none.  The
        same checks as event(); far faster than one call per event."""
        n = len(kind)

        def column(values, dtype):
            if values is None:
                return np.zeros(n, dtype=dtype)
            return np.ascontiguousarray(np.asarray(values).astype(dtype, copy=False))

        self._w.events(self.loc(where), column(kind, np.uint8), column(time, np.uint64),
                       column(ref, np.uint32), column(peer, np.uint32), column(tag, np.uint32),
                       column(bytes, np.uint64), column(bytes2, np.uint64), column(id, np.uint64),
                       column(op, np.uint8),
                       [(int(a), column(v, np.int64)) for a, v in (attributes or {}).items()])

    def enter(self, where: Where, time: int, region: Union[int, str]) -> None:
        self._w.enter(self.loc(where), int(time), self._region(region))

    def leave(self, where: Where, time: int, region: Union[int, str], *,
              requested_source: Optional[int] = None, requested_tag: Optional[int] = None) -> None:
        """``requested_source``/``requested_tag``: on the LEAVE of MPI_Probe or
        MPI_Iprobe, what the probe asked for (docs/record.md)."""
        attributes = self._requested(requested_source, requested_tag)
        if attributes:
            self._w.event(KINDS["LEAVE"], self.loc(where), int(time), ref=self._region(region),
                          attributes=attributes)
        else:
            self._w.leave(self.loc(where), int(time), self._region(region))

    def region_span(self, where: Where, t_enter: int, t_leave: int, region: Union[int, str]) -> None:
        """ENTER and LEAVE of a region with nothing inside."""
        self.enter(where, t_enter, region)
        self.leave(where, t_leave, region)

    # MPI point to point
    def send(self, where: Where, time: int, dest: int, tag: int = 0, bytes: int = 0,
             comm: Ref = None) -> None:
        self._w.event(KINDS["MPI_SEND"], self.loc(where), int(time), ref=self._comm(comm),
                      peer=dest, tag=tag, bytes=bytes)

    def recv(self, where: Where, time: int, source: int, tag: int = 0, bytes: int = 0,
             comm: Ref = None, *, requested_source: Optional[int] = None,
             requested_tag: Optional[int] = None) -> None:
        """``requested_source``/``requested_tag``: what the receive asked for
        (a rank in ``comm``, a tag, or ANY (-1) for the wildcards), written as
        the attributes of docs/record.md; omitted: not recorded."""
        self._w.event(KINDS["MPI_RECV"], self.loc(where), int(time), ref=self._comm(comm),
                      peer=source, tag=tag, bytes=bytes,
                      attributes=self._requested(requested_source, requested_tag))

    def isend(self, where: Where, time: int, dest: int, request: int, tag: int = 0,
              bytes: int = 0, comm: Ref = None) -> None:
        self._w.event(KINDS["MPI_ISEND"], self.loc(where), int(time), ref=self._comm(comm),
                      peer=dest, tag=tag, bytes=bytes, id=request)

    def isend_complete(self, where: Where, time: int, request: int, *,
                       request_index: Optional[int] = None) -> None:
        """``request_index``: the request's position in the array of the
        MPI_Waitany/-some or MPI_Testany/-some that completed it."""
        self._w.event(KINDS["MPI_ISEND_COMPLETE"], self.loc(where), int(time), id=request,
                      attributes=self._request_index(request_index))

    def irecv_request(self, where: Where, time: int, request: int, *,
                      requested_source: Optional[int] = None,
                      requested_tag: Optional[int] = None) -> None:
        self._w.event(KINDS["MPI_IRECV_REQUEST"], self.loc(where), int(time), id=request,
                      attributes=self._requested(requested_source, requested_tag))

    def irecv(self, where: Where, time: int, source: int, request: int, tag: int = 0,
              bytes: int = 0, comm: Ref = None, *, request_index: Optional[int] = None) -> None:
        self._w.event(KINDS["MPI_IRECV"], self.loc(where), int(time), ref=self._comm(comm),
                      peer=source, tag=tag, bytes=bytes, id=request,
                      attributes=self._request_index(request_index))

    # -- what Score-P leaves out (docs/record.md) -----------------------------
    def attribute(self, name: str, description: str = "", type: int = TYPE_INT32) -> int:
        """An OTF2 attribute (defined once per name) that events can carry
        through ``event(..., attributes=[(ref, value)])``."""
        if name not in self._attributes:
            self._attributes[name] = self._w.attribute(name, description, type)
        return self._attributes[name]

    def requested_attributes(self) -> Tuple[int, int]:
        """The references of the requested-source and -tag attributes."""
        return (self.attribute(ATTR_REQUESTED_SOURCE, _REQUESTED_SOURCE_TEXT),
                self.attribute(ATTR_REQUESTED_TAG, _REQUESTED_TAG_TEXT))

    def request_index_attribute(self) -> int:
        """The reference of the request-index attribute."""
        return self.attribute(ATTR_REQUEST_INDEX, _REQUEST_INDEX_TEXT)

    def location_property(self, where: Where, name: str, value: str) -> None:
        """A string-valued OTF2 location property."""
        self._w.location_property(self.loc(where), name, value)

    def clock_offset(self, where: Where, time: int, offset: int, stddev: float = 0.0) -> None:
        """An OTF2 clock offset of a location: at ``time`` (its own ticks) the
        global clock read ``time + offset``.  Readers, earlc.open among them,
        correct the location's times by the offsets interpolated linearly
        (a location needs two or more: libotf2 ignores a single one)."""
        self._w.clock_offset(self.loc(where), int(time), int(offset), float(stddev))

    def mark_incomplete(self, where: Where, reason: str) -> None:
        """Say that this location's record ends early (earlc.open counts a
        ``location_incomplete`` warning naming it)."""
        self.location_property(where, PROPERTY_INCOMPLETE, reason)

    def _requested(self, source: Optional[int], tag: Optional[int]):
        out = []
        if source is not None:
            out.append((self.attribute(ATTR_REQUESTED_SOURCE, _REQUESTED_SOURCE_TEXT), source))
        if tag is not None:
            out.append((self.attribute(ATTR_REQUESTED_TAG, _REQUESTED_TAG_TEXT), tag))
        return out or None

    def _request_index(self, index: Optional[int]):
        if index is None:
            return None
        return [(self.request_index_attribute(), index)]

    def request_test(self, where: Where, time: int, request: int) -> None:
        self._w.event(KINDS["MPI_REQUEST_TEST"], self.loc(where), int(time), id=request)

    def request_cancelled(self, where: Where, time: int, request: int) -> None:
        self._w.event(KINDS["MPI_REQUEST_CANCELLED"], self.loc(where), int(time), id=request)

    # MPI collectives
    def collective_begin(self, where: Where, time: int) -> None:
        self._w.event(KINDS["MPI_COLLECTIVE_BEGIN"], self.loc(where), int(time))

    def collective_end(self, where: Where, time: int, op, comm: Ref = None,
                       root: Optional[int] = None, sent: int = 0, received: int = 0) -> None:
        """``op``: an OTF2 collective operation, by name ("ALLREDUCE") or value."""
        self._w.event(KINDS["MPI_COLLECTIVE_END"], self.loc(where), int(time),
                      op=_enum(COLLECTIVE_OP, op, "collective operation"), ref=self._comm(comm),
                      peer=UNDEFINED_UINT32 if root is None else root, bytes=sent,
                      bytes2=received)

    def collective(self, where: Where, t_begin: int, t_end: int, region: str = "MPI_Allreduce",
                   comm: Ref = None, root: Optional[int] = None, sent: int = 0,
                   received: int = 0, op=None) -> None:
        """ENTER region, COLLECTIVE_BEGIN, COLLECTIVE_END, LEAVE region: the
        begin and end records one tick inside the region when there is room."""
        op = collective_op(region) if op is None else op
        inner_b = t_begin + 1 if t_end - t_begin >= 2 else t_begin
        inner_e = t_end - 1 if t_end - t_begin >= 2 else t_end
        self.enter(where, t_begin, region)
        self.collective_begin(where, inner_b)
        self.collective_end(where, inner_e, op, comm=comm, root=root, sent=sent, received=received)
        self.leave(where, t_end, region)

    # program
    def program_begin(self, where: Where, time: int, name: str = "./a.out",
                      args: Sequence[str] = ()) -> None:
        self._w.event(KINDS["PROGRAM_BEGIN"], self.loc(where), int(time), ref=self.string(name),
                      args=[self.string(a) for a in args])

    def program_end(self, where: Where, time: int, exit_status: int = 0) -> None:
        self._w.event(KINDS["PROGRAM_END"], self.loc(where), int(time), exit_status=exit_status)

    # metrics
    def metric(self, where: Where, time: int, metric: Union[int, str], values) -> None:
        """METRIC record: ``metric`` a class reference, or a member name (a
        one-member class is made for it); values converted to the members' types."""
        ref = self._metric(metric)
        if not isinstance(values, (list, tuple)):
            values = [values]
        types = [self._member_types.get(m, TYPE_UINT64) for m in self._classes.get(ref, ())]
        if len(types) == len(values):
            values = [float(v) if t == TYPE_DOUBLE else int(v) for v, t in zip(values, types)]
        self._w.event(KINDS["METRIC"], self.loc(where), int(time), ref=ref, values=list(values))

    # OpenMP (the OMP_* records of OTF2 1.x)
    def omp_fork(self, where: Where, time: int, threads: int) -> None:
        self._w.event(KINDS["OMP_FORK"], self.loc(where), int(time), count=threads)

    def omp_join(self, where: Where, time: int) -> None:
        self._w.event(KINDS["OMP_JOIN"], self.loc(where), int(time))

    def omp_acquire_lock(self, where: Where, time: int, lock: int, order: int) -> None:
        self._w.event(KINDS["OMP_ACQUIRE_LOCK"], self.loc(where), int(time), id=lock, count=order)

    def omp_release_lock(self, where: Where, time: int, lock: int, order: int) -> None:
        self._w.event(KINDS["OMP_RELEASE_LOCK"], self.loc(where), int(time), id=lock, count=order)

    def omp_task_create(self, where: Where, time: int, task: int) -> None:
        self._w.event(KINDS["OMP_TASK_CREATE"], self.loc(where), int(time), id=task)

    def omp_task_switch(self, where: Where, time: int, task: int) -> None:
        self._w.event(KINDS["OMP_TASK_SWITCH"], self.loc(where), int(time), id=task)

    def omp_task_complete(self, where: Where, time: int, task: int) -> None:
        self._w.event(KINDS["OMP_TASK_COMPLETE"], self.loc(where), int(time), id=task)

    # threads (THREAD_* records; model: a paradigm, default OpenMP)
    def fork(self, where: Where, time: int, threads: int, model="OPENMP") -> None:
        self._w.event(KINDS["THREAD_FORK"], self.loc(where), int(time),
                      model=_enum(PARADIGM, model, "paradigm"), count=threads)

    def join(self, where: Where, time: int, model="OPENMP") -> None:
        self._w.event(KINDS["THREAD_JOIN"], self.loc(where), int(time),
                      model=_enum(PARADIGM, model, "paradigm"))

    def team_begin(self, where: Where, time: int, team: Ref = None) -> None:
        """THREAD_TEAM_BEGIN; team None: the team of all threads of where's rank."""
        self._w.event(KINDS["THREAD_TEAM_BEGIN"], self.loc(where), int(time),
                      ref=self._team(team, where))

    def team_end(self, where: Where, time: int, team: Ref = None) -> None:
        self._w.event(KINDS["THREAD_TEAM_END"], self.loc(where), int(time),
                      ref=self._team(team, where))

    def acquire_lock(self, where: Where, time: int, lock: int, order: int, model="OPENMP") -> None:
        self._w.event(KINDS["THREAD_ACQUIRE_LOCK"], self.loc(where), int(time),
                      model=_enum(PARADIGM, model, "paradigm"), id=lock, count=order)

    def release_lock(self, where: Where, time: int, lock: int, order: int, model="OPENMP") -> None:
        self._w.event(KINDS["THREAD_RELEASE_LOCK"], self.loc(where), int(time),
                      model=_enum(PARADIGM, model, "paradigm"), id=lock, count=order)

    def _task(self, kind: str, where, time, creating_thread, generation, team) -> None:
        self._w.event(KINDS[kind], self.loc(where), int(time), ref=self._team(team, where),
                      peer=creating_thread, count=generation)

    def task_create(self, where: Where, time: int, creating_thread: int, generation: int,
                    team: Ref = None) -> None:
        self._task("THREAD_TASK_CREATE", where, time, creating_thread, generation, team)

    def task_switch(self, where: Where, time: int, creating_thread: int, generation: int,
                    team: Ref = None) -> None:
        self._task("THREAD_TASK_SWITCH", where, time, creating_thread, generation, team)

    def task_complete(self, where: Where, time: int, creating_thread: int, generation: int,
                      team: Ref = None) -> None:
        self._task("THREAD_TASK_COMPLETE", where, time, creating_thread, generation, team)

    def _thread(self, kind: str, where, time, contingent, sequence) -> None:
        self._w.event(KINDS[kind], self.loc(where), int(time), ref=int(contingent), id=sequence)

    def thread_create(self, where: Where, time: int, contingent: int, sequence: int) -> None:
        """THREAD_CREATE; ``contingent`` a team made with paradigm="PTHREAD"."""
        self._thread("THREAD_CREATE", where, time, contingent, sequence)

    def thread_begin(self, where: Where, time: int, contingent: int, sequence: int) -> None:
        self._thread("THREAD_BEGIN", where, time, contingent, sequence)

    def thread_wait(self, where: Where, time: int, contingent: int, sequence: int) -> None:
        self._thread("THREAD_WAIT", where, time, contingent, sequence)

    def thread_end(self, where: Where, time: int, contingent: int, sequence: int) -> None:
        self._thread("THREAD_END", where, time, contingent, sequence)

    # RMA (win: a window reference or name; a new name makes a window over MPI_COMM_WORLD)
    def _rma(self, kind: str, where, time, win, **fields) -> None:
        self._w.event(KINDS[kind], self.loc(where), int(time), ref=self._win(win), **fields)

    def rma_win_create(self, where: Where, time: int, win: Ref) -> None:
        self._rma("RMA_WIN_CREATE", where, time, win)

    def rma_win_destroy(self, where: Where, time: int, win: Ref) -> None:
        self._rma("RMA_WIN_DESTROY", where, time, win)

    def rma_collective_begin(self, where: Where, time: int) -> None:
        self._w.event(KINDS["RMA_COLLECTIVE_BEGIN"], self.loc(where), int(time))

    def rma_collective_end(self, where: Where, time: int, win: Ref, op="BARRIER",
                           sync_level="process_memory", root: Optional[int] = None,
                           sent: int = 0, received: int = 0) -> None:
        self._rma("RMA_COLLECTIVE_END", where, time, win,
                  op=_enum(COLLECTIVE_OP, op, "collective operation"),
                  sync_level=_enum(RMA_SYNC_LEVEL, sync_level, "sync level"),
                  peer=UNDEFINED_UINT32 if root is None else root, bytes=sent, bytes2=received)

    def rma_group_sync(self, where: Where, time: int, win: Ref, group: int,
                       sync_level="process_memory") -> None:
        self._rma("RMA_GROUP_SYNC", where, time, win, peer=group,
                  sync_level=_enum(RMA_SYNC_LEVEL, sync_level, "sync level"))

    def rma_request_lock(self, where: Where, time: int, win: Ref, remote: int, lock: int,
                         lock_type="exclusive") -> None:
        self._rma("RMA_REQUEST_LOCK", where, time, win, peer=remote, id=lock,
                  op=_enum(LOCK_TYPE, lock_type, "lock type"))

    def rma_acquire_lock(self, where: Where, time: int, win: Ref, remote: int, lock: int,
                         lock_type="exclusive") -> None:
        self._rma("RMA_ACQUIRE_LOCK", where, time, win, peer=remote, id=lock,
                  op=_enum(LOCK_TYPE, lock_type, "lock type"))

    def rma_try_lock(self, where: Where, time: int, win: Ref, remote: int, lock: int,
                     lock_type="exclusive") -> None:
        self._rma("RMA_TRY_LOCK", where, time, win, peer=remote, id=lock,
                  op=_enum(LOCK_TYPE, lock_type, "lock type"))

    def rma_release_lock(self, where: Where, time: int, win: Ref, remote: int, lock: int) -> None:
        self._rma("RMA_RELEASE_LOCK", where, time, win, peer=remote, id=lock)

    def rma_sync(self, where: Where, time: int, win: Ref, remote: int, sync_type="memory") -> None:
        self._rma("RMA_SYNC", where, time, win, peer=remote,
                  op=_enum(RMA_SYNC_TYPE, sync_type, "sync type"))

    def rma_wait_change(self, where: Where, time: int, win: Ref) -> None:
        self._rma("RMA_WAIT_CHANGE", where, time, win)

    def rma_put(self, where: Where, time: int, win: Ref, remote: int, bytes: int,
                matching: int) -> None:
        self._rma("RMA_PUT", where, time, win, peer=remote, bytes=bytes, id=matching)

    def rma_get(self, where: Where, time: int, win: Ref, remote: int, bytes: int,
                matching: int) -> None:
        self._rma("RMA_GET", where, time, win, peer=remote, bytes=bytes, id=matching)

    def rma_atomic(self, where: Where, time: int, win: Ref, remote: int, type="fetch_and_add",
                   sent: int = 0, received: int = 0, matching: int = 0) -> None:
        self._rma("RMA_ATOMIC", where, time, win, peer=remote,
                  op=_enum(RMA_ATOMIC_TYPE, type, "atomic type"), bytes=sent, bytes2=received,
                  id=matching)

    def rma_op_complete_blocking(self, where: Where, time: int, win: Ref, matching: int) -> None:
        self._rma("RMA_OP_COMPLETE_BLOCKING", where, time, win, id=matching)

    def rma_op_complete_non_blocking(self, where: Where, time: int, win: Ref,
                                     matching: int) -> None:
        self._rma("RMA_OP_COMPLETE_NON_BLOCKING", where, time, win, id=matching)

    def rma_op_test(self, where: Where, time: int, win: Ref, matching: int) -> None:
        self._rma("RMA_OP_TEST", where, time, win, id=matching)

    def rma_op_complete_remote(self, where: Where, time: int, win: Ref, matching: int) -> None:
        self._rma("RMA_OP_COMPLETE_REMOTE", where, time, win, id=matching)
