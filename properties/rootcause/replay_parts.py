"""The long-term replay of a trace analysed in parts (longterm.py's, spread
over the parts; the C core's earl_rc_replay_start ... earl_rc_replay_finish).

Each part replays the wait states its own locations delayed.  A wait state
reads the cost complete at its waiting point, which may be another part's:

1. setup (one step): every part asks the owner of each remote point it reads
   for its cost (by event key), with the latest point at which one of its wait
   states reads it.  The owner checks that it delayed no wait state strictly
   between the point and that reader: then the replay on one process takes no
   wait state out of order (earl_rootcause.h), and the parts' replay gives its
   results to the bit.  Any such wait state anywhere (a trace against the
   clock condition) makes every part take the way of step 3 instead.
2. rounds: each part passes on the costs of the wait states whose reads are
   complete (and of those completed in turn), then sends every watched point
   completed meanwhile to the parts that read it, with its count of wait
   states left; a round where nobody has any left ends the replay.  A point is
   complete once the wait states that add to it have passed their costs on, so
   the rounds follow the chains of wait states that cross parts, which are
   short: a few rounds, whatever the trace's length.
3. otherwise: the parts' replay inputs, in terms of the whole trace
   (`inputs`: event keys, the whole trace's call paths), go to part 0, which
   merges them in the whole trace's order (`merged_replay`: the replay on one
   process, exactly) and sends each part the severities of its locations.
   A driver that analyses the parts one after another can write `inputs` to a
   file per part and merge them the same way.
"""
from __future__ import annotations

from typing import List

import numpy as np

from earlc import _core

from .parts import Parts, _concat, match_keys
from .records import CallPathMap, CollectiveInstances, KnownCosts, Replay, WaitBatch

#: replay every trace's parts together on part 0 (step 3), as a trace against
#: the clock condition does: for the tests of the merged replay
ALWAYS_MERGED = False


def _order_less(a, b) -> np.ndarray:
    """Per row: whether event a comes before event b in the whole trace's order
    (each a (time, location, position) triple of arrays)."""
    ta, la, pa = a
    tb, lb, pb = b
    return (ta < tb) | ((ta == tb) & ((la < lb) | ((la == lb) & (pa < pb))))


def _reads(replay: Replay):
    """Every read of the replay's wait states: (point row, the reader's location
    and event)."""
    rows, loc, ev = [], [], []
    for b in replay.waits:
        ok = b.row >= 0
        rows.append(b.row[ok])
        loc.append(b.delayer_location[ok])
        ev.append(b.delayer_event[ok])
    for c in replay.collectives:
        inst = np.repeat(np.arange(len(c.kind)), np.diff(c.member_offset))
        ok = c.member_row >= 0
        rows.append(c.member_row[ok])
        loc.append(c.delayer_location[inst[ok]])
        ev.append(c.delayer_event[inst[ok]])
    return (_concat(rows, np.int64), _concat(loc, np.int64), _concat(ev, np.int64))


def _delayed(replay: Replay):
    """The (location, event) of every wait state of the replay."""
    loc = [b.delayer_location for b in replay.waits] + \
        [c.delayer_location for c in replay.collectives]
    ev = [b.delayer_event for b in replay.waits] + [c.delayer_event for c in replay.collectives]
    return _concat(loc, np.int64), _concat(ev, np.int64)


def _out_of_order_reads(ctx, parts: Parts, replay: Replay, read_event: np.ndarray,
                        reader_event: np.ndarray) -> np.ndarray:
    """Per read of an own point (its event, and the event of the wait state
    reading it, both this part's ids or the reader's order key): whether a
    wait state this part delayed lies strictly between them."""
    part = parts.part
    n = np.int64(ctx.n_events + 1)
    loc, ev = _delayed(replay)
    item_key = np.sort(loc * n + ev)
    rloc = ctx.events.location[read_event].astype(np.int64)
    at = np.searchsorted(item_key, rloc * n + read_event, side="right")
    has = at < len(item_key)
    has[has] = item_key[at[has]] // n == rloc[has]
    out = np.zeros(len(read_event), dtype=bool)
    if has.any():
        nxt = item_key[at[has]] % n
        t, l, p = part.keys(nxt)
        rt, rl, rp = reader_event
        out[has] = _order_less((t.astype(np.int64), l, p),
                               (rt[has], rl[has], rp[has]))
    return out


