"""The detector: evaluates a property catalog over one trace.

The catalog's selection is closed over what it needs: every parent, and every
input a property declares (`subscribes`, `reads`), whatever was selected.
Properties run in an order where every input precedes its readers (Evaluation,
the one loop that the whole analysis and a window's analysis share).  While a
property runs, `ctx.published` shows it only what it declares (published.py), so
its values cannot depend on what else was selected.  Each property's occurrences
are published once and its severities are added per (call path, location) in
the SeverityStore.  Published instances are kept until the last property that
subscribes to them or reads them is done.  Grouping nodes of the metric tree
take the exclusive time of their region classes from the call tree.

What a property returns is checked (validate.py) before anything of it is stored.
A property that raises (an undeclared read included) or fails a check is
switched off: the report names it, the exception and the line of its own file,
and the properties reading it are switched off too; the rest of the analysis
completes (strict=True raises instead).  Last, every metric is compared with its
parent cell by cell: a child that exceeds its parent is reported, since the tree
then misleads.
"""
from __future__ import annotations

import inspect
import os
import traceback
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import regions as rc
from .catalog import BUILTIN, assemble, ordered
from .context import AnalysisContext
from .coverage import unanalysed_waits
from .property import Columns, Instances, Property
from .published import Published, let_go_after, uses
from .schedule import Pool, beside
from .severity import SeverityStore
from .validate import PropertyError, check_instances, check_totals, describe


@dataclass
class SwitchedOff:
    """A property the analysis left out because it raised (or returned something
    unusable), or because what it subscribes to was left out."""

    name: str
    source: str
    exception: str        #: the exception's type ("" when left out for a publisher)
    message: str
    file: Optional[str]   #: the property's own file and the line that failed there
    line: Optional[int]

    def __str__(self) -> str:
        at = " at %s:%d" % (self.file, self.line) if self.file and self.line else ""
        what = "%s: %s" % (self.exception, self.message) if self.exception else self.message
        return "property %s (%s) switched off%s: %s" % (self.name, self.source, at, what)


@dataclass
class ExceedsParent:
    """A metric whose value exceeds its parent's in some (call path, location)
    cells: the metric tree is then no tree of parts, and percentages mislead."""

    parent: str
    cells: int
    callpath: int       #: the cell where it exceeds most
    location: int
    value: int
    parent_value: int


def _own_line(p: Property, exc: BaseException):
    """The property's file and the last line of it in the traceback (else the
    line of its detect/totals, else of its class)."""
    cls = type(p)
    try:
        path = os.path.abspath(inspect.getsourcefile(cls))
    except (TypeError, OSError):
        return None, None
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno
    if line is None:
        for attr in ("detect", "totals"):
            fn = getattr(cls, attr)
            if getattr(fn, "__code__", None) is not None and \
                    os.path.abspath(fn.__code__.co_filename) == path:
                line = fn.__code__.co_firstlineno
                break
    if line is None:
        try:
            line = inspect.getsourcelines(cls)[1]
        except (TypeError, OSError):
            pass
    return path, line


