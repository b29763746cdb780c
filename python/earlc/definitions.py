"""Readable objects for an archive's definitions: regions, locations, processes,
system tree nodes, groups and communicators.

The C core keeps definitions in arrays indexed by their OTF2 reference; here each
becomes a small frozen dataclass, and each collection a `DefinitionList` with
`to_dataframe()`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Generic, Iterator, List, Optional, Sequence, TypeVar

from . import otf2names

T = TypeVar("T")


class DefinitionList(Sequence[T], Generic[T]):
    """The defined items of one kind, in reference order.

    Indexing by position gives the n-th defined item; `get(ref)` finds an item by
    its OTF2 reference (positions and references agree in archives without holes).
    """

    def __init__(self, items: List[T], key: str = "id"):
        self._items = items
        self._by_key = {getattr(it, key): it for it in items}

    def __getitem__(self, i):
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __repr__(self) -> str:
        return "DefinitionList(%d items)" % len(self._items)

    def get(self, ref: int) -> Optional[T]:
        """The item with OTF2 reference `ref`, or None."""
        return self._by_key.get(ref)

    def by_name(self, name: str) -> List[T]:
        """All items named `name`."""
        return [it for it in self._items if getattr(it, "name", None) == name]

    def to_dataframe(self):
        """One row per item; fields that are definitions show as their name."""
        import pandas as pd

        if not self._items:
            return pd.DataFrame()
        names = [f.name for f in dataclasses.fields(self._items[0]) if f.repr]
        rows = []
        for it in self._items:
            row = []
            for n in names:
                v = getattr(it, n)
                row.append(getattr(v, "name", v) if dataclasses.is_dataclass(v) else v)
            rows.append(row)
        return pd.DataFrame(rows, columns=names)


@dataclass(frozen=True)
class SystemNode:
    id: int
    name: str
    class_name: str
    parent: Optional[int]


@dataclass(frozen=True)
class Process:
    """An OTF2 location group: a process (or accelerator) with its MPI rank."""

    id: int
    name: str
    type: str
    rank: int  # MPI rank in MPI_COMM_WORLD, -1 if none
    system_node: Optional[int]


@dataclass(frozen=True)
class Location:
    """A thread, accelerator stream or metric location: a timeline of events.

    `index` is earlc's dense location number used in `trace.events.location`.
    """

    index: int
    id: int  # OTF2 location reference
    name: str
    type: str
    process: Process
    rank: int
    thread: int  # index among the CPU threads of its process, -1 for others
    declared_events: int
    events: int
    other_records: int = field(default=0)
    # why its record ends early (docs/record.md), None for a whole record
    incomplete: Optional[str] = field(default=None)
    # its string-valued OTF2 location properties, name: value
    properties: dict = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return "%s (rank %d)" % (self.name, self.rank) if self.rank >= 0 else self.name


@dataclass(frozen=True)
class Region:
    id: int
    name: str
    canonical_name: str
    description: str
    role: str
    paradigm: str
    source_file: str
    begin_line: int
    end_line: int
    flags: int

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Group:
    id: int
    name: str
    type: str
    paradigm: str
    members: tuple


@dataclass(frozen=True)
class Communicator:
    """A communicator (or thread team) with the location of each of its ranks."""

    id: int
    name: str
    paradigm: str
    size: int
    parent: Optional[int]
    group: Optional[int]
    is_self: bool
    is_inter: bool
    locations: tuple = field(repr=False)  # dense location index of rank r, -1 unresolved

    def __str__(self) -> str:
        return self.name or "comm %d" % self.id

    def location_of(self, rank: int) -> int:
        """Dense location index of `rank` in this communicator (-1 if unknown)."""
        if self.is_self:
            raise ValueError("MPI_COMM_SELF-like communicator: rank 0 is the caller")
        return self.locations[rank] if 0 <= rank < len(self.locations) else -1


def _ref(v: int) -> Optional[int]:
    return None if v == otf2names.UNDEFINED_UINT32 else v


class Definitions:
    """All definitions of a trace, built once from the C core's tuples."""

    def __init__(self, raw: dict):
        s = raw["strings"]

        def text(ref: int) -> str:
            return s[ref] if 0 <= ref < len(s) else ""

        paradigm_names = raw["paradigm_names"]

        def paradigm(p: int) -> str:
            return otf2names.name(otf2names.PARADIGMS, p)

        self.strings = s
        self.path = raw["path"]
        self.creator = raw["creator"]
        self.version = "%d.%d.%d" % tuple(raw["version"])
        self.n_defs_read = raw["n_defs_read"]
        self.clock_resolution, self.clock_offset, self.clock_length, self.clock_realtime = raw["clock"]
        self.paradigm_names = {i: text(r) for i, r in enumerate(paradigm_names) if r}

        self.system_nodes = DefinitionList([
            SystemNode(i, text(n), text(c), _ref(p))
            for i, (d, n, c, p) in enumerate(raw["system_nodes"]) if d])
        self.processes = DefinitionList([
            Process(i, text(n), otf2names.name(otf2names.LOCATION_GROUP_TYPES, t), rank, _ref(sp))
            for i, (d, n, t, sp, cr, rank) in enumerate(raw["location_groups"]) if d])
        properties: dict = {}
        for loc, name, value in raw["location_properties"]:
            properties.setdefault(loc, {})[text(name)] = text(value)
        locations = []
        for index, (lid, n, t, g, declared, events, other, thread, incomplete,
                    reason) in enumerate(raw["locations"]):
            proc = self.processes.get(g) or Process(g, "", "UNKNOWN", -1, None)
            locations.append(Location(index, lid, text(n), otf2names.name(otf2names.LOCATION_TYPES, t),
                                      proc, proc.rank, thread, declared, events, other,
                                      (text(reason) or "no reason given") if incomplete else None,
                                      properties.get(index, {})))
        self.locations = DefinitionList(locations, key="index")
        self.regions = DefinitionList([
            Region(i, text(n), text(cn), text(desc), otf2names.name(otf2names.REGION_ROLES, role),
                   paradigm(par), text(f), bl, el, flags)
            for i, (d, n, cn, desc, role, par, flags, f, bl, el) in enumerate(raw["regions"]) if d])
        self.groups = DefinitionList([
            Group(i, text(n), otf2names.name(otf2names.GROUP_TYPES, t), paradigm(p), tuple(m))
            for i, (d, n, t, p, flags, m) in enumerate(raw["groups"]) if d])
        self.communicators = DefinitionList([
            Communicator(i, text(n), paradigm(p), 1 if is_self else len(locs), _ref(parent),
                         _ref(g), bool(is_self), bool(is_inter), tuple(locs))
            for i, (d, n, g, parent, flags, p, is_inter, is_self, locs) in enumerate(raw["comms"])
            if d])
        self.metric_members = raw["metric_members"]
        self.metric_classes = raw["metric_classes"]
