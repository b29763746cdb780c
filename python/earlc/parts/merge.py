"""The analysis of a trace in parts, and its merged report.

Every part runs the whole catalog, unchanged, on its own events and ghosts
(engine.run with `own`: only the values and worst occurrences of its own
locations are kept: a ghost's occurrences are its owner's).  What a part
found is then said in terms that do not depend on the partition, and merged:

- call paths by their regions from the root, not by the part's cnode ids; the
  merged call tree numbers them as the whole trace's does, in the order of
  their first event (the earliest over the parts, compared by (timestamp,
  location, position)), with the program's node last;
- events by the whole trace's ids (Part.global_ids), collective instances by
  the whole trace's numbering (in the order of their first member);
- values as exact integer sums per (call path, location): each cell belongs
  to one part, the part of its location;
- the worst occurrences as the top of all parts' own worst, ties in event
  order, as the whole analysis orders them;
- warnings of the parts' own locations, in the whole trace's order.

Every part gets the merged report (an allgather of the parts' findings, then
the same merge everywhere), so a script under mpiexec can use it on any rank;
rank 0 writes the outputs.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from ..analysis import engine
from ..analysis.engine import ExceedsParent, SwitchedOff, exceeding_parents
from ..analysis.property import Instances
from ..analysis.report import Report
from ..sums import sum_by_key
from .calltree import first_visits, order_paths, path_keys, program_of
from .part import Part, collectives_for

#: the program's node of the call tree (CallTree._add_program), in path keys
PROGRAM = ("program",)

#: column kinds of published instances (Property.column_kinds): the event ids
#: of constituents are the default
EVENT, TICKS, LOCATION, INSTANCE, VALUE = "event", "ticks", "location", "instance", "value"


def column_kind(inst: Instances, name: str, values: np.ndarray) -> str:
    """What an instance column holds: its publishers' declaration
    (Property.column_kinds), else by convention a value (booleans), ticks (a
    name ending in _time), or event ids."""
    declared = getattr(inst, "column_kinds", None) or {}
    if name in declared:
        return declared[name]
    if values.dtype == bool or values.dtype.kind not in "iu":
        return VALUE
    if name.endswith("_time"):
        return TICKS
    return EVENT


def analyze(part: Part, properties=None, top: int = 10, progress=None, plugins=(),
            strict: bool = False, packages: bool = True, threads: int = 1) -> Report:
    """Collective: the report of the whole trace, analysed in parts."""
    ex = part.exchange
    if part.collectives != "all" and \
            collectives_for(properties, plugins, packages, strict) == "all":
        # the same on every part: no part goes on alone
        raise ValueError("this part holds the collectives as representatives "
                         "(earlc.open(..., collectives=%r)), which the root causes and "
                         "plugins cannot analyse: open it with collectives='all'"
                         % part.collectives)
    error, local = None, None
    try:
        local = engine.run(part.trace, properties, top=top,
                           progress=progress if ex.is_root else None, plugins=plugins,
                           strict=strict, packages=packages, own=part.own,
                           last_time=part.whole.get("last_time"), threads=threads)
    except Exception as exc:  # every part must learn of it
        error = exc
    ex.agree(error)
    error, piece = None, None
    try:
        piece = _findings(local, part, top)
    except Exception as exc:
        error = exc
    # the whole trace's ids are a collective step: every part takes part
    ids = piece.pop("ids") if piece else np.empty(0, np.int64)
    instances = piece.pop("instances") if piece else np.empty(0, np.int64)
    gids = part.global_ids(ids)
    ginst = part.global_instances(instances)
    ex.agree(error)
    _globalize(piece, gids, ginst)
    pieces = ex.allgather(piece)
    return merge(pieces, part, local, top)


# -- what one part found -------------------------------------------------------------------

def _findings(report: Report, part: Part, top: int) -> dict:
    ctx = report._ctx
    ct = ctx.calltree
    trace = part.trace
    ev = trace.events
    own_loc = part.own
    keys = path_keys(ct)
    # the first own event of each call path: whose order numbers the merged tree
    cnodes, first_ids = first_visits(part, ct, keys)
    program_info, program_roots = program_of(ct, keys)
    tables = {p.name: report._tables[p.name] for p in report.properties}
    counts = dict(report._counts)
    worst, ids, insts = {}, [np.asarray(first_ids, np.int64)], []
    for name, inst in report.worst.items():
        cols = {}
        for c, values in inst.columns.items():
            values = np.asarray(values)
            kind = column_kind(inst, c, values)
            if kind == EVENT:
                ids.append(values.astype(np.int64))
            elif kind == INSTANCE:
                insts.append(values.astype(np.int64))
            cols[c] = (kind, values)
        where = np.asarray(inst.where, dtype=np.int64)
        ids.append(where)
        worst[name] = {"where": where, "severity": np.asarray(inst.severity, np.int64),
                       "columns": cols, "time": ev.time[where].astype(np.int64),
                       "location": ev.location[where].astype(np.int64),
                       "cnode": ctx.cnode[where].astype(np.int64)}
    states = ctx.states.warnings
    s_details = [d for d in states.details if 0 <= d[1] < len(own_loc) and own_loc[d[1]]]
    ids.append(np.array([d[2] for d in s_details], dtype=np.int64))
    t_details = [d for d in trace.warnings.details if d[0] == "other_record" or
                 (0 <= d[1] < len(own_loc) and own_loc[d[1]])]
    ids.append(np.array([d[3] for d in t_details], dtype=np.int64))
    unanalysed = list(report.unanalysed)
    ids.append(np.array([u.event for u in unanalysed], dtype=np.int64))
    #: call paths of the events a merged report names beyond the worst occurrences
    paths = [report.callpath_of(u.event) for u in unanalysed]
    stopped = None
    if any(loc.incomplete is not None for loc in trace.locations):
        from ..analysis.stopped import location_stops

        stopped = location_stops(trace, report.callpath_of, np.nonzero(own_loc)[0])
    return {
        "keys": keys, "cnodes": cnodes, "first_keys": part.keys(first_ids),
        "program": program_info, "program_roots": program_roots,
        "tables": tables, "counts": counts, "worst": worst,
        "states_counts": dict(states.counts), "states_details": s_details,
        "trace_counts": {k: v for k, v in trace.warnings.counts.items()},
        "trace_details": t_details, "other_records": dict(trace.warnings.other_records),
        "switched_off": list(report.switched_off),
        "package_problems": list(report.package_problems),
        "stopped": stopped,
        "unanalysed": unanalysed, "unanalysed_paths": paths,
        "context_warnings": list(getattr(ctx, "analysis_warnings", ())),
        "ids": np.concatenate(ids) if ids else np.empty(0, np.int64),
        "instances": np.concatenate(insts) if insts else np.empty(0, np.int64),
    }


def _globalize(piece: Optional[dict], gids: np.ndarray, ginst: np.ndarray) -> None:
    """Replace the part's event ids and instance numbers by the whole trace's,
    in the order _findings listed them."""
    if piece is None:
        return
    at, iat = [0], [0]

    def take(n):
        out = gids[at[0]:at[0] + n]
        at[0] += n
        return out

    def take_instances(n):
        out = ginst[iat[0]:iat[0] + n]
        iat[0] += n
        return out

    take(len(piece["cnodes"]))  # the first events: only their keys travel
    for name, w in piece["worst"].items():
        cols = {}
        for c, (kind, values) in w["columns"].items():
            if kind == EVENT:
                cols[c] = take(len(values))
            elif kind == INSTANCE:
                cols[c] = take_instances(len(values))
            else:
                cols[c] = values
        w["columns"] = cols
        w["where"] = take(len(w["where"]))
    g = take(len(piece["states_details"]))
    piece["states_details"] = [(d[0], d[1], int(e), d[3])
                               for d, e in zip(piece["states_details"], g)]
    g = take(len(piece["trace_details"]))
    piece["trace_details"] = [(d[0], d[1], d[2], int(e) if d[3] >= 0 else d[3], d[4])
                              for d, e in zip(piece["trace_details"], g)]
    g = take(len(piece["unanalysed"]))
    for u, e in zip(piece["unanalysed"], g):
        u.event = int(e)


# -- the merge ------------------------------------------------------------------------------

def merge(pieces: List[dict], part: Part, local: Report, top: int) -> "MergedReport":
    # the call tree: every path some part visits, in the order of its first event
    tree = order_paths([(p["keys"], p["cnodes"], p["first_keys"], p["program"],
                         p["program_roots"]) for p in pieces])
    parents, regions, extra = tree.parents, tree.regions, tree.extra
    maps = [tree.local_to_global(p["keys"]) for p in pieces]
    n_loc = len(part.trace.locations)

    def merged_tables(field):
        out = {}
        names = []
        for piece in pieces:
            for name in piece[field]:
                if name not in names:
                    names.append(name)
        for name in names:
            keys, vals = [], []
            for piece, m in zip(pieces, maps):
                if name not in piece[field]:
                    continue
                c, l, v = piece[field][name]
                keys.append(m[np.asarray(c, dtype=np.int64)] * n_loc + l)
                vals.append(np.asarray(v, dtype=np.int64))
            k = np.concatenate(keys) if keys else np.empty(0, np.int64)
            v = np.concatenate(vals) if vals else np.empty(0, np.int64)
            k, v = sum_by_key(k, v)
            nz = v != 0
            out[name] = (k[nz] // n_loc, k[nz] % n_loc, v[nz])
        return out

    tables, counts = merged_tables("tables"), merged_tables("counts")
    worst, places = {}, {}
    for name in local.worst:
        rows = [(piece["worst"][name], m) for piece, m in zip(pieces, maps)
                if name in piece["worst"]]
        where = np.concatenate([w["where"] for w, _ in rows])
        severity = np.concatenate([w["severity"] for w, _ in rows])
        order = np.lexsort((where, -severity))[:top]
        cols = {c: np.concatenate([w["columns"][c] for w, _ in rows])[order]
                for c in rows[0][0]["columns"]}
        worst[name] = Instances(where[order], severity[order], cols)
        worst[name].published_by = name
        cnode = np.concatenate([m[w["cnode"]] if len(w["cnode"]) else w["cnode"]
                                for w, m in rows])
        cnode = np.where(np.concatenate([w["cnode"] for w, _ in rows]) >= 0, cnode, -1)
        places[name] = (np.concatenate([w["time"] for w, _ in rows])[order],
                        np.concatenate([w["location"] for w, _ in rows])[order],
                        cnode[order])
    merged = MergedReport(pieces, part, local, tables, counts, worst, places, parents, regions,
                          extra)
    if part.exchange is not None:  # for the page (parts/page.py): this part's analysis
        merged._local = local
        merged._cnode_map = maps[part.exchange.rank]
    else:  # parts in turn: the merged call tree, for the page of any partition
        merged._tree = tree
    return merged


class PartsCatalog:
    """What the merge needs of the parts' own reports when they are not all
    alive at once (parts analysed in turn, inturn.py): the properties, the
    packages that failed to load, and which properties kept worst occurrences
    (in the properties' order)."""

    def __init__(self, report: Report):
        self.properties = report.properties
        self.package_problems = list(report.package_problems)
        self._names: List[str] = []

    def add(self, report: Report) -> None:
        """A part's report: its worst occurrences' names, in evaluation order,
        merged into those of the parts before (a name new here goes right after
        the name before it in this part's order)."""
        at = 0
        for name in report.worst:
            if name in self._names:
                at = self._names.index(name) + 1
            else:
                self._names.insert(at, name)
                at += 1

    @property
    def worst(self) -> Dict[str, None]:
        return dict.fromkeys(self._names)


class _Store:
    """The merged tables, as engine.exceeding_parents reads a SeverityStore."""

    def __init__(self, tables, n_locations):
        self._tables, self.n_locations = tables, n_locations

    def table(self, name):
        e = np.empty(0, np.int64)
        return self._tables.get(name, (e, e, e))


class PartedTrace:
    """The trace of a report made in parts: its definitions (every part has
    them all) and the whole trace's event count and times; the events
    themselves are in the parts."""

    def __init__(self, trace, events: int, start: int, duration: int, in_turn: bool = False):
        self._trace = trace
        self._in_turn = in_turn
        self._events, self._start, self._duration = events, start, duration

    def __len__(self) -> int:
        return self._events

    @property
    def start_time(self) -> int:
        return self._start

    @property
    def duration_ticks(self) -> int:
        return self._duration

    @property
    def duration(self) -> float:
        res = self._trace.timer_resolution
        return self._duration / res if res else 0.0

    @property
    def events(self):
        raise RuntimeError("this report was made in parts: the trace's events are spread over "
                           "%s; open the trace (earlc.open) for its events" % self._where)

    @property
    def _where(self) -> str:
        return "the parts analysed one after another" if self._in_turn else "the MPI processes"

    def __getattr__(self, name):
        return getattr(self._trace, name)


class MergedReport(Report):
    """The report of a trace analysed in parts (see the module)."""

    def __init__(self, pieces, part: Part, local: Report, tables, counts, worst, places,
                 parents, regions, extra_names):
        trace = part.trace
        whole = part.whole
        events = whole["events"]
        start = whole["first_time"] if whole["first_time"] is not None else trace.clock_offset
        duration = (whole["last_time"] - start if whole["last_time"] is not None
                    else trace._defs.clock_length)
        self.trace = PartedTrace(trace, events, start, duration,
                                 in_turn=getattr(part, "in_turn", False))
        self.part = part
        self.switched_off = _union_switched_off(pieces)
        self.package_problems = list(local.package_problems)
        self.properties = local.properties
        self._by_name = {p.name: p for p in self.properties}
        self._tables = {p.name: tables.get(p.name, (np.empty(0, np.int64),) * 3)
                        for p in self.properties}
        self._counts = {name: counts[name] for name in counts if name in self._by_name}
        self.worst = worst
        self._places = places
        self._parents, self._regions, self._extra = parents, regions, extra_names
        self.callpaths = self._paths(trace)
        self.resolution = trace.timer_resolution
        off = {s.name for s in self.switched_off}
        self.exceeding = exceeding_parents(local.properties, _Store(self._tables, len(trace.locations)), off)
        self._pieces = pieces
        self._stop = _merge_stops(pieces, trace, start)
        self.unanalysed = _merge_unanalysed(pieces, self.resolution)

    def _paths(self, trace) -> List[str]:
        """Region names from the root, '/' between them (the program's name for
        its node)."""
        def name(c):
            extra = self._extra.get(c)
            if extra is not None:
                return extra
            region = trace.regions.get(int(self._regions[c]))
            return region.name if region else "?"

        out: List[Optional[str]] = [None] * len(self._parents)
        for c in range(len(out)):
            chain, x = [], c
            while x >= 0 and out[x] is None:
                chain.append(x)
                x = int(self._parents[x])
            base = out[x] if x >= 0 else None
            for y in reversed(chain):
                base = name(y) if base is None else base + "/" + name(y)
                out[y] = base
        return out

    def _context_warnings(self):
        """What the properties said with ctx.warn, in the parts' order; a warning
        every part says about the whole trace, once."""
        out = []
        for p in self._pieces:
            for w in p["context_warnings"]:
                if w not in out:
                    out.append(w)
        return out

    def callpath_of(self, event: int) -> str:
        for p in self._pieces:
            for u, path in zip(p["unanalysed"], p["unanalysed_paths"]):
                if u.event == event:
                    return path
        raise RuntimeError("this report was made in parts: event %d's call path is in the part "
                           "that holds it (Report.occurrence gives the worst occurrences')"
                           % event)

    def occurrence(self, metric: str, k: int):
        time, location, cnode = self._places[metric]
        return (int(self.worst[metric].where[k]), int(time[k]), int(location[k]),
                int(cnode[k]))

    @property
    def callpath_parents(self) -> np.ndarray:
        return self._parents

    @property
    def callpath_regions(self) -> np.ndarray:
        return self._regions

    @property
    def trace_warnings(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for p in self._pieces:
            for k, v in p["trace_counts"].items():
                if v and k != "other_record":
                    out[k] = out.get(k, 0) + v
        for p in self._pieces:
            for k, v in p["states_counts"].items():
                if v:
                    out[k] = out.get(k, 0) + v
        return out

    def _trace_warning_details(self) -> List[dict]:
        """The parts' own warnings, as the whole trace lists them: reading
        warnings location by location, the EARL layer's in event order, the
        first EARL_WARNING_DETAIL_MAX of each code."""
        out = []
        limit = 100
        per_code: Dict[str, int] = {}
        trace_details = sorted((d for p in self._pieces for d in p["trace_details"]
                                if d[0] != "other_record"), key=lambda d: (d[1], d[2]))
        for c, l, pos, e, text in trace_details:
            if per_code.get(c, 0) < limit:
                per_code[c] = per_code.get(c, 0) + 1
                out.append({"code": c, "location": l, "event": e, "detail": text})
        per_code = {}
        for c, l, e, text in sorted((d for p in self._pieces for d in p["states_details"]),
                                    key=lambda d: d[2]):
            if per_code.get(c, 0) < limit:
                per_code[c] = per_code.get(c, 0) + 1
                out.append({"code": c, "location": l, "event": e, "detail": text})
        return out

    @property
    def stopped(self):
        return self._stop

    def to_html(self, path=None, top: int = 5, rows: int = 5, pictures: bool = True,
                matches=None, timeline: bool = True):
        """Collective under MPI (every process calls it): the page the whole
        trace's report gives, written (or returned) by the first process; the
        others return None (parts/page.py).  Of parts analysed one after
        another: the same page, from the parts in turn (parts/page_inturn.py)."""
        if getattr(self, "_local", None) is None:  # parts one after another
            from .page_inturn import write_page_in_turn

            return write_page_in_turn(self, path, top=top, rows=rows, pictures=pictures,
                                      matches=matches, timeline=timeline)
        from .page import write_page

        return write_page(self, path, top=top, rows=rows, pictures=pictures, matches=matches,
                          timeline=timeline)

    def instances(self, metric: str):
        raise RuntimeError("this report was made in parts: every occurrence of %s is in the part "
                           "of its location; the report keeps the worst (report.worst)" % metric)

    def __repr__(self) -> str:
        return "<earlc.Report %s: %d metrics, time %.6f s, in %d parts>" % (
            self.trace.path, len(self.properties), self.seconds(self.total_time),
            self.part.partition.parts)


def _union_switched_off(pieces) -> List[SwitchedOff]:
    out, seen = [], set()
    for p in pieces:
        for s in p["switched_off"]:
            if s.name not in seen:
                seen.add(s.name)
                out.append(s)
    return out


def _merge_unanalysed(pieces, resolution: int):
    """The parts' uncovered waiting calls, kind by kind in the checks' order: the
    counts and times added, the first call the earliest of all."""
    from ..analysis.coverage import CHECKS, Unanalysed, describe

    out = []
    for check in CHECKS:
        found = [u for p in pieces for u in p["unanalysed"] if u.code == check.code]
        if not found:
            continue
        first = min(found, key=lambda u: u.event)
        calls, ticks = sum(u.calls for u in found), sum(u.ticks for u in found)
        out.append(Unanalysed(check.code, calls, ticks, first.event, first.location,
                              first.properties, describe(check.code, calls, ticks,
                                                         first.properties, resolution)))
    return out


def _merge_stops(pieces, trace, start: int):
    entries = [e for p in pieces if p["stopped"] for e in p["stopped"]]
    if not entries:
        return None
    from ..analysis.stopped import group_stops

    entries.sort(key=lambda e: e["location"])
    return group_stops(trace, entries)


__all__ = ["analyze", "merge", "MergedReport", "PartedTrace", "PartsCatalog", "column_kind"]