class Evaluation:
    """One evaluation of properties over a context, in an order where every
    input comes first (catalog.ordered): the loop that the whole analysis and
    the analysis of a window (window.py) share.

    For each property: left out when an input was switched off; else its values
    are computed by the caller's `value(p)` while `ctx.published` shows p only
    what it declares (published.py); a property that raises is switched off
    (strict: PropertyError instead); instances no later property uses are let
    go once their last user is done.

    With threads > 1, a property starts as soon as what it declares is done,
    beside the others (schedule.py): those of an optional group (Property.group,
    declared costlier) first, then the one with most properties waiting for
    it.  What the evaluation lists comes out as the one-thread loop gives it:
    switched-off properties in the order, the first failure of the order under
    strict (every property before it is still evaluated, none after it
    started)."""

    def __init__(self, ctx: AnalysisContext, strict: bool = False):
        self.ctx = ctx
        self.strict = strict
        self.switched_off: List[SwitchedOff] = []
        self.off = set()

    @property
    def published(self) -> Published:
        return self.ctx._published

    def run(self, order: Sequence[Property], value: Callable[[Property], None],
            progress=None, threads: int = 1) -> None:
        part = getattr(self.ctx.trace, "part", None)
        # the properties of a part exchange with the other parts in the order of
        # the catalog, the same on every part: one after another.  A part of an
        # analysis in turn without such properties exchanges nothing
        # (exchange None): its properties run on threads as in one piece
        if threads > 1 and len(order) > 1 and (part is None or part.exchange is None):
            self._run_parallel(order, value, progress, threads)
            return
        published = self.published
        done_with = let_go_after(order)
        elsewhere, across = set(), False
        for k, p in enumerate(order):
            if progress:
                progress("analysing", k, len(order))
            if part is not None and p.across_parts and not across:
                # a property computed with the other parts runs on every part or on
                # none: switched off where an input is off on any part.  Learnt
                # before each run of such properties: within it they fail together
                elsewhere = set().union(*part.exchange.allgather(sorted(self.off)))
            across = part is not None and p.across_parts
            if not self._inputs_off(p, elsewhere if across else ()):
                failure = self._evaluate(k, p, value)
                if failure is not None:
                    if self.strict:
                        raise failure
                    self._switch_off(p, failure)
            for q in done_with[k]:
                published.let_go(q, lambda q=q: detect(q, self.ctx, published))

    def _inputs_off(self, p: Property, elsewhere=()) -> bool:
        """Switch p off when an input was, here or (elsewhere) on another part
        (True)."""
        missing = [n for n in uses(p) if n in self.off or n in elsewhere]
        if not missing:
            return False
        self.off.add(p.name)
        verb = "subscribes to" if missing[0] == p.subscribes else "reads"
        self.switched_off.append(SwitchedOff(
            p.name, p.source or "", "", "it %s %s, which was switched off"
            % (verb, missing[0]), None, None))
        return True

    def _evaluate(self, k: int, p: Property, value) -> Optional[Exception]:
        """value(p) as the k-th of the order; what it raised (strict: as the
        PropertyError to raise), None when it succeeded."""
        try:
            with self.published.reading(p), self.ctx.evaluating(k):
                value(p)
        except Exception as exc:
            if not self.strict:
                return exc
            path, line = _own_line(p, exc)
            error = PropertyError("%s%s raised %s: %s" % (
                describe(p), " at %s:%d" % (path, line) if line else "",
                type(exc).__name__, exc))
            error.__cause__ = exc
            error.__suppress_context__ = True
            return error
        return None

    def _switch_off(self, p: Property, exc: Exception) -> None:
        path, line = _own_line(p, exc)
        self.off.add(p.name)
        self.published.pop(p.name, None)
        self.switched_off.append(SwitchedOff(p.name, p.source or "", type(exc).__name__,
                                             str(exc), path, line))

    def _run_parallel(self, order, value, progress, threads: int) -> None:
        """The loop of run() with each property started once its inputs are
        done, on up to `threads` threads."""
        n = len(order)
        position = {p.name: k for k, p in enumerate(order)}
        inputs = [[position[u] for u in uses(p) if u in position] for p in order]
        waiting_on = [len(set(i)) for i in inputs]
        readers: List[List[int]] = [[] for _ in order]
        for k, ins in enumerate(inputs):
            for j in set(ins):
                readers[j].append(k)
        # published instances: let go once the publisher and all readers are done
        open_uses = [len(readers[k]) + 1 for k in range(n)]
        # the properties of optional groups first (the root causes: a second or
        # so of work after their inputs, where a default property takes a tenth:
        # started first, the cheap ones fill the other cores beside them instead
        # of delaying them), then the most waiting properties (they lead the
        # longest chains)
        below = [0] * n
        for k in reversed(range(n)):
            below[k] = sum(1 + below[r] for r in readers[k])
        costly = [bool(p.group) for p in order]

        def first(k):
            return (not costly[k], -below[k], k)
        ready = sorted((k for k in range(n) if not waiting_on[k]), key=first)
        outcome: Dict[int, Optional[Exception]] = {}
        stop = n  # under strict: nothing at or after the first failure starts
        pool = Pool(threads, "earlc-analysis")
        self.ctx._pool = pool
        done = running = 0
        alone = False  # a property that runs alone (concurrent = False) is running
        try:
            while done < n:
                while ready and pool.room() and not alone:
                    k = ready[0]
                    if k >= stop:
                        ready.pop(0)
                        continue
                    p = order[k]
                    if not getattr(p, "concurrent", True):
                        if running:
                            break  # it starts once the others are done
                        alone = True
                    ready.pop(0)
                    if self._inputs_off(p):
                        alone = False
                        outcome[k] = None
                        done += 1
                        ready += self._finish(k, inputs, readers, waiting_on, open_uses,
                                              order)
                        ready.sort(key=first)
                        continue
                    pool.give(k, lambda k=k, p=p: outcome.__setitem__(
                        k, self._evaluate(k, p, value)))
                    running += 1
                if not running:
                    break  # strict: what is left is at or after the failure
                for k, error in pool.finished(more=bool(ready) and not alone):
                    running -= 1
                    done += 1
                    alone = False
                    if error is not None:  # not an Exception: stop at once
                        raise error
                    failure = outcome[k]
                    if failure is not None:
                        if self.strict:
                            stop = min(stop, k)
                        else:
                            self._switch_off(order[k], failure)
                    ready += self._finish(k, inputs, readers, waiting_on, open_uses, order)
                    if progress:
                        progress("analysing", done, n)
                ready.sort(key=first)
        finally:
            pool.close()
            self.ctx._pool = None
        if stop < n:
            raise outcome[stop]
        # switched off in the order of the properties, as one thread lists them
        self.switched_off.sort(key=lambda s: position.get(s.name, n))

    def _finish(self, k, inputs, readers, waiting_on, open_uses, order) -> List[int]:
        """Property k is done: let go what no one reads any more; the
        properties that can start now."""
        published = self.published
        for j in list(set(inputs[k])) + [k]:
            open_uses[j] -= 1
            if not open_uses[j]:
                published.let_go(order[j], lambda q=order[j]: detect(q, self.ctx, published))
        now = []
        for r in readers[k]:
            waiting_on[r] -= 1
            if not waiting_on[r]:
                now.append(r)
        return now

    def expand(self, order: List[Property], catalog) -> List[Property]:
        """order with the further properties its members define for this trace
        (expand: a metric per hardware counter) and what those need."""
        extra = []
        for p in order:
            with self.published.reading(p):
                extra += p.expand(self.ctx)
        if not extra:
            return order
        return ordered(catalog.with_needs([p.name for p in order + extra], extra))


