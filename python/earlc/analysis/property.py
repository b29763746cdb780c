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

from .._core import Error

UNITS = ("sec", "occ", "bytes")
#: what a metric can measure (Property.measures)
MEASURES = ("inefficiency", "time", "cause", "quantity")


class Columns(MutableMapping):
    """The further columns of a selection of Instances: the parent's columns and
    the selected rows, each column gathered on first access.  Properties refine
    what they subscribe to step by step (select, then select again), and most
    columns are never read on the way, so a selection costs one index array
    instead of a copy of every column.  Columns set on a selection are its own,
    and a selection of it selects them too.

    The parts (base, rows, gathered columns, names set here) are one tuple,
    replaced as a whole: a property may read a selection on one thread while
    the engine makes it own its rows on another (own, when what it selects
    from is let go)."""

    def __init__(self, base: Mapping, rows: Optional[np.ndarray] = None):
        self._state = (base, rows, {}, ())

    @property
    def _base(self) -> Mapping:
        return self._state[0]

    @property
    def _rows(self) -> Optional[np.ndarray]:
        return self._state[1]

    def __getitem__(self, name: str) -> np.ndarray:
        base, rows, gathered, _ = self._state
        col = gathered.get(name)
        if col is None:
            if name not in base:
                raise MissingColumn(name, list(self))
            col = base[name]
            if rows is not None:
                col = col[rows]
            gathered[name] = col
        return col

    def __setitem__(self, name: str, value) -> None:
        base, rows, gathered, own = self._state
        value = np.asarray(value)
        if rows is not None and value.shape[:1] != rows.shape:
            raise ValueError("column %r has %d rows, expected %d"
                             % (name, len(value), len(rows)))
        gathered[name] = value
        if name not in own:
            self._state = (base, rows, gathered, own + (name,))

    def __delitem__(self, name: str) -> None:
        raise TypeError("columns of a selection cannot be removed; build new Instances")

    def __iter__(self):
        base, _, _, own = self._state
        yield from base
        yield from (k for k in own if k not in base)

    def __len__(self) -> int:
        base, _, _, own = self._state
        return len(base) + sum(1 for k in own if k not in base)

    def rows_of(self, rows: np.ndarray) -> "Columns":
        """These rows (integer positions) of this selection, with the columns set
        on it."""
        base, mine, gathered, own = self._state
        out = Columns(base, rows if mine is None else mine[rows])
        if own:
            out._state = (base, out._rows, {k: gathered[k][rows] for k in own}, own)
        return out

    def selects_from(self, columns) -> bool:
        """Whether this is a selection of those columns (a dict or the Columns of
        the instances selected from), which it then keeps alive."""
        base = columns._base if isinstance(columns, Columns) else columns
        return self._rows is not None and self._base is base

    def own(self) -> None:
        """Gather every column of the selection now, so that it no longer holds
        the columns it selects from (which can then be freed)."""
        base, rows, gathered, own = self._state
        if rows is None:
            return
        # the base's columns in its order, then those set here: not the order
        # in which properties on several threads happened to read them
        cols = {name: self[name] for name in base}
        cols.update((name, gathered[name]) for name in own if name not in base)
        self._state = (cols, None, {}, ())


class MissingColumn(Error, KeyError):
    """A column asked for that the instances do not have: says which they have."""

    def __init__(self, name: str, available, publisher: Optional[str] = None):
        super().__init__(name)
        self.column, self.available, self.publisher = name, list(available), publisher

    def __str__(self) -> str:
        where = "%s publishes" % self.publisher if self.publisher else "the instances have"
        return ("no column %r: %s %s" % (self.column, where, ", ".join(
            ["where", "severity"] + [c for c in self.available])))