def replay_in_parts(ctx, parts: Parts, replay: Replay, points) -> dict:
    """Collective: this part's long-term severities, as rc_long_term's result."""
    part = parts.part
    own = parts.own
    rows, r_loc, r_ev = _reads(replay)
    remote = ~own[points.location[rows]]
    # the latest reader of each remote point (its order key), for the owner's check
    r_rows, inverse = np.unique(rows[remote], return_inverse=True)
    rt, rl, rp = part.keys(r_ev[remote]) if remote.any() else (np.empty(0, np.uint64),) * 3
    rt = np.asarray(rt, np.int64)
    order = np.lexsort((rp, rl, rt))
    last = np.full(len(r_rows), -1, dtype=np.int64)
    last[inverse[order]] = order  # the latest in the order wins
    keys = part.event_keys(points.event[r_rows])
    holder = parts.part_of[points.location[r_rows]]
    asked_rows = {q: r_rows[holder == q] for q in np.unique(holder).tolist()}
    latest = (rt[last], np.asarray(rl, np.int64)[last], np.asarray(rp, np.int64)[last])

    def requests():
        out = [None] * parts.size
        for p in np.unique(holder).tolist():
            sel = holder == p
            out[p] = {"key": keys[sel], "t": latest[0][sel], "l": latest[1][sel],
                      "p": latest[2][sel]}
        return out
    asked = parts.alltoall(requests)
    # the owner's side: rows of the requested points, and the check
    local = {}

    def answers():
        watch, wanted_by, wanted_at = [], [], []
        bad = 0
        for q, a in enumerate(asked):
            if a is None or not len(a["key"]):
                continue
            ids = part.ids_of_keys(a["key"])
            row = points.rows_of(np.maximum(ids, 0))
            if (ids < 0).any() or (row < 0).any() or not own[points.location[row]].all():
                raise RuntimeError("part %d reads the cost of a point this part does not hold"
                                   % q)
            bad += int(_out_of_order_reads(ctx, parts, replay, points.event[row],
                                           (a["t"], a["l"], a["p"])).sum())
            watch.append(row)
            wanted_by.append(np.full(len(row), q, np.int64))
            wanted_at.append(np.arange(len(row), dtype=np.int64))
        # the reads of own points by own wait states
        mine = ~remote
        if mine.any():
            bad += int(_out_of_order_reads(ctx, parts, replay, points.event[rows[mine]],
                                           tuple(np.asarray(x, np.int64) for x in
                                                 part.keys(r_ev[mine]))).sum())
        local["watch"] = _concat(watch, np.int64)
        local["by"] = _concat(wanted_by, np.int64)
        local["at"] = _concat(wanted_at, np.int64)
        return bad
    bad = sum(parts.allgather(answers))
    # the reads and the requests have served: the rounds below hold, per read
    # point, only who reads it (an array per read of these would stay through
    # every round, at the root causes' peak)
    del rows, r_loc, r_ev, remote, r_rows, inverse, rt, rl, rp, order, last, keys, holder
    del latest, asked
    if bad or ALWAYS_MERGED:
        return _replay_merged(ctx, parts, replay, points)
    # one watch entry per point: the parts that read it, in the order asked
    w_rows, w_first, w_inverse = np.unique(local["watch"], return_index=True,
                                           return_inverse=True)
    by_watch = np.argsort(w_inverse, kind="stable")
    w_offset = np.searchsorted(w_inverse[by_watch], np.arange(len(w_rows) + 1))
    w_by, w_at = local["by"][by_watch], local["at"][by_watch]
    # the rounds read the watch entries as ordered here, not as asked
    del local, w_first, w_inverse, by_watch
    run = _core.RcReplay(replay, own.astype(np.uint8).tobytes(), w_rows.astype(np.int64))
    n_sources = replay.n_sources
    while True:
        parts.stats["replay_rounds"] += 1
        taken = run.advance()
        done, costs = run.completed()
        done = np.frombuffer(done, np.int64)
        costs = np.frombuffer(costs, np.float64).reshape(-1, n_sources)
        left = run.remaining()

        def sends():
            # each completed point to every part that reads it
            count = w_offset[done + 1] - w_offset[done]
            entry = np.repeat(w_offset[done] - np.concatenate(([0], np.cumsum(count)[:-1])),
                              count) + np.arange(int(count.sum()))
            to, at = w_by[entry], w_at[entry]
            which = np.repeat(np.arange(len(done)), count)
            # every part learns what every part did: who has wait states left, and
            # whether anything moved anywhere
            status = {"left": left, "moved": taken + len(to)}
            out = [dict(status, at=np.empty(0, np.int64), cost=np.empty((0, n_sources)))
                   for _ in range(parts.size)]
            for p in np.unique(to).tolist():
                sel = to == p
                out[p] = dict(status, at=at[sel], cost=costs[which[sel]])
            return out
        got = parts.alltoall(sends)
        for q, g in enumerate(got):
            if len(g["at"]):
                run.receive(np.ascontiguousarray(asked_rows[q][g["at"]]),
                            np.ascontiguousarray(g["cost"]).ravel())
        if all(g["left"] == 0 for g in got):
            break
        if not any(g["moved"] for g in got):
            raise RuntimeError("the long-term replay in parts stopped with %d wait states left: "
                               "no part can go on" % sum(g["left"] for g in got))
    return run.finish()