def run(trace, properties: Optional[Sequence[Union[Property, str]]] = None, top: int = 10,
        progress=None, plugins: Sequence = (), strict: bool = False, packages: bool = True,
        own: Optional[np.ndarray] = None, last_time: Optional[int] = None, context=None,
        threads: int = 1):
    """The analysis of trace on `threads` threads (at least 1; the result does
    not depend on it).  own (a bool per location) keeps the values and the
    worst occurrences of those locations only: a part of a trace analysed in
    parts holds other locations' ghosts, whose occurrences are another part's
    (earlc.parts); last_time is then the whole trace's last timestamp.
    context: the analysis of a view runs in its own (analysis/view.py)."""
    from .report import Report

    # context: the analysis of a view of the trace runs in its own (analysis/view.py)
    ctx = context if context is not None else AnalysisContext(trace, threads=threads)
    if ctx.threads > 1:
        # what every property reads first, itself on all threads: built in C
        # (without the GIL) while the catalog is assembled in Python
        with beside(lambda: ctx.states):
            catalog, chosen = selection(properties, plugins, packages, strict)
    else:
        catalog, chosen = selection(properties, plugins, packages, strict)
    evaluation = Evaluation(ctx, strict=strict)
    order = evaluation.expand(ordered(chosen), catalog)
    store = SeverityStore(ctx.n_locations)
    counts = SeverityStore(ctx.n_locations)  # occurrences, for detected properties
    worst: Dict[str, Instances] = {}
    evaluation.run(order, lambda p: _evaluate(p, ctx, store, counts, worst, top, own), progress,
                   threads=ctx.threads)
    # as one thread would have added them, whatever order threads finished in
    names = [p.name for p in order]
    store.put_in_order(names)
    counts.put_in_order(names)
    worst = {n: worst[n] for n in names if n in worst}
    ctx._published.put_in_order(names)
    for s in evaluation.switched_off:
        store.declare(s.name)
    evaluated = [p.name for p in order if p.name not in evaluation.off]
    unanalysed = unanalysed_waits(ctx, evaluated, own, last_time)
    ctx.forget_shared()  # what properties shared during the analysis
    if progress:
        progress("done", len(order), len(order))
    exceeding = exceeding_parents(order, store, evaluation.off)
    return Report(trace, ctx, order, store, worst, counts,
                  switched_off=evaluation.switched_off, exceeding=exceeding,
                  package_problems=catalog.problems, unanalysed=unanalysed)


