"""The result of an analysis: the metric tree crossed with the call tree and the
locations, as in Scalasca's CUBE reports, plus the most severe occurrences of
each property.

Values are exact integers (ticks for unit "sec", counts for "occ", bytes);
seconds and percentages are derived for display only.  Each metric's value
includes its children's (inclusive), as users read a metric tree.

Outputs: `to_dataframe()` (one row per metric x call path x location),
`to_json()` (schema "earlc-report/1", docs/report-schema.md) and `to_text()`.
"""
from __future__ import annotations

import json
from typing import Dict, List

import numpy as np

from ..display import time_fields
from .property import Instances, Property
from ..sums import sum_by_key
from .ranking import measures_of, ranking

SCHEMA = "earlc-report/2"


class Report:
    def __init__(self, trace, ctx, properties: List[Property], store, worst: Dict[str, Instances],
                 counts=None, switched_off=(), exceeding=None, package_problems=(),
                 unanalysed=()):
        self.trace = trace
        #: properties left out because they raised or returned something unusable
        #: (engine.SwitchedOff: name, source, exception, message, file, line)
        self.switched_off = list(switched_off)
        #: metrics whose value exceeds their parent's in some (call path, location)
        #: cell, by name (engine.ExceedsParent)
        self.exceeding = dict(exceeding or {})
        #: installed packages whose properties could not be loaded
        self.package_problems = list(package_problems)
        #: waiting calls the wait states could not examine: the trace lacks the
        #: records they are computed from (coverage.Unanalysed: code, calls, ticks,
        #: event, location, properties, detail)
        self.unanalysed = list(unanalysed)
        self._ctx = ctx
        self._store = store
        self.worst = worst
        self.properties = _tree_order([p for p in properties if p.metric])
        self._by_name = {p.name: p for p in self.properties}
        self._tables = {p.name: store.table(p.name) for p in self.properties}
        self._counts = {p.name: counts.table(p.name) for p in self.properties
                        if counts is not None and p.name in counts.metrics}
        self.callpaths = ctx.calltree.paths()
        self.resolution = trace.timer_resolution

    # -- lookups ----------------------------------------------------------------------
    def callpath_of(self, event: int) -> str:
        """The call path of an event ('' outside every region)."""
        c = int(self._ctx.cnode[event])
        return self.callpaths[c] if c >= 0 else ""

    def occurrence(self, metric: str, k: int):
        """The k-th worst occurrence of metric: (event id, timestamp in ticks,
        location index, call path id)."""
        w = int(self.worst[metric].where[k])
        ev = self.trace.events
        return w, int(ev.time[w]), int(ev.location[w]), int(self._ctx.cnode[w])

    @property
    def summary(self) -> dict:
        """The trace as the report's header gives it: its anchor, its timer
        resolution, its events, the timestamp of its first event, and the time
        from there to its last (seconds, and ticks)."""
        t = self.trace
        return {"path": t.path, "timer_resolution": self.resolution, "events": len(t),
                "start_time_ticks": t.start_time, "duration": t.duration,
                "duration_ticks": t.duration_ticks}

    @property
    def trace_warnings(self) -> Dict[str, int]:
        """Inconsistencies found while reading the trace and building the EARL layer,
        by code: severities near them may be incomplete."""
        out = {k: v for k, v in self.trace.warnings.counts.items()
               if v and k != "other_record"}
        out.update({k: v for k, v in self._ctx.states.warnings.counts.items() if v})
        return out

    @property
    def analysis_warnings(self) -> Dict[str, int]:
        """What the properties said about their numbers, by code (a value that is
        0 by definition on this trace, for example)."""
        out: Dict[str, int] = {}
        for code, _ in self._context_warnings():
            out[code] = out.get(code, 0) + 1
        return out

    @property
    def warnings(self) -> Dict[str, int]:
        """Everything that makes the numbers less than complete, by code: the
        trace's inconsistencies, what the properties said about their numbers,
        properties switched off, metrics exceeding their parent, packages not
        loaded (details: warning_details)."""
        out = self.trace_warnings
        out.update(self.analysis_warnings)
        for u in self.unanalysed:
            out[u.code] = u.calls
        for code, n in (("property_switched_off", len(self.switched_off)),
                        ("metric_exceeds_parent", len(self.exceeding)),
                        ("package_not_loaded", len(self.package_problems))):
            if n:
                out[code] = n
        return out

    @property
    def warning_details(self) -> List[dict]:
        """The first trace inconsistencies of each code (reading and EARL layer),
        then every property switched off, metric exceeding its parent and package
        that failed to load: one dict each, with a `code`."""
        return (self._trace_warning_details() + self._context_warning_details() +
                self._unanalysed_details() + self._analysis_warning_details())

    def _trace_warning_details(self) -> List[dict]:
        out = []
        for c, l, pos, e, d in self.trace.warnings.details:
            if c != "other_record":
                out.append({"code": c, "location": l, "event": e, "detail": d})
        for c, l, e, d in self._ctx.states.warnings.details:
            out.append({"code": c, "location": l, "event": e, "detail": d})
        return out

    def _context_warning_details(self) -> List[dict]:
        return [{"code": c, "detail": d} for c, d in self._context_warnings()]

    def _context_warnings(self):
        """What the properties said with ctx.warn: (code, detail) pairs."""
        return list(getattr(self._ctx, "analysis_warnings", ()))

    def _unanalysed_details(self) -> List[dict]:
        return [{"code": u.code, "location": u.location, "event": u.event, "calls": u.calls,
                 "ticks": u.ticks, "properties": list(u.properties), "detail": u.detail}
                for u in self.unanalysed]

    def _analysis_warning_details(self) -> List[dict]:
        out = []
        for s in self.switched_off:
            out.append({"code": "property_switched_off", "property": s.name,
                        "source": s.source, "exception": s.exception, "detail": s.message,
                        "file": s.file, "line": s.line})
        for name, x in self.exceeding.items():
            out.append({"code": "metric_exceeds_parent", "property": name, "parent": x.parent,
                        "cells": x.cells, "callpath": x.callpath, "location": x.location,
                        "value": x.value, "parent_value": x.parent_value,
                        "detail": "%s exceeds its parent %s in %d (call path, location) cells"
                                  % (name, x.parent, x.cells)})
        for msg in self.package_problems:
            out.append({"code": "package_not_loaded", "detail": msg})
        return out

    @property
    def stopped(self):
        """Where every location stopped, for a trace whose records end early
        (stopped.py); None for a complete trace."""
        if not hasattr(self, "_stopped"):
            from .stopped import stop_report

            self._stopped = stop_report(self.trace, callpath_of=self.callpath_of)
        return self._stopped

    # -- totals -----------------------------------------------------------------------
    def total(self, metric: str) -> int:
        """Sum over all call paths and locations (exact)."""
        return int(self._tables[metric][2].sum())

    @property
    def total_time(self) -> int:
        return self.total("time") if "time" in self._tables else 0

    def seconds(self, ticks) -> float:
        return ticks / self.resolution

    def percent(self, metric: str) -> float:
        t = self.total_time
        return 100.0 * self.total(metric) / t if t and self._by_name[metric].unit == "sec" else 0.0

    def occurrences(self, metric: str) -> int:
        """Number of occurrences found (0 for metrics that are no compound event)."""
        return int(self._counts[metric][2].sum()) if metric in self._counts else 0

    def ranking(self) -> List[Property]:
        """The inefficiencies found, most severe first: the one list every output
        shows (analysis/ranking.py)."""
        return ranking(self)

    def measures(self, metric: str) -> str:
        """What a metric measures: inefficiency, time, cause or quantity."""
        return measures_of(self._by_name[metric])

    def depth(self, metric: str) -> int:
        d, p = 0, self._by_name[metric].parent
        while p is not None and p in self._by_name:
            d, p = d + 1, self._by_name[p].parent
        return d

    def cells(self, metric: str):
        """(call path ids, location indices, values): the non-zero cells of a metric
        as int64 arrays, each value including the metric's children's."""
        c, l, v = self._tables[metric]
        return (np.asarray(c, dtype=np.int64), np.asarray(l, dtype=np.int64),
                np.asarray(v, dtype=np.int64))

    def instances(self, metric: str):
        """Every occurrence of a detected property (Instances: `where`, `severity`
        and its columns), not only the `worst`; None for plain metrics."""
        return self._ctx.published.get(metric)

    @property
    def callpath_parents(self) -> np.ndarray:
        """Parent call path id of every call path (-1 for roots)."""
        return self._ctx.calltree.parent

    @property
    def callpath_regions(self) -> np.ndarray:
        """Region reference of every call path."""
        return self._ctx.calltree.region

    def by_callpath(self, metric: str):
        """[(callpath, value)] summed over locations, largest first."""
        c, _, v = self._tables[metric]
        return [(self.callpaths[cn], val) for cn, val in _largest_first(*sum_by_key(c, v))]

    def by_callpath_and_location(self, metric: str):
        """[(callpath, location index, value)], largest first."""
        c, l, v = self._tables[metric]
        rows = sorted(zip(c.tolist(), l.tolist(), v.tolist()), key=lambda r: (-r[2], r[0], r[1]))
        return [(self.callpaths[cn], loc, val) for cn, loc, val in rows]

    def by_location(self, metric: str):
        """[(location index, value)] summed over call paths, largest first."""
        _, l, v = self._tables[metric]
        return _largest_first(*sum_by_key(l, v))

    # -- outputs ----------------------------------------------------------------------------
    def to_dataframe(self):
        """One row per (metric, call path, location) with a non-zero value."""
        import pandas as pd

        frames = []
        locs = self.trace.locations
        for p in self.properties:
            c, l, v = self._tables[p.name]
            if not len(c):
                continue
            occ = np.zeros(len(c), dtype=np.int64)
            if p.name in self._counts:
                cc, cl, cv = self._counts[p.name]
                key = c * len(locs) + l
                ckey = cc * len(locs) + cl
                pos = np.searchsorted(ckey, key)
                hit = (pos < len(ckey)) & (ckey[np.minimum(pos, len(ckey) - 1)] == key)
                occ[hit] = cv[pos[hit]]
            frames.append(pd.DataFrame({
                "metric": p.name,
                "callpath": [self.callpaths[i] for i in c.tolist()],
                "location": l,
                "rank": [locs[i].rank for i in l.tolist()],
                "thread": [locs[i].thread for i in l.tolist()],
                "unit": p.unit,
                "value": v,
                "seconds": v / self.resolution if p.unit == "sec" else np.nan,
                "occurrences": occ,
            }))
        cols = ["metric", "callpath", "location", "rank", "thread", "unit", "value", "seconds",
                "occurrences"]
        if not frames:
            return pd.DataFrame(columns=cols)
        return pd.concat(frames, ignore_index=True)[cols]

    def metrics_dataframe(self):
        """One row per metric: the tree with totals."""
        import pandas as pd

        return pd.DataFrame([{
            "metric": p.name, "title": p.title, "parent": p.parent, "unit": p.unit,
            "value": self.total(p.name), "occurrences": self.occurrences(p.name),
            "seconds": self.seconds(self.total(p.name)) if p.unit == "sec" else np.nan,
            "percent": self.percent(p.name)} for p in self.properties])

    def to_dict(self) -> dict:
        locs = self.trace.locations
        parents, regions = self.callpath_parents, self.callpath_regions
        out = {
            "schema": SCHEMA,
            "trace": self.summary,
            "total_time_ticks": self.total_time,
            "warnings": self.warnings,
            "warning_details": self.warning_details,
            "switched_off": [s.name for s in self.switched_off],
            "metrics": [], "callpaths": [], "locations": [], "severities": [], "instances": {},
            "ranking": [p.name for p in self.ranking()],
        }
        for p in self.properties:
            out["metrics"].append({
                "name": p.name, "cube_id": p.cube_id, "title": p.title, "parent": p.parent,
                "unit": p.unit, "measures": measures_of(p), "partner": p.partner,
                "description": p.description, "diagnosis": p.diagnosis,
                "value": self.total(p.name), "occurrences": self.occurrences(p.name),
                "percent_of_time": round(self.percent(p.name), 6),
                "exceeds_parent": self._exceeds_dict(p.name)})
        for c, path in enumerate(self.callpaths):
            out["callpaths"].append({"id": c, "parent": int(parents[c]),
                                     "region": int(regions[c]), "path": path})
        for l in locs:
            out["locations"].append({"index": l.index, "id": l.id, "name": l.name,
                                     "rank": l.rank, "thread": l.thread, "type": l.type})
        for p in self.properties:
            c, l, v = self._tables[p.name]
            out["severities"] += [{"metric": p.name, "callpath": int(a), "location": int(b),
                                   "value": int(x)} for a, b, x in zip(c, l, v)]
        for name, inst in self.worst.items():
            rows = []
            for k in range(len(inst)):
                w, time, location, callpath = self.occurrence(name, k)
                row = {"event": w, **time_fields(self.trace, time), "location": location,
                       "callpath": callpath, "severity": int(inst.severity[k])}
                for col, arr in inst.columns.items():
                    value = arr[k].item() if hasattr(arr[k], "item") else arr[k]
                    if col.endswith("_time") and isinstance(value, int):
                        # a timestamp the property shares: shown as every time is
                        row.update(time_fields(self.trace, value, col))
                    else:
                        row[col] = value
                rows.append(row)
            out["instances"][name] = rows
        if self.stopped:
            out["stopped"] = self.stopped
        return out

    def _exceeds_dict(self, name: str):
        x = self.exceeding.get(name)
        if x is None:
            return None
        return {"cells": x.cells, "callpath": x.callpath, "location": x.location,
                "value": x.value, "parent_value": x.parent_value}

    def to_json(self, indent=None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_cube(self, path) -> str:
        """Write a CUBE4 file (.cubex) for Cube and Scalasca users; returns the path
        (docs/exports.md)."""
        from ..export import cube

        return cube.write(self, path)

    def to_hatchet(self):
        """A hatchet GraphFrame: the call tree, one row per (call path, location),
        one column per metric (needs `pip install llnl-hatchet`; docs/exports.md)."""
        from ..export import hatchet

        return hatchet.graphframe(self)

    def to_html(self, path=None, top: int = 5, rows: int = 5, pictures: bool = True,
                matches=None, timeline: bool = True) -> str:
        """One self-contained HTML page (an interactive timeline, the metric tree,
        the worst places, pictures when matplotlib is installed; matches: those of
        trace.search(...) to mark); written to path if given, else returned."""
        from ..export import html

        kw = dict(top=top, rows=rows, pictures=pictures, matches=matches, timeline=timeline)
        if path is not None:
            return html.write(self, path, **kw)
        return html.render(self, **kw)

    def to_text(self, top: int = 5, rows: int = 5) -> str:
        from .text import render

        return render(self, top=top, rows=rows)

    def __repr__(self) -> str:
        return "<earlc.Report %s: %d metrics, time %.6f s>" % (
            self.trace.path, len(self.properties), self.seconds(self.total_time))


def _largest_first(keys, values):
    return sorted(zip(keys.tolist(), values.tolist()), key=lambda r: (-r[1], r[0]))


def _tree_order(properties: List[Property]) -> List[Property]:
    """Depth first, children in catalog order."""
    children: Dict[object, List[Property]] = {}
    names = {p.name for p in properties}
    for p in properties:
        children.setdefault(p.parent if p.parent in names else None, []).append(p)
    out: List[Property] = []

    def walk(parent):
        for p in children.get(parent, []):
            out.append(p)
            walk(p.name)

    walk(None)
    return out
