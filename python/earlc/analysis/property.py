"""Performance properties: the nodes of the metric tree and the compound events
that prove them.

A property declares, beside its code, where it sits in the metric tree
(`parent`), its `name`, `title`, `unit`, `description` and `diagnosis`, as
Scalasca's pattern specifications do; docs/properties.md is generated from these
declarations (`python -m earlc.analysis.docs`).

Detection follows EXPERT: a property may *subscribe* to the compound events that
another property *publishes*, so that what is computed once (the matching of a
receive with its send, the instances of a collective) is shared.  `detect`
receives the subscribed instances (or None for a root property) and returns its
own `Instances`: one row per occurrence, with the event whose call path and
location the severity is charged to (`where`), the severity in integer ticks, and
any further columns its subscribers need.  Those instances are published under
the property's name.

User plugins subclass `Property` the same way the built-ins in earlc.properties
do, and are passed to `earlc.analyze(trace, properties=[...])`.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

UNITS = ("sec", "occ", "bytes")


class Columns(MutableMapping):
    """The further columns of a selection of Instances: the parent's columns and
    the selected rows, each column gathered on first access.  Properties refine
    what they subscribe to step by step (select, then select again), and most
    columns are never read on the way, so a selection costs one index array
    instead of a copy of every column.  Columns set on a selection are its own."""

    def __init__(self, base: Mapping, rows: Optional[np.ndarray] = None):
        self._base = base
        self._rows = rows
        self._gathered: Dict[str, np.ndarray] = {}  # and the columns set here

    def __getitem__(self, name: str) -> np.ndarray:
        col = self._gathered.get(name)
        if col is None:
            col = self._base[name]
            if self._rows is not None:
                col = col[self._rows]
            self._gathered[name] = col
        return col

    def __setitem__(self, name: str, value) -> None:
        value = np.asarray(value)
        if self._rows is not None and value.shape[:1] != self._rows.shape:
            raise ValueError("column %r has %d rows, expected %d"
                             % (name, len(value), len(self._rows)))
        self._gathered[name] = value

    def __delitem__(self, name: str) -> None:
        raise TypeError("columns of a selection cannot be removed; build new Instances")

    def __iter__(self):
        yield from self._base
        yield from (k for k in self._gathered if k not in self._base)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for k in self._gathered if k not in self._base)

    def rows_of(self, rows: np.ndarray) -> "Columns":
        """These rows (integer positions) of this selection."""
        return Columns(self._base, rows if self._rows is None else self._rows[rows])


@dataclass
class Instances:
    """Occurrences of a compound event, as columns of equal length.

    where:    event id whose (call path, location) receives the severity
    severity: integer ticks (unit "sec") or counts ("occ") or bytes
    columns:  further per-occurrence data for subscribers and for the report
              (event ids of the constituents, by convention)
    """

    where: np.ndarray
    severity: np.ndarray
    columns: Dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        self.where = np.asarray(self.where, dtype=np.int64)
        self.severity = np.asarray(self.severity, dtype=np.int64)
        if self.where.shape != self.severity.shape:
            raise ValueError("where and severity must have the same length")
        if isinstance(self.columns, Columns):
            if self.columns._rows is not None and len(self.columns._rows) != len(self.where):
                raise ValueError("columns select %d rows, expected %d"
                                 % (len(self.columns._rows), len(self.where)))
            return
        self.columns = dict(self.columns)
        for k, v in list(self.columns.items()):
            v = np.asarray(v)
            if v.shape[:1] != self.where.shape:
                raise ValueError("column %r has %d rows, expected %d" % (k, len(v), len(self.where)))
            self.columns[k] = v

    def __len__(self) -> int:
        return len(self.where)

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "where":
            return self.where
        if name == "severity":
            return self.severity
        return self.columns[name]

    def select(self, mask) -> "Instances":
        """The occurrences where mask holds (boolean array or indices)."""
        mask = np.asarray(mask)
        rows = np.nonzero(mask)[0] if mask.dtype == bool else mask.astype(np.int64, copy=False)
        columns = self.columns if isinstance(self.columns, Columns) else Columns(self.columns)
        return Instances(self.where[rows], self.severity[rows], columns.rows_of(rows))

    def charged(self, severity: np.ndarray, mask=None) -> "Instances":
        """These occurrences with a new severity, keeping those where it is positive
        (and mask holds): the common last step of a refining property."""
        keep = np.asarray(severity) > 0
        if mask is not None:
            keep &= mask
        sel = self.select(keep)
        return Instances(sel.where, np.asarray(severity)[keep], sel.columns)

    @staticmethod
    def empty(**column_dtypes) -> "Instances":
        return Instances(np.empty(0, np.int64), np.empty(0, np.int64),
                         {k: np.empty(0, d) for k, d in column_dtypes.items()})


class Property:
    """Base class of every property (built-in or plugin).

    Subclasses set the class attributes and implement `detect`.  A property with
    `detect` returning None is a pure grouping node of the metric tree whose value
    the analysis computes from region classes (see `region_class`).
    """

    name: str = ""
    title: str = ""
    parent: Optional[str] = None
    unit: str = "sec"
    description: str = ""
    diagnosis: str = ""
    #: the id of the same metric in Scalasca's reports (CUBE), when its value is
    #: Scalasca's; None for metrics of earlc's own
    cube_id: Optional[str] = None
    #: an optional group ("root_cause"): evaluated only when the analysis asks for
    #: the group, the property, or "all" (they cost more than the default catalog)
    group: Optional[str] = None
    #: name of the property whose instances `detect` receives, or None
    subscribes: Optional[str] = None
    #: False for compound events that others subscribe to but that are no metric
    #: of their own (the matched messages, the collective instances)
    metric: bool = True
    #: for grouping nodes: the region classes (earlc.analysis.regions.CLASSES)
    #: whose exclusive time is this metric; "*" for all regions
    region_class: Optional[tuple] = None

    def detect(self, ctx, subscribed: Optional[Instances]) -> Optional[Instances]:
        """The occurrences of this property (None: it has none of its own)."""
        return None

    def expand(self, ctx) -> List["Property"]:
        """Further properties that depend on the trace (one metric per hardware
        counter it records): evaluated with the catalog.  None by default."""
        return []

    def totals(self, ctx):
        """For metrics that are not made of occurrences (visits, message counts):
        (cnode, location, value) arrays, or None to use `detect`."""
        return None

    def __repr__(self) -> str:
        return "<Property %s>" % self.name


def check_catalog(properties: List[Property]) -> List[Property]:
    """Validate names, parents and subscriptions; return the properties in an order
    where every publisher comes before its subscribers (and parents before children)."""
    by_name: Dict[str, Property] = {}
    for p in properties:
        if not p.name or not p.name.replace("_", "").isalnum():
            raise ValueError("property %r needs a name made of letters, digits and _" % p)
        if p.name in by_name:
            raise ValueError("two properties are named %r" % p.name)
        if p.unit not in UNITS:
            raise ValueError("property %s: unit must be one of %s" % (p.name, UNITS))
        by_name[p.name] = p
    for p in properties:
        if not p.metric and (p.parent is not None or p.region_class is not None):
            raise ValueError("property %s: a compound event that is no metric has no parent"
                             % p.name)
        if p.parent is not None and p.parent not in by_name:
            raise ValueError("property %s: parent %r is not in the catalog" % (p.name, p.parent))
        if p.subscribes is not None and p.subscribes not in by_name:
            raise ValueError("property %s subscribes to %r, which is not in the catalog"
                             % (p.name, p.subscribes))
    order: List[Property] = []
    state: Dict[str, int] = {}

    def visit(p: Property, path):
        s = state.get(p.name, 0)
        if s == 2:
            return
        if s == 1:
            raise ValueError("cycle in the property graph: %s" % " -> ".join(path + [p.name]))
        state[p.name] = 1
        for dep in (p.subscribes, p.parent):
            if dep is not None:
                visit(by_name[dep], path + [p.name])
        state[p.name] = 2
        order.append(p)

    for p in properties:
        visit(p, [])
    return order