def selection(properties=None, plugins: Sequence = (), packages: bool = True,
              strict: bool = False):
    """(catalog, chosen): the catalog of the built-ins, the installed packages'
    and the plugins' properties, and the properties an analysis with these
    arguments evaluates (before the ones they expand to for a given trace)."""
    if isinstance(properties, (str, Property)):
        properties = [properties]  # one name, group or property: not its characters
    given = [p for p in properties or () if isinstance(p, Property)]
    catalog = assemble(plugins=list(plugins) + given, packages=packages, strict=strict)
    if properties:
        # named properties (or groups) and plugins given among them: those, with
        # what they need
        names = [p.name if isinstance(p, Property) else p for p in properties]
        chosen = catalog.select(names)
    else:  # optional groups (root causes) only when asked for, or when read
        chosen = catalog.with_needs([p.name for p in catalog.properties if not p.group])
    return catalog, chosen


def is_detected(p: Property) -> bool:
    """Whether p's values come from detect (occurrences), not from the call tree
    (region_class) or from totals."""
    return p.region_class is None and type(p).totals is Property.totals


def detect(p: Property, ctx, published: Published) -> Optional[Instances]:
    """p's occurrences from what it subscribes to, checked and published (None:
    it found nothing).  The whole analysis and the analysis of a window
    (analysis/window.py) both evaluate a property through here."""
    subscribed = published.get(p.subscribes) if p.subscribes else None
    inst = check_instances(p, p.detect(ctx, subscribed), ctx.n_events)
    if inst is None:
        return None
    inst.published_by = p.name
    inst.column_kinds = {**(subscribed.column_kinds if subscribed is not None else {}),
                         **p.column_kinds}
    published[p.name] = inst
    return inst


def _own_cells(cnode, loc, value, own):
    """The cells of own locations (all when own is None)."""
    if own is None:
        return cnode, loc, value
    keep = own[np.asarray(loc, dtype=np.int64)]
    return cnode[keep], loc[keep], value[keep]