# -- the replay's inputs in terms of the whole trace, merged on one part ---------------

#: the batches' places in the replay on one process: the waits of each source,
#: then the MPI collectives, then the OpenMP barriers
def _slot(batch) -> tuple:
    from .kinds import DelayKind

    if isinstance(batch, WaitBatch):
        return (0, int(batch.source))
    omp = len(batch.kind) and int(batch.kind[0]) == int(DelayKind.OMP_BARRIER)
    return (1, 1 if omp else 0)


def inputs(parts: Parts, replay: Replay, points) -> dict:
    """This part's replay inputs in terms of the whole trace: its own points
    (event keys, (time, location, position), waiting times), its batches with
    point rows and events as event keys (-1: none), and its known costs.  What
    a part writes to a file when the parts are analysed one after another."""
    part = parts.part
    own_rows = np.nonzero(parts.own[points.location])[0]
    ev = points.event[own_rows]
    t, l, p = part.keys(ev)

    def key_of_rows(rows):
        rows = np.asarray(rows, np.int64)
        out = np.full(len(rows), -1, dtype=np.int64)
        ok = rows >= 0
        out[ok] = part.event_keys(points.event[rows[ok]])
        return out

    def order_of(events):
        t, l, p = part.keys(events)
        return np.stack((np.asarray(t, np.int64), np.asarray(l, np.int64),
                         np.asarray(p, np.int64)))
    batches = []
    for b in replay.waits:
        batches.append({"slot": _slot(b), "source": int(b.source), "row": key_of_rows(b.row),
                        "delayer_location": b.delayer_location,
                        "delayer": part.event_keys(b.delayer_event),
                        "delayer_order": order_of(b.delayer_event), "scale": b.scale,
                        "denominator": b.denominator, "delays": b.delays.__dict__,
                        "between_offset": b.between_offset,
                        "between_row": key_of_rows(b.between_row)})
    for c in replay.collectives:
        batches.append({"slot": _slot(c), "kind": c.kind,
                        "delayer_location": c.delayer_location,
                        "delayer": part.event_keys(c.delayer_event),
                        "delayer_order": order_of(c.delayer_event),
                        "member_offset": c.member_offset, "between_offset": c.between_offset,
                        "between_row": key_of_rows(c.between_row),
                        "member_row": key_of_rows(c.member_row), "member_wait": c.member_wait,
                        "member_delay_sum": c.member_delay_sum, "member_prop": c.member_prop,
                        "member_met": _met_keys(part, c.member_met),
                        "member_delay_query": c.member_delay_query,
                        "delays": c.delays.__dict__})
    costs = [{"source": int(k.source), "row": key_of_rows(k.row), "value": k.value}
             for k in replay.costs]
    return {"n_sources": replay.n_sources, "inputs": replay.inputs,
            "point_key": part.event_keys(ev),
            "point_order": np.stack((np.asarray(t, np.int64), np.asarray(l, np.int64),
                                     np.asarray(p, np.int64))),
            "point_wait": points.wait[own_rows], "batches": batches, "costs": costs}


