"""Compound events in the form of EARL/EXPERT (Wolf and Mohr, section 5): a root
predicate, fractions reached from the root through pointer attributes and state
queries, conditions, and a severity expression.

    class LateSenderAsInThePaper(CompoundEvent):
        name, title, parent = "late_sender_paper", "Late Sender (paper)", "mpi_point2point"
        root = Root("MPI_RECV", "MPI_IRECV")              # type(root) = Receive
        s1 = Fraction("root.sendptr")                      # s1 = root.sendptr
        e1 = Fraction("root.enterptr", region=BLOCKING_RECEIVES)
        e2 = Fraction("s1.enterptr", where="e2.time > e1.time")
        severity = "e2.time - e1.time"
        charge = "e1"
        one_per = "e1"       # a call completing several receives is one occurrence

The paper's algorithm walks the events and evaluates the fractions of each root
candidate in turn; here every step is done for all candidates at once with numpy
(a pointer step is one gather over the candidates): Late Sender in this form
costs about 2.5 times the hand-written built-in, a small part of an analysis.

A fraction is one event per candidate, or a set (the members of a collective:
`coll(root)`); a set fraction's pointer steps apply to each member.  A candidate
for which a pointer is -1 (no such event), a region filter or a condition fails
is dropped, as in the paper.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..events import KINDS
from ..states import POINTERS
from .property import Instances, Property

#: attributes of a fraction in expressions, each an event column
ATTRIBUTES = ("time", "location", "region", "kind", "id")
#: functions of expressions: aggregates over a set fraction, and state queries
FUNCTIONS = ("max", "min", "sum", "count", "any", "all", "on_stack")


class Root:
    """The root predicate: events of these kinds (names of earlc.KINDS), and,
    if given, whose region (for ENTER/LEAVE) is one of these region names."""

    def __init__(self, *kinds: str, region: Union[str, Sequence[str], None] = None):
        unknown = [k for k in kinds if k not in KINDS]
        if not kinds or unknown:
            raise ValueError("Root needs event kinds from earlc.KINDS (e.g. \"MPI_RECV\")%s"
                             % (", not %s" % ", ".join(map(repr, unknown)) if unknown else ""))
        self.kinds = kinds
        self.region = (region,) if isinstance(region, str) else region


class Fraction:
    """A fraction reached from earlier ones: `path` is a fraction name followed by
    pointer attributes (`root.sendptr.enterptr`), or `coll(NAME)`, the members of
    the collective instance event NAME completes (a set; fails when it completes
    none), optionally followed by pointers (`coll(root).enterptr` goes through
    `E1.enterptr` in the paper's notation: write it as a path from a set fraction).

    region: the fraction's events must be ENTERs of one of these region names.
    where:  a condition (expression) that must hold, evaluated once this fraction
            and those it names are known.
    """

    def __init__(self, path: str, region: Union[str, Sequence[str], None] = None,
                 where: Optional[str] = None):
        self.path = path
        self.region = (region,) if isinstance(region, str) else region
        self.where = where
        head, steps = _split_path(path)
        self.set_from = head[5:-1] if head.startswith("coll(") else None
        self.source = self.set_from or head
        self.steps = steps


def _split_path(path: str) -> Tuple[str, List[str]]:
    path = path.replace(" ", "")
    if path.startswith("coll("):
        close = path.find(")")
        if close < 0:
            raise ValueError("fraction %r: coll( without )" % path)
        head, rest = path[:close + 1], path[close + 1:]
        steps = [s for s in rest.split(".") if s]
    else:
        head, *steps = path.split(".")
    bad = [s for s in steps if s not in POINTERS]
    if bad:
        raise ValueError("fraction %r: %s is no pointer attribute (pointers: %s)"
                         % (path, ", ".join(bad), ", ".join(POINTERS)))
    return head, steps


class _Value:
    """An expression's value: one entry per candidate (owner None), or one per
    member of a set fraction (owner: the candidate of each member)."""

    __slots__ = ("data", "owner", "layout")

    def __init__(self, data: np.ndarray, owner=None, layout=None):
        self.data, self.owner, self.layout = data, owner, layout


class CompoundEvent(Property):
    """A property given as a compound event (see the module doc).  Subclasses set
    `root`, Fraction class attributes (in the order they depend on each other),
    `severity` (an expression), and `charge` (the fraction whose call path and
    location are charged; default: root)."""

    root: Optional[Root] = None
    severity: str = ""
    charge: str = "root"
    #: keep one occurrence per distinct event of this fraction, the most severe
    #: (a call completing several receives waits once)
    one_per: Optional[str] = None
    #: the compound events' constituents published as columns (default: every
    #: single-event fraction)
    publish: Optional[Sequence[str]] = None

    @classmethod
    def fractions(cls) -> Dict[str, Fraction]:
        """The Fraction attributes, in definition order (base classes first)."""
        out: Dict[str, Fraction] = {}
        for klass in reversed(cls.__mro__):
            for k, v in vars(klass).items():
                if isinstance(v, Fraction):
                    out[k] = v
        return out

    # -- evaluation -------------------------------------------------------------------------
    def detect(self, ctx, subscribed):
        if not isinstance(self.root, Root):
            raise TypeError("%s: root must be a Root(kinds...), not %r" % (self.name, self.root))
        ev = ctx.events
        cand = ctx.events_of_kind(*self.root.kinds)
        if self.root.region is not None:
            cand = cand[_region_in(ctx, ev.region_of(cand).astype(np.int64), self.root.region)]
        env: Dict[str, _Value] = {"root": _Value(cand.astype(np.int64))}
        alive = np.ones(len(cand), dtype=bool)
        for name, fr in self.fractions().items():
            if name in env or name in FUNCTIONS or name in ATTRIBUTES:
                raise ValueError("%s: fraction name %s is taken (root, attributes and "
                                 "functions are reserved)" % (self.name, name))
            if fr.source not in env:
                raise ValueError("%s: fraction %s starts from %s, which is no earlier fraction"
                                 % (self.name, name, fr.source))
            base = env[fr.source]
            if fr.set_from is not None:
                if base.owner is not None:
                    raise ValueError("%s: coll() of a set fraction" % self.name)
                val, ok = _coll(ctx, base.data)
                val.layout = name  # values of this set combine member by member
            else:
                val, ok = _Value(base.data.copy(), base.owner, base.layout), None
            for step in fr.steps:
                val.data = _pointer(ctx, step, val.data)
            failed = val.data < 0
            if fr.region is not None:
                ids = np.maximum(val.data, 0)
                failed |= ~(_region_in(ctx, ev.region[ids].astype(np.int64), fr.region)
                            & (ev.kind[ids] == KINDS["ENTER"]))
            fail_cand = _per_candidate_any(failed, val.owner, len(cand))
            if ok is not None:
                fail_cand |= ~ok
            alive &= ~fail_cand
            env[name] = val
            if fr.where is not None:
                cond = self._eval(ctx, fr.where, env, len(cand))
                alive &= _truth(cond, len(cand))
        for cond in _as_list(getattr(self, "condition", None)):
            alive &= _truth(self._eval(ctx, cond, env, len(cand)), len(cand))
        if not self.severity:
            raise ValueError("%s: severity is not set; give an expression such as "
                             "\"e2.time - e1.time\"" % self.name)
        sev = self._eval(ctx, self.severity, env, len(cand))
        charge = env.get(self.charge)
        if charge is None:
            raise ValueError("%s: charge = %r names no fraction" % (self.name, self.charge))
        return self._instances(ctx, env, alive, sev, charge)

    def _instances(self, ctx, env, alive, sev, charge) -> Instances:
        singles = [n for n, v in env.items() if v.owner is None]
        publish = list(self.publish) if self.publish is not None else singles
        if charge.owner is None:
            if sev.owner is not None:
                raise ValueError("%s: the severity is one value per member of a set fraction; "
                                 "charge that fraction, or aggregate (sum(...), max(...))"
                                 % self.name)
            keep = alive & (sev.data > 0)
            rows = np.nonzero(keep)[0]
            where, severity = charge.data[rows], sev.data[rows].astype(np.int64)
            cols = {n: env[n].data[rows] for n in publish if env[n].owner is None}
            if self.one_per is not None:
                group = env[self.one_per].data[rows]
                pick = _largest_per_group(group, severity)
                where, severity = where[pick], severity[pick]
                cols = {k: v[pick] for k, v in cols.items()}
            return Instances(where, severity, cols)
        # one occurrence per member of the charged set fraction
        sdata = sev.data if sev.owner is not None else sev.data[charge.owner]
        keep = alive[charge.owner] & (sdata > 0)
        cols = {n: env[n].data[charge.owner[keep]] for n in publish if env[n].owner is None}
        return Instances(charge.data[keep], sdata[keep].astype(np.int64), cols)

    def _eval(self, ctx, text: str, env, n: int) -> _Value:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise ValueError("%s: expression %r: %s" % (self.name, text, exc.msg)) from None
        return _Evaluator(ctx, env, n, self.name, text).visit(tree.body)


def _as_list(x):
    if x is None:
        return []
    return [x] if isinstance(x, str) else list(x)


def _truth(v: _Value, n: int) -> np.ndarray:
    """A condition per candidate (a per-member condition must hold for all members)."""
    data = v.data.astype(bool)
    if v.owner is None:
        return data
    return ~_per_candidate_any(~data, v.owner, n)


def _per_candidate_any(flags: np.ndarray, owner, n: int) -> np.ndarray:
    if owner is None:
        return flags
    out = np.zeros(n, dtype=bool)
    out[owner[flags]] = True
    return out


def _pointer(ctx, name: str, ids: np.ndarray) -> np.ndarray:
    out = np.full(len(ids), -1, dtype=np.int64)
    ok = ids >= 0
    if ok.any():
        out[ok] = ctx.pointer(name, ids[ok])
    return out


def _region_in(ctx, refs: np.ndarray, names: Sequence[str]) -> np.ndarray:
    wanted = {r.id for r in ctx.trace.regions if r.name in set(names)}
    if not wanted:
        return np.zeros(len(refs), dtype=bool)
    return np.isin(refs, np.fromiter(wanted, dtype=np.int64))


def _coll(ctx, roots: np.ndarray):
    """coll(root) for every candidate: (members as a set value, whether root
    completes an instance)."""
    st = ctx.states
    inst = np.full(len(roots), -1, dtype=np.int64)
    ok = roots >= 0
    inst[ok] = st.coll_instance[roots[ok]]
    has = inst >= 0
    complete = np.zeros(len(roots), dtype=bool)
    complete[has] = st.coll_complete[inst[has]] == roots[has]
    start = st.coll_member_start.astype(np.int64)
    k = np.nonzero(complete)[0]
    sizes = start[inst[k] + 1] - start[inst[k]]
    owner = np.repeat(k, sizes)
    first = np.repeat(start[inst[k]], sizes)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    members = st.coll_members.astype(np.int64)[first + offset] if len(owner) else \
        np.empty(0, np.int64)
    return _Value(members, owner), complete


def _largest_per_group(group: np.ndarray, severity: np.ndarray) -> np.ndarray:
    """Row of the largest severity per group (the first on ties), by group."""
    if len(group) == 0:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((np.arange(len(group)), -severity, group))
    g = group[order]
    first = np.ones(len(g), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    return order[first]


class _Evaluator(ast.NodeVisitor):
    """Vectorised evaluation of a small expression language over fractions:
    NAME.attr, integers, + - * // %, comparisons, and/or/not, the aggregates
    max/min/sum/count/any/all over a set fraction, on_stack(enter, at)."""

    _BIN = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
            ast.FloorDiv: np.floor_divide, ast.Mod: np.mod}
    _CMP = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
            ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}

    def __init__(self, ctx, env, n, prop, text):
        self.ctx, self.env, self.n, self.prop, self.text = ctx, env, n, prop, text

    def fail(self, what: str):
        raise ValueError("%s: expression %r: %s" % (self.prop, self.text, what))

    def generic_visit(self, node):
        self.fail("%s is not allowed (use fraction.attr, integers, + - * // %%, "
                  "comparisons, and/or/not, %s)" % (type(node).__name__, ", ".join(FUNCTIONS)))

    def _combine(self, a: _Value, b: _Value, fn) -> _Value:
        if a.owner is None and b.owner is None:
            return _Value(fn(a.data, b.data))
        if a.owner is not None and b.owner is not None:
            if a.layout != b.layout:
                self.fail("values of two different set fractions cannot be combined member "
                          "by member; aggregate one of them first")
            return _Value(fn(a.data, b.data), a.owner, a.layout)
        if a.owner is not None:
            return _Value(fn(a.data, b.data[a.owner]), a.owner, a.layout)
        return _Value(fn(a.data[b.owner], b.data), b.owner, b.layout)

    def visit_Constant(self, node):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            self.fail("only integer constants are allowed, not %r" % (node.value,))
        return _Value(np.full(self.n, node.value, dtype=np.int64))

    def visit_Name(self, node):
        v = self.env.get(node.id)
        if v is None:
            self.fail("%s is no fraction (fractions: %s)" % (node.id, ", ".join(self.env)))
        return _Value(v.data, v.owner, v.layout)

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        ids = np.maximum(base.data, 0)
        ev = self.ctx.events
        if node.attr == "time":
            data = self.ctx.time_of(ids)
        elif node.attr == "location":
            data = ev.location[ids].astype(np.int64)
        elif node.attr == "region":
            data = ev.region_of(ids).astype(np.int64)
        elif node.attr == "kind":
            data = ev.kind[ids].astype(np.int64)
        elif node.attr == "id":
            data = base.data
        elif node.attr in POINTERS:
            data = _pointer(self.ctx, node.attr, base.data)
        else:
            self.fail("%s is no attribute (attributes: %s, and the pointers %s)"
                      % (node.attr, ", ".join(ATTRIBUTES), ", ".join(POINTERS)))
        return _Value(data, base.owner, base.layout)

    def visit_BinOp(self, node):
        fn = self._BIN.get(type(node.op))
        if fn is None:
            self.fail("operator %s is not allowed" % type(node.op).__name__)
        return self._combine(self.visit(node.left), self.visit(node.right), fn)

    def visit_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return _Value(-v.data, v.owner, v.layout)
        if isinstance(node.op, ast.Not):
            return _Value(~v.data.astype(bool), v.owner, v.layout)
        self.fail("operator %s is not allowed" % type(node.op).__name__)

    def visit_Compare(self, node):
        left = self.visit(node.left)
        out = None
        for op, right_node in zip(node.ops, node.comparators):
            fn = self._CMP.get(type(op))
            if fn is None:
                self.fail("comparison %s is not allowed" % type(op).__name__)
            right = self.visit(right_node)
            r = self._combine(left, right, fn)
            out = r if out is None else self._combine(out, r, np.logical_and)
            left = right
        return out

    def visit_BoolOp(self, node):
        fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = self.visit(node.values[0])
        for v in node.values[1:]:
            out = self._combine(out, self.visit(v), fn)
        return out

    def visit_Call(self, node):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            self.fail("calls are limited to %s" % ", ".join(FUNCTIONS))
        fn = node.func.id
        args = [self.visit(a) for a in node.args]
        if fn == "on_stack":
            if len(args) != 2:
                self.fail("on_stack(enter, at) takes two fractions")
            return self._on_stack(*args)
        if len(args) != 1 or args[0].owner is None:
            self.fail("%s() takes one value of a set fraction (such as E2.time)" % fn)
        v = args[0]
        n = self.n
        if fn == "count":
            return _Value(np.bincount(v.owner, minlength=n).astype(np.int64))
        if fn in ("any", "all"):
            flags = v.data.astype(bool)
            hit = _per_candidate_any(flags if fn == "any" else ~flags, v.owner, n)
            return _Value(hit if fn == "any" else ~hit)
        if fn == "sum":
            out = np.zeros(n, dtype=np.int64)
            np.add.at(out, v.owner, v.data.astype(np.int64))
            return _Value(out)
        info = np.iinfo(np.int64)
        out = np.full(n, info.min if fn == "max" else info.max, dtype=np.int64)
        (np.maximum if fn == "max" else np.minimum).at(out, v.owner, v.data.astype(np.int64))
        out[np.bincount(v.owner, minlength=n) == 0] = 0  # candidates without members fail anyway
        return _Value(out)

    def _on_stack(self, enter: _Value, at: _Value) -> _Value:
        """R^{enter.loc}(at) contains enter: the region instance opened by enter is
        still open just after event at (entered at or before it, left after it)."""
        def fn(e, a):
            leave = _pointer(self.ctx, "leaveptr", e)
            return (e >= 0) & (e <= a) & ((leave < 0) | (leave > a))
        return self._combine(enter, at, fn)