def _evaluate(p: Property, ctx, store, counts, worst, top, own=None) -> None:
    """One property's values into the stores (nothing added if it fails)."""
    if p.region_class is not None:
        store.add(p.name, *_own_cells(*_class_time(ctx, p.region_class), own))
        return
    totals = p.totals(ctx)
    if totals is not None:
        store.add(p.name, *_own_cells(*check_totals(p, totals, len(ctx.calltree),
                                                    ctx.n_locations), own))
        return
    inst = detect(p, ctx, ctx._published)
    if inst is None:
        store.declare(p.name)
        return
    if not p.metric:
        return
    inst = ctx.counted(inst)
    if own is not None:  # a part's ghosts' occurrences are other parts'
        inst = inst.select(own[ctx.events.location[inst.where]])
    where_cnode, where_loc = ctx.cnode[inst.where], ctx.events.location[inst.where]
    store.add(p.name, where_cnode, where_loc, inst.severity)
    counts.add(p.name, where_cnode, where_loc, np.ones(len(inst), dtype=np.int64))
    worst[p.name] = inst.select(largest(inst.severity, top, inst.where))
    if isinstance(worst[p.name].columns, Columns):
        worst[p.name].columns.own()  # a few rows: not the columns they were selected from


def exceeding_parents(order: List[Property], store: SeverityStore, off=(),
                      builtins: bool = False) -> Dict[str, ExceedsParent]:
    """Metrics whose value exceeds their parent's in a (call path, location) cell
    (both in the same unit; switched-off ones aside).  A built-in under a
    built-in parent is left to the catalog's own tests unless builtins is set:
    Scalasca's counts charge a Late Receiver to the call that waits (MPI_Waitall)
    and a send to its send call, which a user cannot change."""
    by_name = {p.name: p for p in order}
    out = {}
    n = np.int64(store.n_locations)
    for p in order:
        q = by_name.get(p.parent)
        if not p.metric or q is None or q.unit != p.unit or p.name in off or q.name in off:
            continue
        if not builtins and p.source == q.source == BUILTIN:
            continue
        c, l, v = store.table(p.name)
        if not len(c):
            continue
        pc, pl, pv = store.table(q.name)
        key, pkey = c * n + l, pc * n + pl  # both sorted
        pos = np.searchsorted(pkey, key)
        hit = (pos < len(pkey)) & (pkey[np.minimum(pos, max(len(pkey) - 1, 0))] == key) \
            if len(pkey) else np.zeros(len(key), dtype=bool)
        parent_v = np.zeros(len(key), dtype=np.int64)
        parent_v[hit] = pv[pos[hit]]
        excess = v - parent_v
        bad = excess > 0
        if bad.any():
            i = int(np.argmax(excess))
            out[p.name] = ExceedsParent(q.name, int(bad.sum()), int(c[i]), int(l[i]),
                                        int(v[i]), int(parent_v[i]))
    return out


def largest(values: np.ndarray, k: int, events: Optional[np.ndarray] = None) -> np.ndarray:
    """Indices of the k largest values, largest first, ties in the order of
    `events` (the occurrences' events: the trace's order, whatever order a
    property lists them in and however the trace was split into parts), then
    in index order; without sorting all of them."""
    n = len(values)
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.int64)
    if events is None:
        events = np.zeros(n, dtype=np.int64)
    if n <= 4 * k:
        return np.lexsort((np.arange(n), events, -values))[:k]
    threshold = values[np.argpartition(-values, k - 1)[:k]].min()
    cand = np.nonzero(values >= threshold)[0]
    return cand[np.lexsort((cand, events[cand], -values[cand]))][:k]


def _class_time(ctx: AnalysisContext, classes):
    """Exclusive time of the call paths whose region is in one of classes."""
    ct = ctx.calltree
    cnode = ct.row_cnode.astype(np.int64)
    if classes == "*" or classes == ("*",):
        mask = np.ones(len(cnode), dtype=bool)
    else:
        codes = np.array([rc.CLASS_CODE[c] for c in classes], dtype=np.int8)
        region = ct.region[cnode].astype(np.int64)
        spare = len(ctx.region_class) - 1
        region[region >= spare] = spare
        mask = np.isin(ctx.region_class[region], codes)
    return cnode[mask], ct.row_location[mask], ct.row_time[mask].astype(np.int64)
