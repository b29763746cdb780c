"""The compound events published in one analysis, what each property may read of
them, and how long their instances are kept.

What a property sees.  While a property's `detect`, `totals` or `expand` runs,
`ctx.published` is a read-only view of the instances it declares: the one it
`subscribes` to and those it names in `reads`.  Reading any other name raises
UndeclaredRead, naming the property and the name.  Without that rule a property
could read what happens to have been published before it: the same property
would then give one value in the whole analysis and another when it is asked
for alone (the engine evaluates only what the selected properties declare).
The engine evaluates every declared input, whatever was selected, so a
declared read always finds its instances (unless they have none).

How long instances are kept.  An instance is kept while a later property
subscribes to it or reads it; after the last of them the analysis lets it go,
because on a large trace the published events are among the largest arrays
alive (the matched messages of a 10 M event trace take tens of megabytes) and
the root causes run after the whole catalog.  Nothing is lost: reading an
instance that was let go (`report.instances(...)` after the analysis) detects
it again, from what it declares, with the same result.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .._core import Error
from .property import Columns, Instances, Property


class UndeclaredRead(Error, LookupError):
    """A property read published instances it does not declare (`subscribes`,
    `reads`).  Not a KeyError: `ctx.published.get(name)` must not turn it into a
    silent None."""

    def __init__(self, reader: Property, name: str):
        super().__init__(reader.name, name)
        self.reader, self.name = reader.name, name

    def __str__(self) -> str:
        return ("property %s reads %r from ctx.published without declaring it; declare it "
                "(reads = (%r,)) so that it is evaluated first, whatever was selected"
                % (self.reader, self.name, self.name))


class Published(MutableMapping):
    """Instances by the name of the property that published them: those kept,
    and those let go that can be detected again.  The engine's store; properties
    see it through `visible()`."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._kept: Dict[str, Instances] = {}
        #: instances let go: the property and how to detect them again on a read
        self._let_go: Dict[str, Tuple[Property, Callable[[], Optional[Instances]]]] = {}
        self._readers: List["Declared"] = []    # the property evaluated now, innermost last

    def __getitem__(self, name: str) -> Instances:
        inst = self._kept.get(name)
        if inst is not None:
            return inst
        gone = self._let_go.get(name)
        if gone is None:
            raise KeyError(name)
        p, again = gone
        with self.reading(p):
            inst = again()  # publishes it here again
        if inst is None:  # it found something the first time: it does again
            raise KeyError(name)
        return inst

    def __setitem__(self, name: str, inst: Instances) -> None:
        self._let_go.pop(name, None)
        self._kept[name] = inst

    def __delitem__(self, name: str) -> None:
        if name not in self._kept and name not in self._let_go:
            raise KeyError(name)
        self._kept.pop(name, None)
        self._let_go.pop(name, None)

    def __contains__(self, name) -> bool:
        return name in self._kept or name in self._let_go

    def __iter__(self) -> Iterator[str]:
        # the names as they are now: reading one that was let go publishes it again
        return iter(list(self._kept) + [n for n in self._let_go if n not in self._kept])

    def __len__(self) -> int:
        return len(self._kept) + sum(1 for n in self._let_go if n not in self._kept)

    # -- what the property evaluated now sees ------------------------------------------
    @contextmanager
    def reading(self, p: Property):
        """While the block runs, `visible()` is p's view (nested: a let-go
        instance detected again inside another property's evaluation)."""
        self._readers.append(Declared(self, p))
        try:
            yield
        finally:
            self._readers.pop()

    def visible(self) -> Mapping:
        """What `ctx.published` shows: the declared view of the property being
        evaluated, else (between and after evaluations) the whole store."""
        return self._readers[-1] if self._readers else self

    # -- keeping -------------------------------------------------------------------------
    def let_go(self, p: Property, again: Callable[[], Optional[Instances]]) -> None:
        """Drop p's instances; a later read calls again() to detect them again
        (the engine's detection, which publishes them here).  Instances kept
        that select from p's (a subscriber's refinement shares its columns) take
        their own copy of the rows they select first."""
        inst = self._kept.pop(p.name, None)
        if inst is None:
            return
        self._let_go[p.name] = (p, again)
        for other in self._kept.values():
            if isinstance(other.columns, Columns) and other.columns.selects_from(inst.columns):
                other.columns.own()

    def is_kept(self, name: str) -> bool:
        return name in self._kept


class Declared(Mapping):
    """The published instances one property declares, read-only.  Any other name
    raises UndeclaredRead, also through `in` and `get`, so that no property can
    find out what else happened to be evaluated before it."""

    def __init__(self, store: Published, p: Property):
        self._store, self._p = store, p
        self._names = tuple(uses(p))

    def _check(self, name) -> None:
        if name not in self._names:
            raise UndeclaredRead(self._p, name)

    def __getitem__(self, name: str) -> Instances:
        self._check(name)
        return self._store[name]

    def __contains__(self, name) -> bool:
        self._check(name)
        return name in self._store

    def get(self, name, default=None):
        self._check(name)
        return self._store.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter([n for n in self._names if n in self._store])

    def __len__(self) -> int:
        return sum(1 for n in self._names if n in self._store)

    def __repr__(self) -> str:
        return "<published instances %s may read: %s>" % (self._p.name,
                                                           ", ".join(self._names) or "none")


def uses(p: Property) -> List[str]:
    """The published events p reads: the one it subscribes to and its `reads`."""
    return ([p.subscribes] if p.subscribes else []) + list(p.reads)


def let_go_after(order: Sequence[Property]) -> List[List[Property]]:
    """Per position in order, the properties whose instances no later property
    uses: they can be let go once the property at that position is done."""
    last = {p.name: k for k, p in enumerate(order)}
    for k, p in enumerate(order):
        for name in uses(p):
            if name in last:
                last[name] = max(last[name], k)
    out: List[List[Property]] = [[] for _ in order]
    for p in order:
        out[last[p.name]].append(p)
    return out
