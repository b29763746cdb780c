"""The data of the HTML page's interactive timeline (the drawing is
timeline_page.js, inlined in the page): everything the browser needs to zoom
from the whole run to single region instances without asking anyone.

A big trace holds far more than a page can (a 10-million-event trace has about
4 million region instances), so the page holds it at levels of detail, each
computed in C when the page is written (csrc/overview):

- levels: the whole run cut into BASE_BINS bins, then 4 times finer each
  level, per row the dominant activity of every bin (run-length coded); the
  browser draws the coarsest level whose bins are no wider than a pixel;
  levels stop when their bins are finer than the rows' region instances or the
  page's budget is spent;
- exact region instances (call path, start, end, depth): all of them when the
  trace has at most EXACT_ALL, else those around the worst occurrences that
  the page lists, which is where a click zooms to;
- messages: all of them when few, else those around the worst occurrences,
  and per level the messages bundled (one line per pair of rows and span of
  bins, as the pictures bundle them);
- wait states: every occurrence of the inefficiencies when few, else the most
  severe WAIT_BUDGET and those around the listed ones, each with the event it
  waited for (its partner) and that event's place;
- the worst occurrences of each ranked inefficiency, the matches of a search
  pattern, where each location of a stopped run stopped, and the counter and
  metric series (thinned to a few thousand points each).

Times are ticks from the trace's first event, exact as JavaScript numbers up to
2**53.  Arrays travel as base64 of little-endian typed arrays.
"""
from __future__ import annotations

import base64
from typing import Dict, List, Optional

import numpy as np

from .. import overview as ov
from ..analysis.ranking import ranking
from ..search import MAX_MATCHES_DRAWN
from ..timeline import WAIT_AROUND, Window

#: the coarsest level's bins; each further level is FACTOR times finer
BASE_BINS = 2048
FACTOR = 4
MAX_LEVELS = 9
#: bytes of the activity levels (run-length coded) and of the bundled messages at
#: most (before base64, which adds a third); with the exact instances, messages and
#: wait states below, a page stays under 30 MB
LEVEL_BUDGET = 9 << 20
BUNDLE_BUDGET = 3 << 20
#: cells (rows x bins) painted by one pass of the C core at most
CELLS_PER_PASS = 48 << 20
#: region instances kept exactly: all up to this many, else windows around the
#: listed occurrences of WINDOW_EVENTS events on each side
EXACT_ALL = 250000
WINDOW_EVENTS = 2000
#: messages bundled per this many bins of a level (a level's bins are 1/4 to 1
#: pixel wide where the browser draws it: bundles of 8 to 32 pixels)
BUNDLE_BINS = 32
#: messages kept one by one when the trace has at most this many
MESSAGES_ALL = 150000
#: wait states kept: all up to WAITS_ALL, else the most severe WAIT_BUDGET
WAITS_ALL = 100000
WAIT_BUDGET = 40000
#: points of a counter series at most (the lowest and highest of each of half
#: as many bins, so peaks survive)
SERIES_POINTS = 8000


