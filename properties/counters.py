"""Hardware counters recorded in the trace (PAPI and other METRIC records written
with the ENTER and LEAVE events), as metrics per call path and location, the way
Score-P profiles and Cube show them: the counter's increase while a call path is
the innermost one on a location (its exclusive value).

The counters a trace has are known only when it is opened, so the catalog holds
one property, `hardware_counters`, which expands into one metric per counter.
Counters sampled on their own METRIC locations (Score-P's metric plugins: GPU power,
temperature) belong to no call path: they are time series (`trace.metrics`), not
metrics of this tree.
"""
import re

import numpy as np

from earlc.analysis import Property

#: OTF2_MetricMode values whose records carry a running total since the start
_ACCUMULATED_START = 0
_METRIC_TYPES = {0: "OTHER", 1: "PAPI", 2: "RUSAGE", 3: "USER"}
_DOUBLE = 10  # OTF2_TYPE_DOUBLE


def _counter_rows(ctx):
    """Per location, the METRIC records in order, and for each the call path that is
    innermost on its location right after it: the record comes with an ENTER or a
    LEAVE at the same time (after an ENTER, the entered call path; after a LEAVE,
    its parent)."""
    def compute():
        ev = ctx.events
        m = ev.metrics
        rec = m.event.astype(np.int64)
        loc = ev.location[rec].astype(np.int64)
        order = np.lexsort((rec, loc))
        rec, loc = rec[order], loc[order]
        # the event after each record on its location
        nxt = np.full(len(rec), -1, dtype=np.int64)
        starts, seq = ev.loc_start, ev.loc_events
        for l in np.unique(loc).tolist():
            sel = np.nonzero(loc == l)[0]
            mine = seq[int(starts[l]):int(starts[l + 1])]
            pos = np.searchsorted(mine, rec[sel]) + 1
            ok = pos < len(mine)
            nxt[sel[ok]] = mine[pos[ok]]
        cnode = np.full(len(rec), -1, dtype=np.int64)
        ok = nxt >= 0
        cnode[ok] = ctx.cnode[nxt[ok]]
        leave = np.zeros(len(rec), dtype=bool)
        leave[ok] = ev.kind[nxt[ok]] == ctx.kinds["LEAVE"]
        has = leave & (cnode >= 0)
        cnode[has] = ctx.calltree.parent[cnode[has]]
        return order, rec, loc, cnode
    return ctx.memo("counter_rows", compute)


class CounterMetric(Property):
    """One hardware counter: its exclusive increase per call path and location."""

    measures, unit = "quantity", "occ"

    def __init__(self, member: int, counter: str, description: str, klass: int, slot: int):
        self.member, self.klass, self.slot = member, klass, slot
        self.name = "hwc_" + re.sub(r"[^0-9a-zA-Z]+", "_", counter).strip("_").lower()
        self.title = counter
        self.cube_id = counter
        self.description = ("Hardware counter %s%s: its increase while a call path is the "
                            "innermost one on a location (exclusive)."
                            % (counter, " (%s)" % description if description else ""))
        self.diagnosis = "Compare with Time per call path: rates show where the hardware stalls."

    def totals(self, ctx):
        order, rec, loc, cnode = _counter_rows(ctx)
        m = ctx.events.metrics
        k = m.metric.astype(np.int64)[order] == self.klass
        first = m.first.astype(np.int64)[order][k] + self.slot
        raw = ctx.events.metric_values[first]
        if len(first) and int(ctx.events.metric_value_types[first[0]]) == _DOUBLE:
            values = np.round(raw.view(np.float64)).astype(np.int64)
        else:
            values = raw.view(np.int64)
        l, c = loc[k], cnode[k]
        same = np.zeros(len(l), dtype=bool)
        same[:-1] = l[1:] == l[:-1]
        delta = np.zeros(len(l), dtype=np.int64)
        delta[:-1] = values[1:] - values[:-1]  # wraps like the counter itself
        keep = same & (c >= 0)
        return c[keep], l[keep], delta[keep]


class HardwareCounters(Property):
    measures = "quantity"
    name, title, metric, unit = "hardware_counters", "Hardware counters", False, "occ"
    description = ("Expands into one metric per hardware counter the trace records with "
                   "mode 'accumulated start' (PAPI, rusage and the like) beside the ENTER and "
                   "LEAVE events of its threads, named hwc_ and the counter's name. Counters "
                   "sampled on METRIC locations are time series (trace.metrics), no metric.")

    def expand(self, ctx):
        if not len(ctx.events.metrics):
            return []
        classes = ctx.metric_classes()
        m = ctx.events.metrics
        beside_regions = ~ctx.metric_locations()[ctx.events.location[m.event.astype(np.int64)]]
        klass_of_record = np.unique(m.metric.astype(np.int64)[beside_regions])
        out, names = [], set()
        for k in klass_of_record.tolist():
            for slot, member in enumerate(classes.get(k, ())):
                if member is None or member.mode != _ACCUMULATED_START:
                    continue
                prop = CounterMetric(member.ref, member.name or "counter%d" % member.ref,
                                     member.description, k, slot)
                if prop.name in names:
                    continue
                names.add(prop.name)
                out.append(prop)
        return out


PROPERTIES = (HardwareCounters,)