def _met_keys(part, met: np.ndarray) -> np.ndarray:
    """The events where members were met alone (-1: at the group point), as
    event keys."""
    met = np.asarray(met, np.int64)
    out = np.full(len(met), -1, dtype=np.int64)
    ok = met >= 0
    out[ok] = part.event_keys(met[ok])
    return out


def merged_replay(every: List[dict]):
    """The replay of the whole trace from every part's inputs (in the order of
    the parts): the points merged in the whole trace's order, the batches
    merged in their places (the parts' in order within each, which keeps
    every location's wait states in their order), the events numbered by
    their place in the whole trace among those the replay names.  Returns the
    Replay record (for rc_long_term)."""
    point_key = _concat([e["point_key"] for e in every], np.int64)
    point_order = np.concatenate([e["point_order"] for e in every], axis=1)
    point_wait = _concat([e["point_wait"] for e in every], np.float64)
    # events the replay names: the points, the wait states' own points, where
    # members were met
    names = [point_key]
    orders = [point_order]
    for e in every:
        for b in e["batches"]:
            names.append(b["delayer"])
            orders.append(b["delayer_order"])
    all_keys = np.concatenate(names)
    all_order = np.concatenate(orders, axis=1)
    by_order = np.lexsort((all_order[2], all_order[1], all_order[0]))
    ranked_keys = all_keys[by_order]
    # an event's number: its place among the distinct events, in the trace's order
    distinct = np.ones(len(ranked_keys), dtype=bool)
    if len(ranked_keys) > 1:
        o = all_order[:, by_order]
        distinct[1:] = (np.diff(o, axis=1) != 0).any(axis=0)
    number = np.cumsum(distinct) - 1
    key_sorted = np.argsort(ranked_keys, kind="stable")

    def event_of(keys):
        keys = np.asarray(keys, np.int64)
        out = np.full(len(keys), -1, dtype=np.int64)
        ok = keys >= 0
        at = np.searchsorted(ranked_keys[key_sorted], keys[ok])
        out[ok] = number[key_sorted[np.minimum(at, len(key_sorted) - 1)]]
        return out
    # the points, as rows in the trace's order
    p_order = np.lexsort((point_order[2], point_order[1], point_order[0]))
    p_key_sorted = np.argsort(point_key, kind="stable")
    row_of_sorted = np.empty(len(point_key), dtype=np.int64)
    row_of_sorted[p_order] = np.arange(len(point_key))

    def row_of(keys):
        keys = np.asarray(keys, np.int64)
        out = np.full(len(keys), -1, dtype=np.int64)
        ok = keys >= 0
        at = np.searchsorted(point_key[p_key_sorted], keys[ok])
        at = np.minimum(at, max(len(point_key) - 1, 0))
        if ok.any() and not (point_key[p_key_sorted][at] == keys[ok]).all():
            raise RuntimeError("the merged long-term replay reads a point no part holds")
        out[ok] = row_of_sorted[p_key_sorted[at]]
        return out
    replay = Replay(n_sources=every[0]["n_sources"], inputs=every[0]["inputs"],
                    point_event=event_of(point_key[p_order]),
                    point_location=point_order[1][p_order], point_wait=point_wait[p_order])
    slots = sorted({b["slot"] for e in every for b in e["batches"]})
    for slot in slots:
        batches = [b for e in every for b in e["batches"] if b["slot"] == slot]
        delays = _merged_maps([b["delays"] for b in batches])
        if slot[0] == 0:
            replay.waits.append(WaitBatch(
                source=slot[1], event=event_of(_concat([b["row"] for b in batches], np.int64)),
                row=row_of(_concat([b["row"] for b in batches], np.int64)),
                delayer_location=_concat([b["delayer_location"] for b in batches], np.int64),
                delayer_event=event_of(_concat([b["delayer"] for b in batches], np.int64)),
                scale=_concat([b["scale"] for b in batches], np.float64),
                denominator=_concat([b["denominator"] for b in batches], np.float64),
                delays=delays, between_offset=_merged_offsets([b["between_offset"]
                                                               for b in batches]),
                between_row=row_of(_concat([b["between_row"] for b in batches], np.int64))))
        else:
            queries = np.cumsum([0] + [len(b["delays"]["offset"]) - 1 for b in batches])
            replay.collectives.append(CollectiveInstances(
                kind=_concat([b["kind"] for b in batches], np.int64),
                delayer_location=_concat([b["delayer_location"] for b in batches], np.int64),
                delayer_event=event_of(_concat([b["delayer"] for b in batches], np.int64)),
                member_offset=_merged_offsets([b["member_offset"] for b in batches]),
                between_offset=_merged_offsets([b["between_offset"] for b in batches]),
                between_row=row_of(_concat([b["between_row"] for b in batches], np.int64)),
                member_event=event_of(_concat([b["member_row"] for b in batches], np.int64)),
                member_row=row_of(_concat([b["member_row"] for b in batches], np.int64)),
                member_wait=_concat([b["member_wait"] for b in batches], np.float64),
                member_delay_sum=_concat([b["member_delay_sum"] for b in batches], np.float64),
                member_prop=_concat([b["member_prop"] for b in batches], np.float64),
                member_met=event_of(_concat([b["member_met"] for b in batches], np.int64)),
                member_delay_query=_concat([np.asarray(b["member_delay_query"]) + q
                                            for b, q in zip(batches, queries)], np.int64),
                delays=delays))
    for e in every:
        for c in e["costs"]:
            replay.costs.append(KnownCosts(source=c["source"], row=row_of(c["row"]),
                                           value=c["value"]))
    return replay


