"""The events of a trace as numpy columns, and single events as objects.

`trace.events` holds the core columns, one entry per event in the total order
(time, location, kind, payload), as read-only numpy arrays over the C store.
`payload[i]` is what event i refers to: an ENTER's or LEAVE's region ref, the
row of any other event in its family's side table (0xFFFFFFFF: none).  The
side tables, one per family, each row naming its event:

    events.messages     MPI point-to-point and request records
    events.collectives  MPI_COLLECTIVE_END records
    events.threading    OpenMP and thread records
    events.programs     PROGRAM_BEGIN / PROGRAM_END
    events.metrics      METRIC records (values in events.metric_values)
    events.rma          RMA records

`events.region` (region ref of ENTER/LEAVE, 0xFFFFFFFF for other kinds) and
`events.ref` (side-table row, -1 for ENTER/LEAVE and kinds without a table) read
the payload by kind; each is computed once, on first access, and cached (4 bytes
per event).  `events.region_of(ids)` and `events.ref_of(ids)` give the same
values for chosen events without building them, as earlc's own code does.
Likewise `events.messages.partner` (int64, -1 for none) is made on first access
from the store's 32-bit event ids, and `events.messages.partner_of(rows)` gives
chosen rows without it.  The event-aligned convenience columns `peer`, `tag`,
`communicator` and `bytes` are derived from the message and collective tables on
first use (that copy is the only one; it is cached).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import weakref

import numpy as np

from . import _core, otf2names

KIND_NAMES = _core.KIND_NAMES
KIND_FAMILIES = _core.KIND_FAMILIES
KINDS = {name: i for i, name in enumerate(KIND_NAMES)}

FAMILY_NONE, FAMILY_MSG, FAMILY_COLL, FAMILY_SYNC, FAMILY_PROGRAM, FAMILY_METRIC, FAMILY_RMA = range(7)

_DTYPES = {"Q": np.uint64, "q": np.int64, "I": np.uint32, "i": np.int32, "B": np.uint8}

#: what a receive asked for, when the trace does not say (as in the C core)
REQUESTED_UNKNOWN = -2

#: "no event" in a column the store keeps as 32-bit event ids (C: EARL_EID32_NONE)
EID32_NONE = np.uint32(0xFFFFFFFF)
#: the format of such a column in _TABLES: the store's uint32 ids, shown as int64
#: event ids with -1 for none
EVENT_IDS32 = "event ids in 32 bits"

#: region ref of an event that names no region
NO_REGION = np.uint32(otf2names.UNDEFINED_UINT32)
#: the payload of ENTER (0) and LEAVE (1) is a region, that of every later kind a
#: row (the numbering is stable, earl.h)
_LAST_REGION_KIND = KINDS["LEAVE"]

#: columns of each side table: (attribute, C column, struct format or EVENT_IDS32),
#: and for the columns the C core stores only when the trace has them, the value
#: of every row without them
_TABLES = {
    "messages": ("msg", [("event", "I"), ("peer", "i"), ("peer_rank", "I"), ("comm", "I"),
                         ("tag", "I"), ("bytes", "Q"), ("request", "Q"),
                         ("partner", EVENT_IDS32),
                         ("requested_source", "i", REQUESTED_UNKNOWN),
                         ("requested_tag", "i", REQUESTED_UNKNOWN)]),
    "collectives": ("coll", [("event", "I"), ("op", "B"), ("comm", "I"), ("root_rank", "I"),
                             ("root", "i"), ("sent", "Q"), ("received", "Q")]),
    "threading": ("sync", [("event", "I"), ("model", "B"), ("comm", "I"), ("id", "Q"),
                           ("count", "I")]),
    "programs": ("program", [("event", "I"), ("name", "I"), ("exit_status", "q")]),
    "metrics": ("metric", [("event", "I"), ("metric", "I"), ("first", "I"), ("n", "B")]),
    "rma": ("rma", [("event", "I"), ("win", "I"), ("remote", "I"), ("bytes", "Q"),
                    ("matching", "Q")]),
}


def column(core_trace, name: str, fmt: str) -> np.ndarray:
    """A read-only numpy view of one C column (no copy)."""
    col = core_trace.column(name)
    dtype = _DTYPES[fmt]
    if col.length == 0:
        return np.empty(0, dtype=dtype)
    arr = np.frombuffer(col, dtype=dtype)
    return arr


def event_ids64(ids32) -> np.ndarray:
    """32-bit event ids (uint32, EID32_NONE for none) as int64 event ids, -1 for
    none: a new array (0-d for a scalar)."""
    wide = np.array(ids32, dtype=np.int64)
    wide[ids32 == EID32_NONE] = -1
    return wide


class Table:
    """A side table: numpy columns of equal length, one row per event of a family."""

    def __init__(self, core_trace, prefix: str, columns):
        self._names = [c[0] for c in columns]
        self._absent = {}  # optional columns the store lacks: name -> (fill, dtype)
        self._ids32 = {}   # columns of 32-bit event ids: name -> the store's column
        for n, fmt, *fill in columns:
            if fmt == EVENT_IDS32:
                self._ids32[n] = column(core_trace, "%s.%s" % (prefix, n), "I")
                continue
            col = column(core_trace, "%s.%s" % (prefix, n), fmt)
            if fill and len(col) == 0:
                self._absent[n] = (fill[0], _DTYPES[fmt])
            else:
                setattr(self, n, col)

    def __getattr__(self, name: str):
        # made on first use only, then kept (most analyses never ask): an
        # optional column the trace does not have, every row holding its fill
        # value; the int64 event ids of a column the store keeps in 32 bits
        own = self.__dict__
        if name in own.get("_ids32", {}):
            arr = event_ids64(own["_ids32"][name])
        elif name in own.get("_absent", {}):
            fill, dtype = own["_absent"][name]
            arr = np.full(len(self), fill, dtype=dtype)
        else:
            raise AttributeError(name)
        arr.flags.writeable = False
        setattr(self, name, arr)
        return arr

    def _event_ids_of(self, name: str, rows):
        """Column `name` of 32-bit event ids at rows, as int64 (-1 for none), without
        making the whole int64 column."""
        return event_ids64(self._ids32[name][rows])[()]  # one row: a scalar

    def __len__(self) -> int:
        return len(getattr(self, self._names[0]))

    @property
    def columns(self):
        return list(self._names)

    def to_dataframe(self):
        """The columns as a DataFrame (a copy).  A reference or number the record
        does not have (OTF2's undefined 0xFFFFFFFF in a 32-bit column: a collective
        without a root, a thread record without a team) shows as -1 in an int64
        column, as the event ids do, never as 4294967295."""
        import pandas as pd

        return pd.DataFrame({n: _missing_as_minus_one(self._whole(n)) for n in self._names})

    def _whole(self, name: str) -> np.ndarray:
        """Every row of column `name`, for a copy: the int64 ids of a column of 32-bit
        event ids are made for it and not kept, unless they are already."""
        if name in self._ids32 and name not in self.__dict__:
            return self._event_ids_of(name, slice(None))
        return getattr(self, name)

    def __repr__(self) -> str:
        return "Table(%d rows: %s)" % (len(self), ", ".join(self._names))


def _missing_as_minus_one(col: np.ndarray) -> np.ndarray:
    """A uint32 column with OTF2's undefined value as int64 with -1 (other columns
    as they are)."""
    if col.dtype != np.uint32:
        return col
    out = col.astype(np.int64)
    out[col == np.uint32(otf2names.UNDEFINED_UINT32)] = -1
    return out


class MessageTable(Table):
    """The message table (MPI point-to-point and request records).  The store keeps
    `partner`, the other half of a non-blocking request, as 32-bit event ids: the
    int64 `partner` column (-1 for none) is made on first access, then kept (8 bytes
    per row); `partner_of(rows)` reads chosen rows without it."""

    def partner_of(self, rows):
        """partner of the message rows `rows`, as `partner[rows]` gives it (int64
        event ids, -1 for none; rows index as numpy indexes: arrays, masks, one row),
        without building `partner`."""
        return self._event_ids_of("partner", rows)


#: the side tables with methods of their own
_TABLE_CLASSES = {"messages": MessageTable}


class Events:
    """All events in the total order (timestamp, location, position)."""

    def __init__(self, core_trace, trace):
        # a weak reference: Trace owns Events, and a cycle would keep the C store
        # (gigabytes on large traces) alive until the garbage collector runs
        self._trace_ref = weakref.ref(trace)
        self.time = column(core_trace, "time", "Q")          #: ticks
        self.location = column(core_trace, "location", "i")  #: dense location index
        self.kind = column(core_trace, "kind", "B")          #: see earlc.KIND_NAMES
        #: region ref (ENTER, LEAVE) or side-table row (other kinds), 0xFFFFFFFF: none
        self.payload = column(core_trace, "payload", "I")
        self.loc_start = column(core_trace, "loc_start", "Q")
        self.loc_events = column(core_trace, "loc_events", "I")
        for attr, (prefix, cols) in _TABLES.items():
            setattr(self, attr, _TABLE_CLASSES.get(attr, Table)(core_trace, prefix, cols))
        self.metric_values = column(core_trace, "metric.values", "Q")  #: raw 64-bit values
        self.metric_value_types = column(core_trace, "metric.value_types", "B")
        self._derived: Dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.time)

    def of_location(self, location: int) -> np.ndarray:
        """Event ids of one location (dense index), in its recorded order."""
        return self.loc_events[int(self.loc_start[location]):int(self.loc_start[location + 1])]

    def region_of(self, ids):
        """Region ref of the events ids, as `region[ids]` gives it (uint32: an ENTER's
        or LEAVE's region, 0xFFFFFFFF for other kinds; ids index as numpy indexes),
        without building `region`."""
        by_kind = np.where(self.kind[ids] <= _LAST_REGION_KIND, self.payload[ids], NO_REGION)
        return by_kind[()]  # one id: a scalar, as region[i]

    def ref_of(self, ids):
        """Side-table row of the events ids, as `ref[ids]` gives it (int32, -1 for
        ENTER, LEAVE and kinds without a table), without building `ref`."""
        rows = np.asarray(self.payload[ids]).view(np.int32)  # 0xFFFFFFFF: -1
        by_kind = np.where(self.kind[ids] <= _LAST_REGION_KIND, np.int32(-1), rows)
        return by_kind[()]

    @property
    def region(self) -> np.ndarray:
        """Region ref of every event (uint32): an ENTER's or LEAVE's region,
        0xFFFFFFFF for other kinds.  Computed from `payload` on first access, then
        kept (4 bytes per event)."""
        return self._derive("region")

    @property
    def ref(self) -> np.ndarray:
        """Row of every event in its family's side table (int32), -1 for ENTER,
        LEAVE and kinds without a table.  Computed from `payload` on first access,
        then kept (4 bytes per event)."""
        return self._derive("ref")

    def _aligned(self, name: str, table: Table, col: str, fill, dtype) -> np.ndarray:
        out = np.full(len(self), fill, dtype=dtype)
        out[table.event] = getattr(table, col)
        return out

    def _derive(self, name: str) -> np.ndarray:
        if name not in self._derived:
            m, c = self.messages, self.collectives
            if name == "region":
                arr = self.region_of(slice(None))
            elif name == "ref":
                arr = self.ref_of(slice(None))
            elif name == "peer":
                arr = self._aligned(name, m, "peer", -1, np.int32)
            elif name == "tag":
                arr = self._aligned(name, m, "tag", -1, np.int64)
            elif name == "communicator":
                arr = self._aligned(name, m, "comm", -1, np.int64)
                arr[c.event] = c.comm
                arr[arr == otf2names.UNDEFINED_UINT32] = -1
            else:  # bytes: message size; for collectives the bytes sent
                arr = self._aligned(name, m, "bytes", 0, np.uint64)
                arr[c.event] = c.sent
            arr.flags.writeable = False
            self._derived[name] = arr
        return self._derived[name]

    @property
    def peer(self) -> np.ndarray:
        """Partner location of MPI point-to-point events, -1 elsewhere."""
        return self._derive("peer")

    @property
    def tag(self) -> np.ndarray:
        """Message tag of point-to-point events, -1 elsewhere."""
        return self._derive("tag")

    @property
    def communicator(self) -> np.ndarray:
        """Communicator ref of MPI events, -1 elsewhere."""
        return self._derive("communicator")

    @property
    def bytes(self) -> np.ndarray:
        """Message bytes (point-to-point) or bytes sent (collectives), 0 elsewhere."""
        return self._derive("bytes")

    def to_dataframe(self):
        """One row per event with its time (`time`: seconds from the trace's start,
        `time_ticks`: its timestamp), readable kind and region names (a copy)."""
        import pandas as pd

        from .display import time_columns

        t = self._trace_ref()
        kinds = pd.Categorical.from_codes(self.kind, categories=list(KIND_NAMES))
        names = t._region_name_array()  # by ref, with None past the last slot
        region = names[np.minimum(self.region_of(slice(None)), len(names) - 1)]
        return pd.DataFrame({
            **time_columns(t, self.time), "location": self.location, "kind": kinds,
            "region": region,
            "peer": self.peer, "tag": self.tag, "communicator": self.communicator,
            "bytes": self.bytes,
        })


@dataclass(frozen=True)
class Event:
    """One event with readable fields; `payload` holds its family's columns."""

    id: int
    time: int
    location: Any
    kind: str
    region: Any
    payload: Dict[str, Any]
    _trace: Any = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str):
        payload = object.__getattribute__(self, "payload")
        if name in payload:
            return payload[name]
        if name in _POINTERS and self._trace is not None:  # EARL pointers: earlc.states
            return self._trace.states.pointer(name, self.id)
        raise AttributeError("%s event has no attribute %r" % (self.kind, name))

    def __repr__(self) -> str:
        parts = ["#%d" % self.id, self.kind, "t=%d" % self.time, "on %s" % self.location]
        if self.region is not None:
            parts.append(repr(self.region.name))
        parts += ["%s=%s" % (k, v) for k, v in self.payload.items() if v is not None]
        return "Event(%s)" % " ".join(parts)


