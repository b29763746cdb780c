"""Checks of a property (built-in or plugin): its declaration, before any
analysis, and what its `detect` or `totals` returns, before anything is added to
the report.  Every message names the property, where it comes from, and what to
change: a plugin author reads them, not earlc's source.
"""
from __future__ import annotations

import inspect
import re
from typing import Optional

import numpy as np

from .._core import Error

from .property import MEASURES, UNITS, Instances, Property
from . import regions as rc

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PropertyError(Error, ValueError):
    """A property is declared wrongly or returned something earlc cannot use."""


def describe(p) -> str:
    """'property slow_receive (plugin /x/mine.py)': how messages name a property."""
    name = getattr(p, "name", "") or "?"
    cls = type(p).__name__ if not isinstance(p, type) else p.__name__
    source = getattr(p, "source", None) or source_of(p)
    label = "property %s" % name if name != "?" else "property class %s" % cls
    return "%s (%s)" % (label, source) if source else label


def source_of(p) -> str:
    """Where a property's class is defined, for messages."""
    cls = p if isinstance(p, type) else type(p)
    try:
        return "%s, class %s" % (inspect.getsourcefile(cls), cls.__name__)
    except (TypeError, OSError):
        return "class %s" % cls.__name__


def check_declaration(p: Property) -> None:
    """The class attributes a property declares, and that it computes something."""
    who = describe(p)
    if not isinstance(p, Property):
        raise PropertyError("%r is not an earlc.analysis.Property: subclass it" % (p,))
    if not isinstance(p.name, str) or not _NAME.match(p.name):
        raise PropertyError("%s: name must be an identifier (letters, digits and _, not "
                            "starting with a digit), not %r" % (who, p.name))
    if not isinstance(p.title, str):
        raise PropertyError("%s: title must be a string, not %r" % (who, p.title))
    if p.unit not in UNITS:
        raise PropertyError("%s: unit must be one of %s, not %r"
                            % (who, ", ".join(UNITS), p.unit))
    measures = getattr(p, "measures", None)
    if measures is not None:
        if measures not in MEASURES:
            raise PropertyError("%s: measures must be one of %s (or None), not %r"
                                % (who, ", ".join(MEASURES), measures))
        if (measures == "quantity") != (p.unit != "sec"):
            raise PropertyError("%s: measures %r does not fit unit %r: a time (unit \"sec\") "
                                "measures an inefficiency, a time or a cause, counts and bytes "
                                "a quantity" % (who, measures, p.unit))
    for attr in ("parent", "subscribes", "replaces", "partner"):
        value = getattr(p, attr, None)
        if value is not None and not isinstance(value, str):
            raise PropertyError("%s: %s must be a %s name (a string) or None, not %r"
                                % (who, attr, "column" if attr == "partner" else "property",
                                   value))
    if p.parent == p.name or p.subscribes == p.name:
        raise PropertyError("%s: a property cannot be its own parent or subscribe to itself"
                            % who)
    if isinstance(p.reads, str) or not isinstance(p.reads, (tuple, list)) or \
            not all(isinstance(n, str) for n in p.reads):
        raise PropertyError("%s: reads must be a tuple of property names, not %r"
                            % (who, p.reads))
    if p.name in p.reads:
        raise PropertyError("%s: a property cannot read its own instances" % who)
    if not isinstance(p.metric, bool):
        raise PropertyError("%s: metric must be True or False, not %r" % (who, p.metric))
    if p.region_class is not None and p.region_class not in ("*", ("*",)):
        unknown = [c for c in p.region_class if c not in rc.CLASSES]
        if isinstance(p.region_class, str) or unknown:
            raise PropertyError("%s: region_class must be \"*\" or a tuple of region classes "
                                "(%s), not %r" % (who, ", ".join(rc.CLASSES), p.region_class))
    _check_compound(p, who)
    cls = type(p)
    computes = (cls.detect is not Property.detect or cls.totals is not Property.totals
                or p.region_class is not None)
    # a compound event that only expands into further metrics (one per hardware
    # counter of the trace) computes nothing itself
    expands = not p.metric and cls.expand is not Property.expand
    if not computes and not expands:
        raise PropertyError("%s defines neither detect(self, ctx, subscribed) nor "
                            "totals(self, ctx): implement one of them (docs/plugins.md)" % who)


