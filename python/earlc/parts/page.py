"""The HTML page of a report made in parts (MPI): the same page as the
single-process analysis writes, though no process holds every event.

The page (export/html.py, export/timeline_page.py) reads the trace's events
for its interactive timeline and its communication matrix.  Almost all of
that is per location (its row of the timeline), so each part computes it for
its own locations, as the whole trace would give it, and the first part
assembles the page from what the parts send it:

- each row's first and last event, its dominant activity per bin at every
  level of detail (painted by csrc/overview from the part's own states), its
  region instances, its counter series, where it stopped;
- the messages it sends (with the receive's time: the receive is a ghost of
  the sender's part), and the bytes and messages per pair of locations;
- the wait states charged to it, with their spans in the waiting call.

What needs the whole trace is agreed on by small collective steps, in the
order the single-process page decides it, so every part takes the same
branch: the count of region instances and of sends (sums), the levels kept
(the sizes of each painted level, summed: a level is painted by every part or
by none), the times at the whole trace's event ids around the listed
occurrences (a search over time, each part counting its own events before a
time), the severity above which wait states are kept (the parts' most severe
ones), and the call path of a wait state's partner, which its owner knows
(a ghost's call path in a part is that of its enclosing call only).  Event
ids become the whole trace's (Part.global_ids), call paths the merged call
tree's.  Ties are broken as the single process breaks them: by the whole
trace's order of the events.

The first part holds, besides its own part: the page itself, and while it is
assembled the levels of detail painted for every row (at most the page's
budget of a few MB, and the levels of the batch that overflowed it), every
region instance, message and wait-state span the page keeps, and one message
record (src, dst, send and receive time, position) per message of the trace
for the bundles (40 bytes a message).  The other parts hold their own share
of these and send it.

Collective: every part calls `write_page` with the same arguments.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from ..export import timeline_page as tp
from ..export.html import WholeTrace
from ..events import KINDS
from ..timeline import WAIT_AROUND, Window


class PartsPageData(tp.PageData):
    """The timeline's data of a merged report, each part computing its own
    locations' share; the result is meaningful on the first part only (the
    others take every collective step with it)."""

    def __init__(self, report, occurrences: int = 5):
        super().__init__(report, None, occurrences)
        self.part = part = report.part
        self.ex = part.exchange
        self.root = self.ex.rank == 0
        self.local = report._local
        self.cnode_map = np.asarray(report._cnode_map, dtype=np.int64)
        self.own = np.asarray(part.own, dtype=bool)
        self.own_rows = np.nonzero(self.own)[0].astype(np.int64)
        self.ptrace = part.trace
        #: the spilled timestamps of every location when the parts are analysed
        #: in turn (spill.LocationTimes): event ids and times from them, no step
        self.whole_times = getattr(part, "whole_times", None)

    # -- helpers -----------------------------------------------------------------------------
    def _global_cnodes(self, local: np.ndarray) -> np.ndarray:
        """The merged call tree's node of each of this part's nodes (-1 stays)."""
        local = np.asarray(local, dtype=np.int64)
        out = np.full(len(local), -1, dtype=np.int64)
        ok = local >= 0
        out[ok] = self.cnode_map[local[ok]]
        return out

    def _own_events(self) -> np.ndarray:
        return np.nonzero(self.own[self.ptrace.events.location])[0]

    def _global_ids(self, ids: np.ndarray) -> np.ndarray:
        """The whole trace's id of each of this part's events (-1 stays):
        collective under MPI (Part.global_ids), counted over the spilled
        timestamps in turn."""
        if self.whole_times is None:
            return self.part.global_ids(ids)
        ids = np.asarray(ids, dtype=np.int64)
        out = np.full(len(ids), -1, dtype=np.int64)
        valid = ids >= 0
        out[valid] = self.whole_times.count_before(*self.part.keys(ids[valid]))
        return out

    def _events_up_to(self, times: np.ndarray) -> np.ndarray:
        """Per time, the whole trace's events at or before it: each part
        counts its own and the counts are summed (MPI), or one count over the
        spilled timestamps (in turn)."""
        counted = np.zeros(len(times), dtype=np.int64)
        if self.whole_times is not None:
            for l in self.whole_times.locations():
                counted += self.whole_times.before(l, times, "right")
            return counted
        for t in self.part.own_times().values():
            counted += np.searchsorted(t, times, side="right")
        return self.ex.allreduce_sum(counted)

    # -- PageData's reads of the trace, from the parts -----------------------------------
    def stop_report(self):
        from ..analysis.stopped import group_stops, location_stops

        trace = self.ptrace
        if not any(loc.incomplete is not None for loc in trace.locations):
            return None
        mine = location_stops(trace, None, self.own_rows.tolist())
        entries = sorted((e for got in self.ex.allgather(mine) for e in got),
                         key=lambda e: e["location"])
        return group_stops(trace, entries)

    def location_spans(self):
        ev = self.ptrace.events
        n = len(self.own)
        firsts, lasts = np.zeros(n, np.int64), np.zeros(n, np.int64)
        for loc in self.own_rows.tolist():
            ids = ev.of_location(loc)
            if len(ids):
                firsts[loc] = int(ev.time[ids[0]]) - self.t0
                lasts[loc] = int(ev.time[ids[-1]]) - self.t0
        both = self.ex.allreduce_sum(np.concatenate((firsts, lasts)))  # one step
        return both[:n], both[n:]

    def kind_count(self, *kinds: str) -> int:
        ev = self.ptrace.events
        own = self._own_events()
        k = ev.kind[own]
        mine = sum(int(np.count_nonzero(k == KINDS[name])) for name in kinds)
        return int(self.ex.allreduce_sum(np.array([mine], dtype=np.int64))[0])

    def times_at(self, ids: np.ndarray) -> np.ndarray:
        """The time of the whole trace's events `ids`: the least time up to which
        more than id events lie, found by halving the span (every part counts
        its own events up to a time; in turn, one count over the spilled
        timestamps, no step)."""
        ids = np.asarray(ids, dtype=np.int64)
        lo = np.full(len(ids), self.t0, dtype=np.int64)
        hi = np.full(len(ids), max(self.end, self.part.whole.get("last_time") or self.end),
                     dtype=np.int64)
        while True:  # lo and hi are the same on every part: so is the end
            open_ = lo < hi
            if not open_.any():
                return lo
            mid = lo + (hi - lo) // 2
            counted = self._events_up_to(mid.astype(np.uint64))
            enough = counted > ids
            hi = np.where(open_ & enough, mid, hi)
            lo = np.where(open_ & ~enough, mid + 1, lo)

    def region_instances(self, windows):
        parts = []
        for a, b in windows:
            s = Window(self.ptrace, a, b, locations=self.own_rows).slices()
            parts.append((s.enter, s.location, s.start, s.end, s.depth))
        enter, loc, start, end, depth = tp.unique_instances(parts)
        cnode = self._global_cnodes(np.asarray(self.local._ctx.cnode)[enter]) if len(enter) \
            else enter
        genter = self._global_ids(enter)
        got = self.ex.gather((genter, loc, start, end, depth, cnode))
        if not self.root:
            empty = np.empty(0, np.int64)
            return (empty,) * 6
        genter, loc, start, end, depth, cnode = (np.concatenate([g[k] for g in got])
                                                 for k in range(6))
        order = np.lexsort((genter, start, depth, loc))
        return tuple(x[order] for x in (genter, loc, start, end, depth, cnode))

    def paint(self, batch):
        from .. import overview as ov

        mine, sizes, present = [], [], set()
        if len(self.own_rows):
            painted, tallies = ov.activity(self.ptrace, self.t0, self.end, self.own_rows, batch,
                                           tallies=True)
            tallies = tallies.copy()
            for k, bins in enumerate(batch):  # the bins in the whole picture's rows
                at = tallies[k]["best_at"].astype(np.int64)
                tallies[k]["best_at"] = self.own_rows[at // bins] * bins + at % bins
        else:
            tallies = np.zeros(len(batch), dtype=ov.TALLY)
        # a class that wins no bin in any part's rows takes the bin of its
        # largest share over all of them (as the whole picture gives it)
        for k, given in enumerate(ov.rescue_classes(self.ex.allgather(tallies))):
            for c, at in given.items():
                row, b = divmod(at, batch[k])
                if self.own[row]:
                    if not painted[k].flags.writeable:
                        painted[k] = painted[k].copy()
                    painted[k][int(np.searchsorted(self.own_rows, row)), b] = c
        if len(self.own_rows):
            present = set(int(v) for v in np.unique(painted[0]) if v != ov.EMPTY)
            for level in painted:
                counts, lengths, values = tp.run_lengths(level)
                sizes.append(tp.coded_size((counts, tp.varints(lengths), values)))
                mine.append((counts, lengths.astype(np.uint32), values))
        else:
            sizes = [0] * len(batch)
            mine = [None] * len(batch)
        every = self.ex.allgather((np.array(sizes, dtype=np.int64), present))  # one step
        sizes = np.sum([s for s, _ in every], axis=0)
        present = set().union(*(p for _, p in every))
        got = self.ex.gather((self.own_rows, mine))
        out = []
        for k in range(len(batch)):
            coded = _whole_level(got, k, len(self.own)) if self.root else \
                (np.empty(0, np.int64), np.empty(0, np.uint8), np.empty(0, np.uint8))
            out.append((int(sizes[k]), coded))
        return out, present

    def all_messages(self):
        msgs = Window(self.ptrace, self.t0, self.end).messages()
        mine = self.own[msgs.src]
        pos = self.part.positions(msgs.send[mine])
        got = self.ex.gather((msgs.src[mine], msgs.dst[mine], msgs.send_time[mine],
                              msgs.recv_time[mine], pos))
        if not self.root:
            empty = np.empty(0, np.int64)
            return (empty,) * 4
        src, dst, st, rt, pos = (np.concatenate([g[k] for g in got]) for k in range(5))
        order = np.lexsort((pos, src, st))  # the whole trace's order of the sends
        return src[order], dst[order], st[order], rt[order]

    def has_messages(self) -> bool:
        return self.kind_count("MPI_SEND", "MPI_ISEND") > 0

    def comm_matrices(self):
        """(bytes, messages) sent between each pair of locations: each part
        counts the messages its own locations send."""
        from ..communication import _sends

        src, dst, size = _sends(self.ptrace)
        n = len(self.own)
        mine = self.own[src]
        key = src[mine] * n + dst[mine]
        count = np.bincount(key, minlength=n * n).astype(np.int64)
        total = np.zeros(n * n, dtype=np.int64)
        np.add.at(total, key, size[mine])
        both = self.ex.allreduce_sum(np.concatenate((total, count)))  # one step
        return both[:n * n].reshape(n, n), both[n * n:].reshape(n, n)

    # -- wait states -------------------------------------------------------------------------
    def _own_instances(self, name):
        inst = self.local.instances(name)
        if inst is None or not len(inst):
            return None, np.empty(0, np.int64)
        where = np.asarray(inst.where, dtype=np.int64)
        rows = np.nonzero(self.own[self.ptrace.events.location[where]])[0]
        return inst, rows

    def _listed_here(self, listed) -> Dict[str, np.ndarray]:
        """Per property, this part's event ids of the listed occurrences it owns
        (they are among its own worst)."""
        names, ids = [], []
        for name, inst in self.local.worst.items():
            where = np.asarray(inst.where, dtype=np.int64)
            where = where[self.own[self.ptrace.events.location[where]]]
            names.append(name)
            ids.append(where)
        flat = np.concatenate(ids) if ids else np.empty(0, np.int64)
        gflat = self._global_ids(flat)
        wanted = {(n, e) for n, e, _ in listed}
        out, at = {}, 0
        for name, where in zip(names, ids):
            g = gflat[at:at + len(where)]
            at += len(where)
            out[name] = np.array([w for w, e in zip(where.tolist(), g.tolist())
                                  if (name, e) in wanted], dtype=np.int64)
        return out

    def _cut(self, found, total: int) -> int:
        """The severity above which wait states are kept when there are more than
        WAITS_ALL (the WAIT_BUDGET-th most severe of all): from each part's own
        most severe."""
        severity = np.concatenate([inst.severity[rows] for _, inst, rows in found]) \
            if found else np.empty(0, np.int64)
        severity = severity.astype(np.int64)
        top = np.sort(severity)[-tp.WAIT_BUDGET:] if len(severity) else severity
        every = np.concatenate(self.ex.allgather(top))
        if total > tp.WAIT_BUDGET:  # every part sent its WAIT_BUDGET most severe
            return int(np.sort(every)[len(every) - tp.WAIT_BUDGET])
        return int(every.min(initial=0))

    def wait_spans(self, ranked, listed, windows):
        ev = self.ptrace.events
        own_found = []
        counts = []
        for p in ranked:
            inst, rows = self._own_instances(p.name)
            counts.append(len(rows))
            own_found.append((p, inst, rows))
        counts = self.ex.allreduce_sum(np.array(counts, dtype=np.int64))
        found = [(p, inst, rows) for (p, inst, rows), n in zip(own_found, counts) if n > 0]
        total = int(sum(int(n) for n in counts))
        listed_here = self._listed_here(listed)
        chosen = [rows for _, _, rows in found]
        if total > tp.WAITS_ALL:
            cut = self._cut([(p, inst, rows) for p, inst, rows in found if inst is not None],
                            total)
            chosen = []
            for p, inst, rows in found:
                if inst is None:
                    chosen.append(rows)
                    continue
                sev = np.asarray(inst.severity)[rows]
                keep = sev > cut
                t = ev.time[np.asarray(inst.where)[rows]].astype(np.int64) - self.t0
                for a, b in windows:
                    keep |= (t >= a) & (t <= b)
                mine = listed_here.get(p.name)
                if mine is not None and len(mine):
                    keep |= np.isin(np.asarray(inst.where)[rows], mine)
                chosen.append(rows[keep])
        win = Window(self.ptrace, self.t0, self.end)
        cnode = np.asarray(self.local._ctx.cnode)
        pieces, kept = [], 0
        for (p, inst, _), rows in zip(found, chosen):
            if inst is None or not len(rows):
                pieces.append(None)
                continue
            where_all = np.asarray(inst.where, dtype=np.int64)
            sev_all = np.asarray(inst.severity, dtype=np.int64)
            before = inst[WAIT_AROUND[p.name]][rows] if p.name in WAIT_AROUND and \
                WAIT_AROUND[p.name] in inst else None
            spans = win.waiting_span_parts(p.name, where_all[rows], sev_all[rows], before)
            if not spans:
                pieces.append(None)
                continue
            seg = np.concatenate([np.full(len(s[0]), k) for k, s in spans])
            _, loc, start, end, sev, occ = (np.concatenate([s[i] for _, s in spans])
                                            for i in range(6))
            occ = rows[occ]
            kept += len(np.unique(occ))
            where = where_all[occ]
            partner = np.asarray(inst[p.partner])[occ].astype(np.int64) \
                if p.partner and p.partner in inst else np.full(len(occ), -1, dtype=np.int64)
            has = partner >= 0
            p_event = np.maximum(partner, 0)
            p_row = np.where(has, ev.location[p_event].astype(np.int64), -1)
            p_time = np.where(has, ev.time[p_event].astype(np.int64) - self.t0, 0)
            pieces.append([loc, start, end, sev, where, p_row, p_time,
                           np.where(has, self.part.event_keys(p_event), -1),
                           self._global_cnodes(cnode[where]), seg])
        # the whole trace's ids of the events charged, the partners' call paths
        flat = [x[4] for x in pieces if x is not None]
        gwhere = self._global_ids(np.concatenate(flat) if flat else np.empty(0, np.int64))
        keys = [x[7] for x in pieces if x is not None]
        paths = self._paths_of_keys(np.concatenate(keys) if keys else np.empty(0, np.int64))
        at = 0
        for x in pieces:
            if x is not None:
                n = len(x[4])
                x[4] = gwhere[at:at + n]
                x[7] = paths[at:at + n]
                at += n
        kept = int(self.ex.allreduce_sum(np.array([kept], dtype=np.int64))[0])
        got = self.ex.gather(pieces)
        if not self.root:
            return total, kept, [], []
        props, parts, self._wait_paths = [], [], []
        for k, (p, _, _) in enumerate(found):
            mine = [g[k] for g in got if g[k] is not None]
            if not mine:
                continue
            cols = [np.concatenate([m[i] for m in mine]) for i in range(10)]
            props.append(p)
            parts.append(tuple(cols[:8]) + (cols[9],))
            self._wait_paths.append((cols[4], cols[8]))
        return total, kept, props, parts

    def _paths_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """The merged call tree's node of each event key (Part.event_keys; -1
        stays -1), from the part that owns the event."""
        from .part import POSITION_BITS

        every = self.ex.allgather(keys)
        flat = np.concatenate(every) if every else np.empty(0, np.int64)
        answer = np.zeros(len(flat), dtype=np.int64)
        valid = flat >= 0
        loc = np.where(valid, flat >> POSITION_BITS, 0)
        mine = valid & (loc < len(self.own))
        mine[mine] = self.own[loc[mine]]
        if mine.any():
            ids = self.part.ids_of_keys(flat[mine])
            cn = np.asarray(self.local._ctx.cnode)
            ok = ids >= 0
            local = np.full(len(ids), -1, dtype=np.int64)
            local[ok] = cn[ids[ok]]
            answer[mine] = self._global_cnodes(local) + 1
        answer = self.ex.allreduce_sum(answer) - 1
        first = sum(len(e) for e in every[:self.ex.rank])
        out = answer[first:first + len(keys)]
        return np.where(keys >= 0, out, -1)

    def callpaths_of(self, events: np.ndarray) -> np.ndarray:
        where = np.concatenate([w for w, _ in self._wait_paths])
        path = np.concatenate([c for _, c in self._wait_paths])
        order = np.argsort(where, kind="stable")
        at = np.searchsorted(where[order], events)
        return path[order][at]

    # -- series ------------------------------------------------------------------------------
    def series_items(self, trace=None, locations=None) -> List[tuple]:
        from ..series import has_series, samples

        trace = self.ptrace
        mine = []
        if has_series(trace):
            mine = super().series_items(trace, self.own)  # the own locations' series
            names = list(samples(trace).names)
            keyed = []
            for k, (metric, loc, t, v) in enumerate(mine):
                keyed.append((_series_key(names, metric, loc, k, t), (metric, loc, t, v)))
            mine = keyed
        got = self.ex.gather(mine)
        if not self.root:
            return []
        every = sorted((x for g in got for x in g), key=lambda x: x[0])
        return [x[1] for x in every]


def _series_key(names, metric: str, loc: int, k: int, t) -> tuple:
    """Where the whole trace lists a series: counters beside regions by their
    member's order, then by location; then the METRIC locations' series in the
    order of their first sample."""
    base = metric.split(" (")[0]
    for m, name in enumerate(names):
        if name == base or name + " /s" == base:
            return (0, m, loc, 0, k)
    return (1, int(t[0]) if len(t) else 0, loc, 0, k)


def _whole_level(got, k: int, n_rows: int):
    """Level k of a painted batch, every row in order, from the parts' own rows:
    (runs per row, LEB128 run lengths, run values)."""
    counts = np.zeros(n_rows, dtype=np.int64)
    rows_lengths: List[Optional[np.ndarray]] = [None] * n_rows
    rows_values: List[Optional[np.ndarray]] = [None] * n_rows
    for rows, levels in got:
        if not len(rows) or levels[k] is None:
            continue
        c, lengths, values = levels[k]
        ends = np.cumsum(c)
        starts = ends - c
        for r, a, b in zip(rows.tolist(), starts.tolist(), ends.tolist()):
            counts[r] = b - a
            rows_lengths[r] = lengths[a:b]
            rows_values[r] = values[a:b]
    empty64, empty8 = np.empty(0, np.int64), np.empty(0, np.uint8)
    lengths = np.concatenate([x if x is not None else empty64 for x in rows_lengths]
                             ).astype(np.int64)
    values = np.concatenate([x if x is not None else empty8 for x in rows_values]
                            ).astype(np.uint8)
    return counts, tp.varints(lengths), values


class PartsPage(WholeTrace):
    """What the page reads of the trace's events, for a report made in parts
    (html.render's source): computed by every part together (collective)."""

    def __init__(self, report, rows: int, pictures: bool):
        super().__init__(report)
        self.data = PartsPageData(report, occurrences=rows)
        self._timeline = self.data.build()
        self._messages = self.data.has_messages() if pictures else False
        self._matrices = self.data.comm_matrices() if self._messages else None

    def timeline_data(self, matches, rows):
        return self._timeline

    def has_messages(self) -> bool:
        return self._messages

    def comm_matrices(self):
        return self._matrices


def refuse_unsupported(matches, timeline: bool) -> None:
    """What the page of a report made in parts (MPI or in turn) does not show."""
    if matches is not None:
        raise ValueError("the page of a report made in parts does not mark a search's "
                         "matches: write the matches with earlc search (docs/parallel.md)")
    if not timeline:
        raise ValueError("the page of a report made in parts has its interactive timeline: "
                         "its picture of the timeline needs every event (timeline=True)")


def write_page(report, path=None, top: int = 5, rows: int = 5, pictures: bool = True,
               matches=None, timeline: bool = True):
    """Collective: the page of a report made in parts, written (or returned) by
    the first part; the others return None."""
    from ..export import html

    refuse_unsupported(matches, timeline)
    ex = report.part.exchange
    error, source = None, None
    try:
        source = PartsPage(report, rows, pictures)
    except Exception as exc:  # every part must learn of it
        error = exc
    ex.agree(error)
    if ex.rank != 0:
        return None
    kw = dict(top=top, rows=rows, pictures=pictures, source=source)
    if path is not None:
        return html.write(report, path, **kw)
    return html.render(report, **kw)


__all__ = ["write_page", "refuse_unsupported", "PartsPage", "PartsPageData"]
