"""The compound events published in one analysis (`ctx.published`), and how long
their instances are kept.

An instance is kept while a later property subscribes to it or names it in
`reads`; after the last of them the analysis lets it go, because on a large trace
the published events are among the largest arrays alive (the matched messages of
a 10 M event trace take tens of megabytes) and the root causes run after the whole
catalog.  Nothing is lost: reading an instance that was let go (a plugin that
reads `ctx.published` without declaring it, `report.instances(...)` after the
analysis) detects it again, from what it subscribes to, with the same result.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Dict, Iterator, List, Sequence

from .property import Columns, Instances, Property


class Published(MutableMapping):
    """Instances by the name of the property that published them: those kept,
    and those let go that can be detected again."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._kept: Dict[str, Instances] = {}
        self._let_go: Dict[str, Property] = {}  # detected again on the next read

    def __getitem__(self, name: str) -> Instances:
        inst = self._kept.get(name)
        if inst is not None:
            return inst
        p = self._let_go.get(name)
        if p is None:
            raise KeyError(name)
        from .engine import detect  # the engine imports this module

        inst = detect(p, self._ctx, self)  # publishes it here again
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

    def let_go(self, p: Property) -> None:
        """Drop p's instances; a later read detects them again.  Instances kept
        that select from p's (a subscriber's refinement shares its columns) take
        their own copy of the rows they select first."""
        inst = self._kept.pop(p.name, None)
        if inst is None:
            return
        self._let_go[p.name] = p
        for other in self._kept.values():
            if isinstance(other.columns, Columns) and other.columns.selects_from(inst.columns):
                other.columns.own()

    def is_kept(self, name: str) -> bool:
        return name in self._kept


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
