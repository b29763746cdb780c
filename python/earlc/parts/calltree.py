"""The whole trace's call tree, from the parts' own.

A part's call tree numbers its call paths in the order of the part's events,
ghosts included (a ghost's call path in the part is not its real one: its
location's other events are elsewhere).  The whole trace's call tree numbers
every call path in the order of its first event in the whole trace, with the
program's node (PROGRAM_BEGIN/END, CallTree._add_program) last.  Each part
knows the first own event of each call path it visits, by (timestamp,
location, position in the whole trace); the earliest over the parts orders
them.  Call paths are compared by their regions from the root (`path_keys`),
never by a part's numbers.

The merged report (merge.py) builds its call tree so from the parts'
findings; the root causes (properties/rootcause/) number call paths so before
they add up times per call path, so that every sum runs in the order of the
single-process analysis (`global_calltree`, collective).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np


def path_keys(ct) -> List[Optional[tuple]]:
    """Per cnode of a part's call tree, its regions from the root (None for
    the program's node; the program is not part of the key)."""
    parent, region = ct.parent, ct.region
    program = set(ct.extra_names)
    keys: List[Optional[tuple]] = [None] * len(parent)
    for c in range(len(parent)):
        chain = []
        x = c
        while x >= 0 and x not in program and keys[x] is None:
            chain.append(x)
            x = int(parent[x])
        base = () if x < 0 or x in program else keys[x]
        for y in reversed(chain):
            base = base + (int(region[y]),)
            keys[y] = base
    for x in program:
        keys[x] = None
    return keys


def first_visits(part, ct, keys=None):
    """The call paths this part's own events visit (local cnodes, ascending)
    and the first own event of each: whose keys (timestamp, location, position)
    order the whole trace's call tree.  Kept on the part for its call tree
    (the root causes need it first, the merge again)."""
    cached = getattr(part, "_first_visits", None)
    if cached is not None and cached[0] is ct:
        return cached[1]
    ev = part.trace.events
    # location by location: the temporaries are of one location's size, not the part's
    first = np.full(len(ct.parent) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    for l in np.nonzero(part.own)[0].tolist():
        ids = ev.of_location(l)
        cn = ct.event_cnode[ids]
        placed = cn >= 0
        np.minimum.at(first, cn[placed], ids[placed].astype(np.int64))
    cnodes = np.nonzero(first < np.iinfo(np.int64).max)[0]
    out = (cnodes, first[cnodes])
    part._first_visits = (ct, out)
    return out


def program_of(ct, keys):
    """(the smallest location of the program's node, its name) and the keys of
    the paths under it, or (None, set()) without a program's node."""
    program = sorted(ct.extra_names)
    if not program:
        return None, set()
    pc = program[0]
    roots = {keys[c] for c in np.nonzero(ct.parent == pc)[0].tolist()}
    rows = ct.row_location[ct.row_cnode == pc]
    return (int(rows.min()) if len(rows) else -1, ct.extra_names[pc]), roots


@dataclass
class Ordered:
    """The whole trace's call tree: per call path its parent and region (the
    program's node last, region 0xFFFFFFFF), its id by key, the program's id
    (None without one) and name."""
    parents: np.ndarray
    regions: np.ndarray
    ids: Dict[tuple, int]
    program: Optional[int]
    extra: Dict[int, str]

    def local_to_global(self, keys: Sequence[Optional[tuple]]) -> np.ndarray:
        """Per local cnode of a part (its path_keys), the whole trace's id; -1
        for a path no part's own events visit."""
        program = self.program if self.program is not None else -1
        return np.array([self.ids.get(k, -1) if k is not None else program for k in keys],
                        dtype=np.int64)


def order_paths(visits) -> Ordered:
    """The whole trace's call tree from each part's (keys, visited cnodes,
    first event keys (times, locations, positions), program, program roots)."""
    first: Dict[tuple, Tuple[int, int, int]] = {}
    for keys, cnodes, (t, l, pos), _, _ in visits:
        for c, a, b, d in zip(np.asarray(cnodes).tolist(), np.asarray(t).tolist(),
                              np.asarray(l).tolist(), np.asarray(pos).tolist()):
            key = keys[c]
            if key is None:
                continue
            k = (a, b, d)
            if key not in first or k < first[key]:
                first[key] = k
    ordered = sorted(first, key=lambda k: first[k])
    ids = {k: i for i, k in enumerate(ordered)}
    parents = np.array([ids[k[:-1]] if len(k) > 1 else -1 for k in ordered], dtype=np.int32)
    regions = np.array([k[-1] for k in ordered], dtype=np.uint32)
    programs = [v[3] for v in visits if v[3] is not None]
    program_id, extra = None, {}
    if programs:
        program_id = len(ordered)
        under = set().union(*(v[4] for v in visits))
        for k in under:
            if k is not None and k in ids:
                parents[ids[k]] = program_id
        parents = np.append(parents, np.int32(-1))
        regions = np.append(regions, np.uint32(0xFFFFFFFF))
        extra[program_id] = min(programs)[1]
    return Ordered(parents, regions, ids, program_id, extra)


def global_calltree(part, ct) -> Tuple[Ordered, np.ndarray]:
    """Collective: the whole trace's call tree, and per cnode of this part's
    call tree `ct` its id there (-1 for the paths only ghosts visit here)."""
    keys = path_keys(ct)
    cnodes, first = first_visits(part, ct, keys)
    program, roots = program_of(ct, keys)
    mine = ([keys[c] for c in cnodes.tolist()], part.keys(first), program, roots)
    every = part.exchange.allgather(mine)
    visits = []
    for few_keys, firsts, prog, under in every:
        # the keys travel for the visited paths only: index them 0..n-1
        visits.append((few_keys, np.arange(len(few_keys)), firsts, prog, under))
    ordered = order_paths(visits)
    return ordered, ordered.local_to_global(keys)


__all__ = ["path_keys", "first_visits", "program_of", "order_paths", "global_calltree",
           "Ordered"]