def _merged_offsets(offsets) -> np.ndarray:
    out, base = [np.zeros(1, np.int64)], 0
    for o in offsets:
        o = np.asarray(o, np.int64)
        out.append(o[1:] + base)
        base += int(o[-1])
    return np.concatenate(out)


def _merged_maps(maps) -> CallPathMap:
    return CallPathMap(_merged_offsets([m["offset"] for m in maps]),
                       _concat([m["cnode"] for m in maps], np.int64),
                       _concat([m["value"] for m in maps], np.float64))


def _replay_merged(ctx, parts: Parts, replay: Replay, points) -> dict:
    """Collective: the replay of every part's inputs on part 0, each part's
    severities sent back to it (see the module)."""
    mine = inputs(parts, replay, points)
    got = parts.alltoall(lambda: [mine] + [None] * (parts.size - 1))
    result = {}

    def results():
        if parts.rank != 0:
            return [None] * parts.size
        merged = _core.rc_long_term(merged_replay(got))
        out = []
        for p in range(parts.size):
            sev = []
            for s in merged["severity"]:
                loc = np.frombuffer(s["location"], np.int64)
                sel = parts.part_of[loc] == p
                sev.append({k: np.frombuffer(s[k], np.int64 if k != "value" else
                                             np.float64)[sel].tobytes()
                            for k in ("location", "cnode", "value")})
            out.append({"severity": sev, "out_of_order": merged["out_of_order"]})
        return out
    back = parts.alltoall(results)
    result.update(back[0])
    return result


__all__ = ["replay_in_parts", "inputs", "merged_replay"]