def _integer_array(who: str, what: str, values, length: Optional[int] = None) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise PropertyError("%s: %s must be a one-dimensional array, not of shape %s"
                            % (who, what, arr.shape))
    if arr.size and arr.dtype.kind not in "iu":
        raise PropertyError(
            "%s: %s holds %s values; it must hold integers (ticks, counts or bytes): "
            "floats are refused, not truncated; convert on purpose, e.g. "
            "np.rint(x).astype(np.int64)" % (who, what, arr.dtype))
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 1 << 63:
        raise PropertyError("%s: %s holds values beyond 2**63-1" % (who, what))
    if length is not None and len(arr) != length:
        raise PropertyError("%s: %s has %d entries but where has %d: give one per occurrence"
                            % (who, what, len(arr), length))
    return arr.astype(np.int64, copy=False)


def check_instances(p: Property, inst, n_events: int) -> Optional[Instances]:
    """What detect returned: None or Instances with valid event ids and
    non-negative integer severities, one per occurrence."""
    who = describe(p)
    if inst is None:
        return None
    if not isinstance(inst, Instances):
        raise PropertyError("%s: detect returned %s; return earlc.analysis.Instances(where, "
                            "severity, columns) or None" % (who, type(inst).__name__))
    where = _integer_array(who, "where", inst.where)
    sev = _integer_array(who, "severity", inst.severity, len(where))
    if len(where):
        lo, hi = int(where.min()), int(where.max())
        if lo < 0 or hi >= n_events:
            bad = lo if lo < 0 else hi
            raise PropertyError("%s: where holds event id %d, outside the trace (0 to %d): "
                                "charge each occurrence to one of its events"
                                % (who, bad, n_events - 1))
    if len(sev) and int(sev.min()) < 0:
        row = int(np.argmax(sev < 0))
        raise PropertyError("%s: severity is negative in %d occurrences (the first: row %d, "
                            "%d); severities are time lost, counts or bytes: keep only the "
                            "occurrences with a positive severity"
                            % (who, int((sev < 0).sum()), row, int(sev[row])))
    return inst


def check_totals(p: Property, totals, n_cnodes: int, n_locations: int):
    """What totals returned: (cnode, location, value) integer arrays of one length."""
    who = describe(p)
    if not isinstance(totals, (tuple, list)) or len(totals) != 3:
        raise PropertyError("%s: totals returned %s; return a tuple (cnode, location, value) "
                            "of integer arrays, or None" % (who, type(totals).__name__))
    cnode = _integer_array(who, "the cnode array of totals", totals[0])
    loc = _integer_array(who, "the location array of totals", totals[1], len(cnode))
    value = _integer_array(who, "the value array of totals", totals[2], len(cnode))
    if len(cnode) and (int(cnode.min()) < -1 or int(cnode.max()) >= n_cnodes):
        raise PropertyError("%s: totals names call paths outside 0 to %d (ctx.cnode gives "
                            "the call path of an event)" % (who, n_cnodes - 1))
    if len(loc) and (int(loc.min()) < 0 or int(loc.max()) >= n_locations):
        raise PropertyError("%s: totals names locations outside 0 to %d"
                            % (who, n_locations - 1))
    if len(value) and int(value.min()) < 0:
        # rows may correct others (time minus the part charged elsewhere); what
        # each (call path, location) cell adds up to may not be negative
        from ..sums import sum_by_key

        placed = cnode >= 0
        _, sums = sum_by_key(cnode[placed] * np.int64(n_locations) + loc[placed], value[placed])
        if len(sums) and int(sums.min()) < 0:
            raise PropertyError("%s: totals adds up to a negative value in a (call path, "
                                "location) cell; values are time, counts or bytes" % who)
    return cnode, loc, value


def _check_compound(p, who: str) -> None:
    """A compound event in the paper's form: root, fractions, severity, charge."""
    from .compound import CompoundEvent, Root

    if not isinstance(p, CompoundEvent):
        return
    if not isinstance(p.root, Root):
        raise PropertyError("%s: root must be Root(\"KIND\", ...), the root predicate, not %r"
                            % (who, p.root))
    names = ["root"]
    for name, fr in type(p).fractions().items():
        if fr.source not in names:
            raise PropertyError("%s: fraction %s = Fraction(%r) starts from %s, which is no "
                                "earlier fraction (declare fractions after those they use)"
                                % (who, name, fr.path, fr.source))
        names.append(name)
    if not isinstance(p.severity, str) or not p.severity.strip():
        raise PropertyError("%s: severity must be an expression such as \"e2.time - e1.time\""
                            % who)
    for attr in ("charge", "one_per"):
        value = getattr(p, attr)
        if value is not None and value not in names:
            raise PropertyError("%s: %s = %r names no fraction (fractions: %s)"
                                % (who, attr, value, ", ".join(names)))