def make_event(trace, i: int) -> Event:
    ev = trace.events
    n = len(ev)
    if not -n <= i < n:
        raise IndexError("event %d out of range (trace has %d events)" % (i, n))
    i %= n
    kind = int(ev.kind[i])
    region_ref = int(ev.region_of(i))
    region = trace._region(region_ref) if region_ref != otf2names.UNDEFINED_UINT32 else None
    payload: Dict[str, Any] = {}
    row = int(ev.ref_of(i))
    family = KIND_FAMILIES[kind]
    if row >= 0:
        if family == FAMILY_MSG:
            m = ev.messages
            peer = int(m.peer[row])
            comm = int(m.comm[row])
            partner = int(m.partner_of(row))
            payload.update(
                peer=trace.locations[peer] if peer >= 0 else None,
                peer_rank=_maybe(int(m.peer_rank[row])),
                communicator=trace.communicators.get(comm) if comm != otf2names.UNDEFINED_UINT32 else None,
                tag=int(m.tag[row]), bytes=int(m.bytes[row]), request=int(m.request[row]),
                partner=partner if partner >= 0 else None,
                requested_source=int(m.requested_source[row]),
                requested_tag=int(m.requested_tag[row]))
        elif family == FAMILY_COLL:
            c = ev.collectives
            root = int(c.root[row])
            payload.update(
                operation=otf2names.name(otf2names.COLLECTIVE_OPS, int(c.op[row])),
                communicator=trace.communicators.get(int(c.comm[row])),
                root=trace.locations[root] if root >= 0 else None,
                root_rank=_maybe(int(c.root_rank[row])),
                bytes_sent=int(c.sent[row]), bytes_received=int(c.received[row]))
        elif family == FAMILY_SYNC:
            s = ev.threading
            payload.update(model=otf2names.name(otf2names.PARADIGMS, int(s.model[row])),
                           team=_maybe(int(s.comm[row])), id=int(s.id[row]),
                           count=int(s.count[row]))
        elif family == FAMILY_PROGRAM:
            p = ev.programs
            payload.update(name=trace._string(int(p.name[row])),
                           exit_status=int(p.exit_status[row]))
        elif family == FAMILY_METRIC:
            m = ev.metrics
            first, cnt = int(m.first[row]), int(m.n[row])
            payload.update(metric=int(m.metric[row]),
                           values=trace._metric_values(first, cnt))
        elif family == FAMILY_RMA:
            r = ev.rma
            payload.update(window=_maybe(int(r.win[row])), remote=_maybe(int(r.remote[row])),
                           bytes=int(r.bytes[row]), matching=int(r.matching[row]))
    return Event(i, int(ev.time[i]), trace.locations[int(ev.location[i])], KIND_NAMES[kind],
                 region, payload, trace)


_POINTERS = ("enterptr", "leaveptr", "sendptr", "recvptr", "lockptr", "forkptr")


def _maybe(v: int) -> Optional[int]:
    return None if v == otf2names.UNDEFINED_UINT32 else v