def _as_integers(values, what: str) -> np.ndarray:
    """values as int64, refusing what would be truncated or reinterpreted."""
    arr = np.asarray(values)
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError("%s holds %s values; it must hold integers (ticks, counts or "
                        "bytes): floats are refused, not truncated; convert on purpose, "
                        "e.g. np.rint(x).astype(np.int64)" % (what, arr.dtype))
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 1 << 63:
        raise ValueError("%s holds values beyond 2**63-1" % what)
    return arr.astype(np.int64, copy=False)


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

    #: the property that published these instances (set by the analysis), for messages
    published_by = None
    #: what each column holds where it is no event id (Property.column_kinds, with
    #: those of the instances they were refined from; set by the analysis)
    column_kinds = {}

    def __post_init__(self):
        self.where = _as_integers(self.where, "where")
        self.severity = _as_integers(self.severity, "severity")
        if self.where.shape != self.severity.shape:
            raise ValueError("severity has %d entries but where has %d: give one per "
                             "occurrence" % (len(self.severity), len(self.where)))
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
        if name not in self.columns:
            raise MissingColumn(name, list(self.columns), self.published_by)
        return self.columns[name]

    def __contains__(self, name: str) -> bool:
        return name in ("where", "severity") or name in self.columns

    def select(self, mask) -> "Instances":
        """The occurrences where mask holds (boolean array or indices)."""
        mask = np.asarray(mask)
        rows = np.nonzero(mask)[0] if mask.dtype == bool else mask.astype(np.int64, copy=False)
        columns = self.columns if isinstance(self.columns, Columns) else Columns(self.columns)
        out = Instances(self.where[rows], self.severity[rows], columns.rows_of(rows))
        out.published_by = self.published_by
        out.column_kinds = self.column_kinds
        return out

    def charged(self, severity: np.ndarray, mask=None) -> "Instances":
        """These occurrences with a new severity, keeping those where it is positive
        (and mask holds): the common last step of a refining property."""
        keep = np.asarray(severity) > 0
        if mask is not None:
            keep &= mask
        sel = self.select(keep)
        out = Instances(sel.where, np.asarray(severity)[keep], sel.columns)
        out.published_by = self.published_by
        out.column_kinds = self.column_kinds
        return out

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
    #: names of further properties whose published instances this one reads from
    #: `ctx.published` (they are evaluated first and kept until it is done)
    reads: tuple = ()
    #: False for compound events that others subscribe to but that are no metric
    #: of their own (the matched messages, the collective instances)
    metric: bool = True
    #: for grouping nodes: the region classes (earlc.analysis.regions.CLASSES)
    #: whose exclusive time is this metric; "*" for all regions
    region_class: Optional[tuple] = None
    #: for plugins: the name of the built-in property this one replaces (its
    #: subscribers and children then use this one)
    replaces: Optional[str] = None
    #: False: never evaluated at the same time as another property (with
    #: threads > 1 properties whose inputs are done run at once: one that keeps
    #: state of its own outside ctx.memo and its instances sets this)
    concurrent: bool = True
    #: what the metric measures: "inefficiency" (time lost: wait states, idleness,
    #: management overhead; the only kind ranked as most severe and drawn red),
    #: "time" (where time goes: Time, MPI, Computation), "cause" (lost time charged
    #: to what caused it: delay costs), "quantity" (counts and bytes).  None: decided
    #: from the declaration (see measures_of in analysis/ranking.py)
    measures: Optional[str] = None
    #: the column of `detect`'s instances holding, per occurrence, the event that
    #: the waiting was for (the send call of a Late Sender): a picture draws an
    #: arrow from it; None when there is none
    partner: Optional[str] = None
    #: what the further columns of its instances hold, where a column is not the
    #: event id of a constituent (the convention): "ticks" (a time or duration; a
    #: name ending in _time is ticks without saying so), "location" (a dense
    #: location index), "instance" (a collective instance of the EARL layer),
    #: "value" (anything else: counts, ranks, operation codes; boolean columns
    #: are values without saying so).  The analysis in parts (docs/parallel.md)
    #: turns the event ids and instances of a part into the whole trace's.
    column_kinds = {}
    #: where the property comes from ("built-in", "plugin FILE", "package NAME"),
    #: set when the catalog is assembled; shown by `earlc properties` and in messages
    source: Optional[str] = None
    #: True for a property that a trace analysed in parts computes with the other
    #: parts (the root causes exchange what crosses parts while they compute):
    #: every part evaluates it, or none does (engine.Evaluation)
    across_parts: bool = False

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