def b64(array: np.ndarray, dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def varints(values: np.ndarray) -> np.ndarray:
    """Non-negative integers as LEB128 bytes (7 bits a byte, the high bit set on
    all but the last byte of a value)."""
    v = np.asarray(values, dtype=np.uint64)
    n = np.ones(len(v), dtype=np.int64)
    rest = v >> np.uint64(7)
    while rest.any():
        n += rest > 0
        rest >>= np.uint64(7)
    out = np.empty(int(n.sum()), dtype=np.uint8)
    pos = np.concatenate(([0], np.cumsum(n)[:-1]))
    cur = v.copy()
    for k in range(int(n.max(initial=1))):
        live = n > k
        byte = (cur[live] & np.uint64(0x7F)).astype(np.uint8)
        byte[n[live] > k + 1] |= 0x80
        out[pos[live] + k] = byte
        cur >>= np.uint64(7)
    return out


def run_lengths(level: np.ndarray):
    """Per row the runs of equal bins: (runs per row, run lengths, run values)."""
    counts, lengths, values = [], [], []
    for row in level:
        change = np.flatnonzero(row[1:] != row[:-1]) + 1
        starts = np.concatenate(([0], change))
        counts.append(len(starts))
        lengths.append(np.diff(np.concatenate((starts, [len(row)]))))
        values.append(row[starts])
    return (np.array(counts, dtype=np.int64), np.concatenate(lengths) if lengths else
            np.empty(0, np.int64), np.concatenate(values) if values else np.empty(0, np.uint8))


def coded_level(level: np.ndarray):
    """A level's rows run-length coded as the page holds them: (runs per row,
    LEB128 run lengths, run values)."""
    counts, lengths, values = run_lengths(level)
    return counts, varints(lengths), values


def coded_size(coded) -> int:
    counts, lengths, values = coded
    return len(lengths) + len(values) + 4 * len(counts)


def accepted_levels(wanted: List[int], n_rows: int, source):
    """The levels of detail the page holds, coarsest first, as (bins, coded
    level, size): painted in batches of at most CELLS_PER_PASS cells by
    source.paint (which also sets source.present from the first batch) until
    LEVEL_BUDGET is spent; a level that does not fit ends them, and so does one
    that the growth of the last two says would not fit."""
    budget, sizes = LEVEL_BUDGET, []
    k = 0
    while k < len(wanted) and budget > 0:
        if len(sizes) >= 2 and sizes[-1] * max(sizes[-1] / max(sizes[-2], 1), 1) > budget:
            break  # the next level would not fit, as the last ones grew: not painted
        batch = [wanted[k]]
        while k + len(batch) < len(wanted) and \
                sum(batch + [wanted[k + len(batch)]]) * n_rows <= CELLS_PER_PASS:
            batch.append(wanted[k + len(batch)])
        painted, present = source.paint(batch)
        if not sizes:  # every activity of the run shows in the coarsest level
            source.present = sorted(present)
        for bins, (size, coded) in zip(batch, painted):
            if sizes and size > budget:
                budget = 0
                break
            budget -= size
            sizes.append(size)
            yield bins, coded, size
        k += len(batch)


def unique_instances(parts):
    """Region instances of several windows ((enter, location, start, end, depth)
    each, ENTERs ascending in each): each instance once with the larger of its
    clipped spans, ordered by location, depth and start (ENTER order where those
    tie)."""
    if not parts or not sum(len(p[0]) for p in parts):
        empty = np.empty(0, np.int64)
        return empty, empty, empty, empty, empty
    enter, loc, start, end, depth = (np.concatenate([p[k] for p in parts]) for k in range(5))
    # an instance in two windows once, with the larger of its clipped spans
    order = np.lexsort((-(end - start), enter))
    keep = order[np.r_[True, enter[order][1:] != enter[order][:-1]]]
    enter, loc, start, end, depth = (x[keep] for x in (enter, loc, start, end, depth))
    # per location and depth the instances are disjoint: sorted by start, their
    # ends are sorted too (the browser finds a view's by binary search)
    order = np.lexsort((start, depth, loc))
    return tuple(x[order] for x in (enter, loc, start, end, depth))


class PageData:
    """Builds the timeline's data for one report (and optional search matches)."""

    def __init__(self, report, matches=None, occurrences: int = 5):
        self.report = report
        self.trace = trace = report.trace
        self.matches = matches
        self.occurrences = occurrences
        self.t0 = trace.start_time
        self.end = trace.start_time + trace.duration_ticks
        self.rows = list(range(len(trace.locations)))
        self.row_of = np.arange(len(self.rows), dtype=np.int64)
        self.bytes = 0
        self.present = []  # the activity ids (and IDLE) the levels show

    # -- the parts -----------------------------------------------------------------------
    def build(self) -> Dict:
        from ..plot.timeline import stopped_rows

        trace = self.trace
        stop = self.stop_report()
        stops, run_ended = stopped_rows(trace, self.rows, self.t0, self.end, stop)
        if run_ended is not None and run_ended > self.end:
            self.end = run_ended
            stops = stopped_rows(trace, self.rows, self.t0, self.end, stop)[0]
        out = {"resolution": trace.timer_resolution, "span": self.end - self.t0,
               "start_ticks": str(self.t0), "path": trace.path,
               "rows": self.row_info(), "activities": self.activity_info(),
               "callpaths": self.callpath_info()}
        ranked = ranking(self.report)
        listed = self.listed_occurrences(ranked)
        out["exact"] = self.exact(listed)
        out["levels"] = self.levels()
        out["present"] = self.present
        out["messages"] = self.messages(out["exact"]["windows"], out["levels"])
        out["waits"] = self.waits(ranked, listed, out["exact"]["windows"])
        out["series"] = self.series()
        out["stopped"] = [{"row": r, "since": int(a - self.t0), "until": int(b - self.t0),
                           "text": text} for r, a, b, text in stops]
        out["run_ended"] = None if run_ended is None else int(run_ended - self.t0)
        out["matches"] = self.match_info()
        return out

    def row_info(self) -> List[Dict]:
        from ..plot.style import location_label

        firsts, lasts = self.location_spans()
        out = []
        for loc in self.trace.locations:
            proc = loc.process
            group = "rank %d" % loc.rank if loc.rank >= 0 else (proc.name or "process %d" % proc.id)
            out.append({"location": loc.index, "label": location_label(loc), "group": group,
                        "name": str(loc), "thread": loc.thread, "type": loc.type,
                        "first": int(firsts[loc.index]), "last": int(lasts[loc.index])})
        return out

    # -- what the page reads of the trace's events (PartsPageData: from parts) --------------
    def stop_report(self):
        """Where each location of a stopped run stopped (analysis.stopped), None
        for a complete run."""
        from ..analysis.stopped import stop_report

        return stop_report(self.trace)

    def location_spans(self):
        """Per location the ticks from the trace's first event to its own first
        and last event (0 for a location without events): the location's
        record, idle where it has nothing of its own open."""
        ev = self.trace.events
        n = len(self.trace.locations)
        firsts, lasts = np.zeros(n, np.int64), np.zeros(n, np.int64)
        for loc in range(n):
            ids = ev.of_location(loc)
            if len(ids):
                firsts[loc] = int(ev.time[ids[0]]) - self.t0
                lasts[loc] = int(ev.time[ids[-1]]) - self.t0
        return firsts, lasts

    def kind_count(self, *kinds: str) -> int:
        counts = self.trace.kind_counts()
        return int(sum(counts.get(k, 0) for k in kinds))

    def times_at(self, ids: np.ndarray) -> np.ndarray:
        """Timestamps (ticks) of these events of the whole trace."""
        return self.trace.events.time[np.asarray(ids, dtype=np.int64)].astype(np.int64)

    def region_instances(self, windows):
        """(enter, location, start, end, depth, call path) of the region
        instances in the windows (absolute ticks), each once with the larger of
        its clipped spans, ordered by location, depth and start."""
        parts = []
        for a, b in windows:
            s = Window(self.trace, a, b).slices()
            parts.append((s.enter, s.location, s.start, s.end, s.depth))
        enter, loc, start, end, depth = unique_instances(parts)
        cnode = np.asarray(self.report._ctx.cnode)[enter] if len(enter) else enter
        return enter, loc, start, end, depth, cnode

    def paint(self, batch):
        """The levels of detail of these bin counts, every row: per level
        (size in bytes, (runs per row, run lengths, run values)), and the
        activities present in the first."""
        painted = ov.activity(self.trace, self.t0, self.end, self.rows, batch)
        present = set(int(v) for v in np.unique(painted[0]) if v != ov.EMPTY)
        out = []
        for level in painted:
            coded = coded_level(level)
            out.append((coded_size(coded), coded))
        return out, present

    def all_messages(self):
        """(sender, receiver, send time, receive time) of every message of the
        trace, in the order of their sends."""
        msgs = Window(self.trace, self.t0, self.end).messages()
        return msgs.src, msgs.dst, msgs.send_time, msgs.recv_time

    def activity_info(self) -> List[Dict]:
        from ..plot.style import ACTIVITY_COLOURS, IDLE_COLOUR, IDLE_LABEL

        out = [{"name": n, "label": ov.ACTIVITY_LABELS[n], "colour": ACTIVITY_COLOURS[n]}
               for n in ov.ACTIVITIES]
        return out + [{"name": "idle", "label": IDLE_LABEL, "colour": IDLE_COLOUR,
                       "id": ov.IDLE}]

    def callpath_info(self) -> Dict:
        report = self.report
        table = ov.activity_table(self.trace)
        region = np.minimum(np.asarray(report.callpath_regions, dtype=np.int64), len(table) - 1)
        return {"paths": list(report.callpaths), "activity": b64(table[region], np.uint8)}

    def listed_occurrences(self, ranked) -> List[tuple]:
        """(property, event, severity) of the occurrences the page lists: the worst
        of each ranked inefficiency."""
        out = []
        for p in ranked:
            inst = self.report.worst.get(p.name)
            if inst is None:
                continue
            for k in range(min(self.occurrences, len(inst))):
                out.append((p.name, int(inst.where[k]), int(inst.severity[k])))
        return out

    # -- region instances --------------------------------------------------------------------
    def exact(self, listed) -> Dict:
        """Region instances kept one by one: all, or windows around the listed
        occurrences (plus the matches' first events)."""
        n_instances = self.kind_count("ENTER")
        if n_instances <= EXACT_ALL:
            windows = [(self.t0, self.end)]
        else:
            centres = [e for _, e, _ in listed]
            if self.matches is not None and len(self.matches):
                centres += self.matches.events[:20, 0].tolist()
            windows = self.windows_around(centres)
        enter, loc, start, end, depth, cnode = self.region_instances(windows)
        self.bytes += 23 * len(enter)
        return {"all": n_instances <= EXACT_ALL,
                "windows": [[int(a - self.t0), int(b - self.t0)] for a, b in windows],
                "count": int(len(enter)),
                "row": b64(self.row_of[loc], np.uint32), "start": b64(start - self.t0, np.float64),
                "end": b64(end - self.t0, np.float64), "callpath": b64(cnode, np.int32),
                "depth": b64(np.minimum(depth, 255), np.uint8), "enter": b64(enter, np.uint32)}

    def windows_around(self, centres) -> List[tuple]:
        """Time windows of WINDOW_EVENTS events on each side of each centre event,
        merged where they overlap."""
        n = len(self.trace)
        centres = np.asarray(centres, dtype=np.int64)
        lo = self.times_at(np.maximum(centres - WINDOW_EVENTS, 0))
        hi = self.times_at(np.minimum(centres + WINDOW_EVENTS, n - 1))
        spans = sorted(zip(lo.tolist(), hi.tolist()))
        merged = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        return merged

    # -- levels of detail ---------------------------------------------------------------
    def wanted_levels(self) -> List[int]:
        """The bin counts of the levels, coarsest first, until the bins are finer
        than the rows' stretches."""
        n_rows = max(len(self.rows), 1)
        span = self.end - self.t0 + 1
        # stretches (time between two events of a location) are this long on average
        stretch = span * n_rows / max(len(self.trace), 1)
        wanted = []
        bins = BASE_BINS
        while len(wanted) < MAX_LEVELS:
            wanted.append(bins)
            if span / bins < max(2 * stretch, 1) or bins * FACTOR > 1 << 31:
                break
            bins *= FACTOR
        return wanted

    def levels(self) -> List[Dict]:
        """The dominant activity per row and bin, level after level, until the
        bins are finer than the rows' stretches or the budget is spent."""
        out = []
        for bins, (counts, coded, values), size in accepted_levels(self.wanted_levels(),
                                                                   len(self.rows), self):
            self.bytes += size
            out.append({"bins": int(bins), "runs": b64(counts, np.uint32),
                        "lengths": base64.b64encode(coded.tobytes()).decode("ascii"),
                        "values": b64(values, np.uint8)})
        return out

    # -- messages --------------------------------------------------------------------------
    def messages(self, windows, levels) -> Dict:
        src, dst, send_time, recv_time = self.all_messages()
        keep = np.ones(len(src), dtype=bool)
        if len(src) > MESSAGES_ALL:
            keep[:] = False
            for a, b in windows:
                keep |= (send_time <= b + self.t0) & (recv_time >= a + self.t0)
        sel = np.nonzero(keep)[0]
        self.bytes += 24 * len(sel)
        out = {"count": int(len(src)), "all": bool(keep.all()),
               "src": b64(self.row_of[src[sel]], np.uint32),
               "dst": b64(self.row_of[dst[sel]], np.uint32),
               "send": b64(send_time[sel] - self.t0, np.float64),
               "recv": b64(recv_time[sel] - self.t0, np.float64), "levels": []}
        if not len(src) or keep.all():
            return out
        budget, sizes = BUNDLE_BUDGET, []
        for level in levels:
            if len(sizes) >= 2 and sizes[-1] * max(sizes[-1] / max(sizes[-2], 1), 1) > budget:
                break  # the next level would not fit, as the last ones grew
            b = ov.message_bundles(send_time, recv_time, self.row_of[src],
                                   self.row_of[dst], self.t0, self.end, level["bins"],
                                   BUNDLE_BINS)
            size = 28 * len(b["count"])
            if size > budget:
                break
            budget -= size
            sizes.append(size)
            self.bytes += size
            send = (b["send_first"] + b["send_last"]) // 2 - self.t0
            recv = (b["recv_first"] + b["recv_last"]) // 2 - self.t0
            order = np.argsort(send, kind="stable")
            out["levels"].append({
                "bins": level["bins"], "src": b64(b["src"][order], np.uint32),
                "dst": b64(b["dst"][order], np.uint32), "count": b64(b["count"][order], np.uint32),
                "send": b64(send[order], np.float64), "recv": b64(recv[order], np.float64),
                "latency": float(np.max(recv - send, initial=0))})
        return out

    # -- wait states ------------------------------------------------------------------------
    def chosen_occurrences(self, found, listed, windows):
        """Per property, the rows of its instances the page keeps: all when the
        properties have at most WAITS_ALL occurrences together, else the
        WAIT_BUDGET most severe of all, those charged inside the exact windows
        and the listed ones; chosen before their spans are computed, which
        costs for every occurrence kept."""
        total = sum(len(inst) for _, inst in found)
        if total <= WAITS_ALL:
            return [np.arange(len(inst)) for _, inst in found]
        severity = np.concatenate([inst.severity for _, inst in found])
        cut = np.partition(severity, len(severity) - WAIT_BUDGET)[len(severity) - WAIT_BUDGET] \
            if len(severity) > WAIT_BUDGET else severity.min(initial=0)
        time = self.trace.events.time
        wanted = {(n, e) for n, e, _ in listed}
        out = []
        for p, inst in found:
            keep = inst.severity > cut
            t = time[inst.where].astype(np.int64) - self.t0
            for a, b in windows:
                keep |= (t >= a) & (t <= b)
            mine = [e for n, e in wanted if n == p.name]
            if mine:
                keep |= np.isin(inst.where, mine)
            out.append(np.nonzero(keep)[0])
        return out

    def wait_spans(self, ranked, listed, windows):
        """(total occurrences, occurrences kept, the properties with spans, and
        per such property its spans' (location, start, end, severity, event
        charged, partner's location, partner's time, partner's call path,
        segment: 0, or 1 for the part after the call of a wait around it))."""
        report, trace = self.report, self.trace
        ev = trace.events
        win = Window(trace, self.t0, self.end)
        found = [(p, report.instances(p.name)) for p in ranked]
        found = [(p, inst) for p, inst in found if inst is not None and len(inst)]
        total = sum(len(inst) for _, inst in found)
        cnode = np.asarray(report._ctx.cnode)
        props, parts = [], []
        kept = 0  # occurrences kept (one may take several spans: count counts spans)
        for (p, inst), rows in zip(found, self.chosen_occurrences(found, listed, windows)):
            before = inst[WAIT_AROUND[p.name]][rows] if p.name in WAIT_AROUND and \
                WAIT_AROUND[p.name] in inst else None
            got = win.waiting_span_parts(p.name, inst.where[rows], inst.severity[rows], before)
            if not got:
                continue
            seg = np.concatenate([np.full(len(x[0]), k) for k, x in got])
            _, loc, start, end, sev, occ = (np.concatenate([x[i] for _, x in got])
                                            for i in range(6))
            occ = rows[occ]
            kept += len(np.unique(occ))
            where = inst.where[occ]
            partner = inst[p.partner][occ] if p.partner and p.partner in inst else \
                np.full(len(occ), -1, dtype=np.int64)
            has = partner >= 0
            p_event = np.maximum(partner, 0)
            p_row = np.where(has, ev.location[p_event].astype(np.int64), -1)
            p_time = np.where(has, ev.time[p_event].astype(np.int64) - self.t0, 0)
            p_path = np.where(has, cnode[p_event], -1)
            props.append(p)
            parts.append((loc, start, end, sev, where, p_row, p_time, p_path, seg))
        return total, kept, props, parts

    def waits(self, ranked, listed, windows) -> Dict:
        total, kept, found, parts = self.wait_spans(ranked, listed, windows)
        props = [{"name": p.name, "title": p.title, "diagnosis": p.diagnosis or "",
                  "description": p.description or "", "colour": _colour(p.name),
                  "partner": p.partner} for p in found]
        if not parts:
            empty = {k: "" for k in ("prop", "row", "start", "end", "severity", "where",
                                     "callpath", "partner_row", "partner_time",
                                     "partner_callpath")}
            return dict(empty, props=props, count=0, occurrences=0, total=total, listed=[])
        prop = np.concatenate([np.full(len(x[0]), k) for k, x in enumerate(parts)])
        loc, start, end, sev, where, p_row, p_time, p_path, seg = (
            np.concatenate([x[i] for x in parts]) for i in range(9))
        names = [p["name"] for p in props]
        # by start; where starts tie, by property (in the ranking's order), the
        # part before a call first, and the event charged: an order that does not
        # depend on how a property lists its occurrences (nor on parts)
        sel = np.lexsort((where, seg, prop, start))
        has = p_row[sel] >= 0
        p_row = np.where(has, self.row_of[np.maximum(p_row[sel], 0)], -1)
        cnode = self.callpaths_of(where[sel])
        self.bytes += 60 * len(sel)
        # the listed occurrences' positions (the first span of each)
        listed_keys = np.array(sorted({names.index(n) * (1 << 40) + e for n, e, _ in listed
                                       if n in names}), dtype=np.int64)
        key = prop[sel].astype(np.int64) * (1 << 40) + where[sel]
        pos = np.minimum(np.searchsorted(listed_keys, key), max(len(listed_keys) - 1, 0))
        hits = np.nonzero(listed_keys[pos] == key)[0] if len(listed_keys) else []
        listed_rows = {}
        for i in np.asarray(hits).tolist():
            listed_rows.setdefault((names[int(prop[sel[i]])], int(where[sel[i]])), i)
        return {"props": props, "count": int(len(sel)), "occurrences": kept, "total": int(total),
                "prop": b64(prop[sel], np.uint8), "row": b64(self.row_of[loc[sel]], np.uint32),
                "start": b64(start[sel] - self.t0, np.float64),
                "end": b64(end[sel] - self.t0, np.float64),
                "severity": b64(sev[sel], np.float64), "where": b64(where[sel], np.uint32),
                "callpath": b64(cnode, np.int32),
                "partner_row": b64(p_row, np.int32), "partner_time": b64(p_time[sel], np.float64),
                "partner_callpath": b64(p_path[sel], np.int32),
                "listed": [[n, e, listed_rows.get((n, e), -1)] for n, e, _ in listed]}

    def callpaths_of(self, events: np.ndarray) -> np.ndarray:
        """The call path of each of these events charged with a wait state."""
        return np.asarray(self.report._ctx.cnode)[events]

    # -- series, matches ---------------------------------------------------------------------
    def series(self) -> List[Dict]:
        out = []
        for metric, loc, t, v in self.series_items():
            self.bytes += 16 * len(t)
            out.append({"metric": metric, "row": int(self.row_of[int(loc)]),
                        "time": b64(t - self.t0, np.float64), "value": b64(v, np.float64)})
        return out

    def series_items(self, trace=None, locations=None) -> List[tuple]:
        """(metric and unit, location, ticks, values) of each counter or metric
        series of the trace (by default the report's; of these locations: all
        by default), thinned, in the order earlc.series lists them."""
        from ..plot.series import thin
        from ..series import has_series, trace_series

        trace = trace if trace is not None else self.trace
        out = []
        if not has_series(trace):
            return out
        frame = trace_series(trace)
        for (metric, loc), part in frame.groupby(["metric", "location"], sort=False,
                                                  observed=True):
            if locations is not None and not locations[int(loc)]:
                continue
            t = part["time_ticks"].to_numpy().astype(np.int64)
            v = part["value"].to_numpy(dtype=np.float64)
            order = np.argsort(t, kind="stable")
            t, v = thin(t[order], v[order], self.t0, self.end, SERIES_POINTS // 2)
            unit = next((str(u) for u in part["unit"].tolist() if u), "")
            out.append((str(metric) + (" (%s)" % unit if unit else ""), int(loc), t, v))
        return out

    def match_info(self) -> Optional[Dict]:
        m = self.matches
        if m is None:
            return None
        ev = self.trace.events
        events = m.events[:MAX_MATCHES_DRAWN]
        flat = events.reshape(-1)
        return {"pattern": m.pattern, "columns": list(m.columns), "count": len(m),
                "truncated": bool(m.truncated), "shown": int(len(events)),
                "event": b64(flat, np.uint32),
                "row": b64(self.row_of[ev.location[flat].astype(np.int64)], np.uint32),
                "time": b64(ev.time[flat].astype(np.int64) - self.t0, np.float64)}


def _colour(name: str) -> str:
    from ..plot.style import property_colour

    return property_colour(name)


def timeline_data(report, matches=None, occurrences: int = 5) -> Dict:
    """The interactive timeline's data for a report (docs/exports.md)."""
    return PageData(report, matches, occurrences).build()
