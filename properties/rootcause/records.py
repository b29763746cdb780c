"""The records the root-cause package hands to the C core (earlc._core.rc_*) and
gets back: one dataclass per struct of csrc/include/earl_rootcause.h, with the
struct's field names (the glue reads them by name, field by field).  Array fields
are converted on construction to the C-contiguous dtype the struct declares
(int64 or float64); the counts of the C structs are the arrays' lengths."""
from dataclasses import dataclass, field, fields
from typing import List, Optional

import numpy as np

from earlc import _core


def _int64():
    return field(metadata={"dtype": np.int64})


def _float64():
    return field(metadata={"dtype": np.float64})


class _Record:
    """Converts the array fields declared _int64() or _float64() on construction
    (a view, not a copy, where the array fits already)."""

    def __post_init__(self):
        for f in fields(self):
            dtype = f.metadata.get("dtype")
            value = getattr(self, f.name)
            if dtype is not None and value is not None:
                setattr(self, f.name, np.ascontiguousarray(value, dtype=dtype))


def as_i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def as_f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _view(a, dtype) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return np.ascontiguousarray(a, dtype=dtype)
    return np.frombuffer(a, dtype)


class CallPathMap:
    """earl_rc_map: per query, (cnode, value) entries ascending by cnode, in CSR
    form: the entries of query q are [offset[q], offset[q + 1])."""

    def __init__(self, offset, cnode, value):
        """From numpy arrays, or from the C core's buffers (viewed, not copied)."""
        self.offset = _view(offset, np.int64)
        self.cnode = _view(cnode, np.int64)
        self.value = _view(value, np.float64)

    @classmethod
    def from_core(cls, result: dict) -> "CallPathMap":
        return cls(result["offset"], result["cnode"], result["value"])

    @property
    def query(self) -> np.ndarray:
        """The query of each entry."""
        return np.repeat(np.arange(len(self.offset) - 1, dtype=np.int64), np.diff(self.offset))

    def columns(self):
        """(query, cnode, value) of every entry."""
        return self.query, self.cnode, self.value

    def followed_by(self, other: "CallPathMap") -> "CallPathMap":
        """One map with this map's queries, then other's."""
        return CallPathMap(np.concatenate((self.offset, self.offset[-1] + other.offset[1:])),
                           np.concatenate((self.cnode, other.cnode)),
                           np.concatenate((self.value, other.value)))


# ---- time chunks -------------------------------------------------------------

@dataclass
class EventColumns(_Record):
    """earl_rc_event_columns: what the chunks of the events are built from."""
    n_locations: int
    location: np.ndarray  # int32 per event
    kind: np.ndarray      # uint8 per event
    time: np.ndarray      # uint64 per event
    cnode: np.ndarray     # int32 per event
    parent: np.ndarray    # int32 per cnode
    role: bytes           # 256 earl_rc_chunk_role values, by kind
    program_cnode: int


@dataclass
class EventChunks:
    """earl_rc_event_chunks: the chunks of the events, location by location (the
    C core's columns, viewed): location l's are [offset[l], end[l]) (end None:
    up to offset[l + 1])."""
    offset: np.ndarray
    end: Optional[np.ndarray]
    slot: np.ndarray
    cnode: np.ndarray
    ticks: np.ndarray
    far_chunk: np.ndarray
    far_ticks: np.ndarray

    @classmethod
    def build(cls, columns: EventColumns, threads: int = 1) -> "EventChunks":
        return cls(**_core.rc_event_chunks(columns, threads=threads))


@dataclass
class ChunkTable(_Record):
    """earl_rc_chunk_table: chunks by key = 2 * (location * stride + event) +
    (0: before the event's point, 1: after it), ascending."""
    key: np.ndarray = _int64()
    cnode: np.ndarray = _int64()
    ticks: np.ndarray = _int64()


@dataclass
class TimeChunks:
    """earl_rc_chunks: the time chunks of every location."""
    stride: int                    # events + 1
    n_cnodes: int
    events: Optional[EventChunks]  # None: the table only
    table: ChunkTable


@dataclass
class Spans(_Record):
    """earl_rc_spans: per query, a location's time after event start's point (-1:
    from its start) up to event end's point."""
    location: np.ndarray = _int64()
    start: np.ndarray = _int64()
    end: np.ndarray = _int64()


@dataclass
class PointsByLocation(_Record):
    """earl_rc_points: the synchronisation points ascending by key = location *
    stride + event, with their rows in the points' table."""
    key: np.ndarray = _int64()
    row: np.ndarray = _int64()
    cnode: np.ndarray = _int64()
    wait: np.ndarray = _float64()
    cut: np.ndarray = _float64()


