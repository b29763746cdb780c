"""The detector: evaluates a property catalog over one trace.

Properties run in an order where every publisher precedes its subscribers; each
property's occurrences are published once and its severities are added per
(call path, location) in the SeverityStore.  Grouping nodes of the metric tree
take the exclusive time of their region classes from the call tree.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from . import regions as rc
from .context import AnalysisContext
from .property import Instances, Property, check_catalog
from .severity import SeverityStore


def builtin_properties() -> List[Property]:
    from ..properties import catalog

    return catalog()


def select(catalog: List[Property], names: Sequence[str]) -> List[Property]:
    """The named properties with everything they need: their ancestors in the
    metric tree and their publishers.  A name may also be a group of optional
    properties ("root_cause") or "all", every property of the catalog."""
    by_name = {p.name: p for p in catalog}
    groups = {"all": [p.name for p in catalog]}
    for p in catalog:
        if p.group:
            groups.setdefault(p.group, []).append(p.name)
    names = [m for n in names for m in groups.get(n, [n])]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError("unknown properties: %s (known: %s)"
                         % (", ".join(unknown), ", ".join(sorted(by_name))))
    keep = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in keep:
            continue
        keep.add(n)
        p = by_name[n]
        # a dependency outside the catalog is reported by check_catalog
        todo += [d for d in (p.parent, p.subscribes) if d and d in by_name]
    return [p for p in catalog if p.name in keep]


def run(trace, properties: Optional[Sequence[Union[Property, str]]] = None, top: int = 10,
        progress=None):
    from .report import Report

    catalog = builtin_properties()
    if not properties:  # optional groups (root causes) only when asked for
        catalog = [p for p in catalog if not p.group]
    else:
        # plugins replace built-ins of the same name; the analysis keeps what the
        # named properties and plugins need
        plugins = [p for p in properties if isinstance(p, Property)]
        replaced = {p.name for p in plugins}
        wanted = [p for p in properties if isinstance(p, str)] + [p.name for p in plugins]
        catalog = select([p for p in catalog if p.name not in replaced] + plugins, wanted)
    order = check_catalog(catalog)
    ctx = AnalysisContext(trace)
    extra = [q for p in order for q in p.expand(ctx)]  # metrics the trace defines
    if extra:
        order = check_catalog(order + extra)
    store = SeverityStore(ctx.n_locations)
    counts = SeverityStore(ctx.n_locations)  # occurrences, for detected properties
    published: Dict[str, Instances] = ctx.published  # readable by every later property
    worst: Dict[str, Instances] = {}
    for k, p in enumerate(order):
        if progress:
            progress("analysing", k, len(order))
        if p.region_class is not None:
            cnode, loc, value = _class_time(ctx, p.region_class)
            store.add(p.name, cnode, loc, value)
            continue
        totals = p.totals(ctx)
        if totals is not None:
            store.add(p.name, *totals)
            continue
        inst = p.detect(ctx, published.get(p.subscribes) if p.subscribes else None)
        if inst is None:
            store.declare(p.name)
            continue
        published[p.name] = inst
        if not p.metric:
            continue
        where_cnode, where_loc = ctx.cnode[inst.where], ctx.events.location[inst.where]
        store.add(p.name, where_cnode, where_loc, inst.severity)
        counts.add(p.name, where_cnode, where_loc, np.ones(len(inst), dtype=np.int64))
        worst[p.name] = inst.select(largest(inst.severity, top))
    if progress:
        progress("done", len(order), len(order))
    return Report(trace, ctx, order, store, worst, counts)


def largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first, ties in index order: the
    first k of a stable descending sort, without sorting all of them."""
    n = len(values)
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.int64)
    if n <= 4 * k:
        return np.argsort(-values, kind="stable")[:k]
    threshold = values[np.argpartition(-values, k - 1)[:k]].min()
    above = np.nonzero(values > threshold)[0]
    at = np.nonzero(values == threshold)[0][:k - len(above)]
    cand = np.concatenate((above, at))
    return cand[np.lexsort((cand, -values[cand]))]


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