@dataclass
class ExcessPairs(_Record):
    """earl_rc_excess_pairs: per pair, a late query against an early one,
    restricted to the call paths of a within query (within None: none)."""
    late: CallPathMap
    late_query: np.ndarray = _int64()
    early: CallPathMap
    early_query: np.ndarray = _int64()
    within: Optional[CallPathMap] = None
    within_query: Optional[np.ndarray] = field(default=None, metadata={"dtype": np.int64})


# ---- meetings ------------------------------------------------------------------

@dataclass
class PairPoints(_Record):
    """earl_rc_pair_points: the points two locations share one by one (pair_key
    ascending) and per group point set its members and its points (CSR)."""
    stride: int
    n_locations: int
    pair_key: np.ndarray = _int64()
    member_offset: np.ndarray = _int64()
    member_location: np.ndarray = _int64()
    key_offset: np.ndarray = _int64()
    group_key: np.ndarray = _int64()


@dataclass
class MeetingQueries(_Record):
    """earl_rc_meeting_queries: where `location` last met `partner` before event
    `before`."""
    location: np.ndarray = _int64()
    partner: np.ndarray = _int64()
    before: np.ndarray = _int64()


@dataclass
class Meetings(_Record):
    """earl_rc_meetings: who meets whom at the points (see earl_rootcause.h)."""
    stride: int
    n_locations: int
    point_key: np.ndarray = _int64()
    point_set: np.ndarray = _int64()
    partner_key: np.ndarray = _int64()
    partner_location: np.ndarray = _int64()
    set_offset: np.ndarray = _int64()
    set_location: np.ndarray = _int64()


@dataclass
class GroupQueries(_Record):
    """earl_rc_group_queries: per collective wait state instance, its delayer's
    location and point, and the set of its communicator's members."""
    delayer_location: np.ndarray = _int64()
    delayer_event: np.ndarray = _int64()
    member_set: np.ndarray = _int64()


@dataclass
class PathGraph(_Record):
    """earl_rc_path_graph: where the critical path's walk goes on from each wait
    state and OpenMP point."""
    stride: int
    location: np.ndarray  # int32 per event
    ends_at_start: bool   # a location without an init event: the path ends at its start
    init_event: np.ndarray = _int64()
    wait_key: np.ndarray = _int64()
    wait_partner: np.ndarray = _int64()
    omp_key: np.ndarray = _int64()
    omp_next_offset: np.ndarray = _int64()
    omp_next_event: np.ndarray = _int64()


# ---- the long-term replay -------------------------------------------------------

@dataclass
class WaitBatch(_Record):
    """earl_rc_waits: point-to-point wait states of one source."""
    source: int
    event: np.ndarray = _int64()
    row: np.ndarray = _int64()
    delayer_location: np.ndarray = _int64()
    delayer_event: np.ndarray = _int64()
    scale: np.ndarray = _float64()
    denominator: np.ndarray = _float64()
    delays: CallPathMap
    between_offset: np.ndarray = _int64()
    between_row: np.ndarray = _int64()


@dataclass
class CollectiveInstances(_Record):
    """earl_rc_collectives: collective wait state instances (MPI collectives or
    OpenMP barriers), each with its kind (a source), delayer (location and point)
    and members (CSR), the delayer's waiting points in between, and per member
    what the replay needs of it."""
    kind: np.ndarray = _int64()
    delayer_location: np.ndarray = _int64()
    delayer_event: np.ndarray = _int64()
    member_offset: np.ndarray = _int64()
    between_offset: np.ndarray = _int64()
    between_row: np.ndarray = _int64()
    member_event: np.ndarray = _int64()
    member_row: np.ndarray = _int64()
    member_wait: np.ndarray = _float64()
    member_delay_sum: np.ndarray = _float64()
    member_prop: np.ndarray = _float64()
    member_met: np.ndarray = _int64()
    member_delay_query: np.ndarray = _int64()
    delays: CallPathMap


@dataclass
class KnownCosts(_Record):
    """earl_rc_costs: costs of one source known before the replay."""
    source: int
    row: np.ndarray = _int64()
    value: np.ndarray = _float64()


@dataclass
class Replay(_Record):
    """What earl_rc_replay is given: the points (events, locations, waiting
    times), the inputs of each collective kind per source (n_sources**2 bytes of
    EARL_RC_INPUT_* bits, [kind * n_sources + source]), and the batches."""
    n_sources: int
    inputs: bytes
    point_event: np.ndarray = _int64()
    point_location: np.ndarray = _int64()
    point_wait: np.ndarray = _float64()
    waits: List[WaitBatch] = field(default_factory=list)
    collectives: List[CollectiveInstances] = field(default_factory=list)
    costs: List[KnownCosts] = field(default_factory=list)
