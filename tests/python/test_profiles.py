"""The pipit-style views (flat profile, call tree, time profile, load imbalance,
idle time, communication matrix, message histogram) against values computed
here by walking each location's events one by one with a stack, and the
communication matrix also against otf2-print's view of the archive."""
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import earlc
from conftest import otf2_print, reference_trace

ROOT = Path(__file__).resolve().parents[2]
ENTER, LEAVE = earlc.KINDS["ENTER"], earlc.KINDS["LEAVE"]
SENDS = {earlc.KINDS["MPI_SEND"], earlc.KINDS["MPI_ISEND"]}

TRACES = {
    "hybrid": lambda: ROOT / "traces" / "hybrid",
    "collectives": lambda: ROOT / "traces" / "collectives",
    "ring-late-sender": lambda: ROOT / "traces" / "ring-late-sender",
    "pipit-ping-pong": lambda: reference_trace("pipit-ping-pong"),
    "casita-ompt-nested": lambda: reference_trace("casita-ompt-nested"),
}


class Walk:
    """Per location, event by event: exclusive time of the innermost own region,
    inclusive spans, visits, call paths of the location's own stack."""

    def __init__(self, trace):
        ev = trace.events
        names = {r.id: r.name for r in trace.regions}
        self.exc = defaultdict(int)          # (region, loc) -> ticks
        self.inc = defaultdict(int)          # region -> ticks
        self.visits = defaultdict(int)       # region -> count
        self.path_exc = defaultdict(int)     # path -> ticks
        self.path_visits = defaultdict(int)
        self.segments = []                   # (region, start, end)
        self.busy = defaultdict(int)         # loc -> ticks inside own regions
        self.paradigm = {r.name: r.paradigm for r in trace.regions}
        for loc in range(len(trace.locations)):
            stack = []
            prev = None
            ids = ev.of_location(loc).tolist()
            for i in ids:
                t = int(ev.time[i])
                if stack and prev is not None and t > prev:
                    name = stack[-1][0]
                    self.exc[(name, loc)] += t - prev
                    self.path_exc["/".join(s[0] for s in stack)] += t - prev
                    self.busy[loc] += t - prev
                    self.segments.append((name, prev, t))
                k = int(ev.kind[i])
                if k == ENTER:
                    name = names[int(ev.region[i])]
                    stack.append((name, t))
                    self.visits[name] += 1
                    self.path_visits["/".join(s[0] for s in stack)] += 1
                elif k == LEAVE and stack:
                    name, t_enter = stack.pop()
                    self.inc[name] += t - t_enter
                prev = t
            last = int(ev.time[ids[-1]]) if ids else 0
            for name, t_enter in stack:
                self.inc[name] += last - t_enter


@pytest.fixture(scope="module", params=sorted(TRACES))
def walked(request):
    trace = earlc.open(TRACES[request.param]())
    return request.param, trace, Walk(trace)


def test_flat_profile(walked):
    _, trace, w = walked
    flat = trace.flat_profile()
    got = {r.region: (r.time_exc_ticks, r.time_inc_ticks, r.visits) for r in flat.itertuples()}
    exc = defaultdict(int)
    for (name, _), v in w.exc.items():
        exc[name] += v
    want = {n: (exc.get(n, 0), w.inc[n], w.visits[n]) for n in w.visits}
    assert got == want
    assert list(flat.time_exc_ticks) == sorted(flat.time_exc_ticks, reverse=True)
    # what a person reads: seconds, the exact ticks beside them
    res = trace.timer_resolution
    assert list(flat.time_exc) == list(flat.time_exc_ticks / res)
    assert list(flat.time_inc) == list(flat.time_inc_ticks / res)
    per = trace.flat_profile(per_location=True)
    got = {(r.region, r.location): r.time_exc_ticks for r in per.itertuples() if r.time_exc_ticks}
    assert got == {k: v for k, v in w.exc.items() if v}


def test_call_tree(walked):
    name, trace, w = walked
    ct = trace.call_tree()
    # a root the walk here does not know (the program, where the trace records
    # PROGRAM_BEGIN) holds the region paths it finds; compare below it
    known = set(w.path_exc) | set(w.path_visits)
    prefix = {r.id: r.path + "/" for r in ct.itertuples() if r.parent < 0
              and r.path not in known}
    if prefix:
        ct = ct[~ct.id.isin(list(prefix))].copy()
        for root, head in prefix.items():
            ct["path"] = [p[len(head):] if p.startswith(head) else p for p in ct["path"]]
        ct["depth"] -= 1
    if any(l.thread > 0 for l in trace.locations):
        # worker threads hang below their master's parallel region: compare the
        # totals only (the walk here knows each location's own stack)
        assert ct.time_exc_ticks.sum() == sum(w.path_exc.values())
        assert ct.visits.sum() == sum(w.path_visits.values())
        return
    got = {r.path: (r.time_exc_ticks, r.visits) for r in ct.itertuples()
           if r.time_exc_ticks or r.visits}
    want = {p: (w.path_exc.get(p, 0), w.path_visits.get(p, 0))
            for p in set(w.path_exc) | set(w.path_visits)}
    assert got == want
    for r in ct.itertuples():
        subtree = sum(v for p, v in w.path_exc.items() if p == r.path or p.startswith(r.path + "/"))
        assert r.time_inc_ticks == subtree, r.path
        assert r.time_inc == subtree / trace.timer_resolution
        assert r.depth == r.path.count("/")


def test_time_profile(walked):
    _, trace, w = walked
    bins = 7
    tp = trace.time_profile(bins=bins)
    t0, span = trace.start_time, max(trace.duration_ticks, 1)
    edges = [t0 + k * span // bins for k in range(bins + 1)]
    assert list(tp.bin_start_ticks) == edges[:-1] and list(tp.bin_end_ticks) == edges[1:]
    # the bounds a person reads: seconds from the trace's start, the first one 0
    res = trace.timer_resolution
    assert list(tp.bin_start) == [(e - t0) / res for e in edges[:-1]]
    assert list(tp.bin_end) == [(e - t0) / res for e in edges[1:]]
    assert tp.bin_start[0] == 0.0 and tp.bin_end.iloc[-1] == pytest.approx(trace.duration)
    want = defaultdict(lambda: [0] * bins)
    for name, s, e in w.segments:
        for b in range(bins):
            overlap = min(e, edges[b + 1]) - max(s, edges[b])
            if overlap > 0:
                want[name][b] += overlap
    for name, values in want.items():
        assert list(np.round(tp[name] * res).astype(np.int64)) == values, name
    norm = trace.time_profile(bins=bins, normalized=True)
    cols = [c for c in norm.columns if not c.startswith(("bin_start", "bin_end"))]
    sums = norm[cols].sum(axis=1)
    assert np.allclose(sums[sums > 0], 1.0)


def test_load_imbalance(walked):
    _, trace, w = walked
    li = trace.load_imbalance(top=2)
    n = len(trace.locations)
    for r in li.itertuples():
        values = [w.exc.get((r.region, l), 0) for l in range(n)]
        assert (r.min_ticks, r.max_ticks) == (min(values), max(values))
        assert r.mean_ticks == pytest.approx(sum(values) / n)
        res = trace.timer_resolution
        assert (r.min, r.max) == (min(values) / res, max(values) / res)
        assert r.mean == pytest.approx(sum(values) / n / res)
        mean = sum(values) / n
        assert r.imbalance == pytest.approx(max(values) / mean if mean else 0.0)
        assert values[r.top_locations[0]] == max(values)
    gains = list(li["max_ticks"] - li["mean_ticks"])
    assert gains == sorted(gains, reverse=True)
    by_rank = trace.load_imbalance(by="rank")
    assert set(by_rank.region) == set(li.region)


def test_idle_time(walked):
    _, trace, w = walked
    span = trace.duration_ticks
    idle = trace.idle_time()
    assert list(idle.idle_ticks) == [span - w.busy[l] for l in range(len(trace.locations))]
    assert list(idle.idle) == list(idle.idle_ticks / trace.timer_resolution)
    with_mpi = trace.idle_time(mpi=True)
    for l in range(len(trace.locations)):
        mpi = sum(v for (name, loc), v in w.exc.items()
                  if loc == l and w.paradigm.get(name) == "MPI")
        assert with_mpi.idle_ticks[l] == span - w.busy[l] + mpi


def python_sends(trace):
    ev = trace.events
    return [(int(ev.location[i]), int(ev.peer[i]), int(ev.bytes[i]))
            for i in range(len(trace)) if int(ev.kind[i]) in SENDS]


def test_comm_matrix(walked):
    _, trace, w = walked
    n = len(trace.locations)
    want_bytes = np.zeros((n, n), dtype=np.int64)
    want_count = np.zeros((n, n), dtype=np.int64)
    for s, d, b in python_sends(trace):
        want_bytes[s, d] += b
        want_count[s, d] += 1
    assert (trace.comm_matrix() == want_bytes).all()
    assert (trace.comm_matrix(output="count") == want_count).all()
    ranks = [l.rank for l in trace.locations]
    by_rank = trace.comm_matrix(by="rank")
    assert by_rank.sum() == want_bytes.sum()
    for s, d, b in python_sends(trace):
        assert by_rank[ranks[s], ranks[d]] >= b


def test_comm_matrix_against_otf2_print():
    anchor = reference_trace("pipit-ping-pong")
    trace = earlc.open(anchor)
    printed = otf2_print(anchor)
    index_of = {l.id: l.index for l in trace.locations}
    n = len(trace.locations)
    want = np.zeros((n, n), dtype=np.int64)
    for loc_id, events in printed.events.items():
        for kind, _, peer in events:
            if kind in ("MPI_SEND", "MPI_ISEND"):
                want[index_of[loc_id], index_of[peer]] += 1
    assert (trace.comm_matrix(output="count") == want).all()
    assert want.sum() > 0


def test_message_histogram(walked):
    _, trace, w = walked
    sizes = [b for _, _, b in python_sends(trace)]
    counts, edges = trace.message_histogram(bins=5)
    want_counts, want_edges = np.histogram(sizes, bins=5)
    assert (counts == want_counts).all() and np.allclose(edges, want_edges)
    assert counts.sum() == len(sizes)


def test_bad_arguments():
    trace = earlc.open(ROOT / "traces" / "demo-ring")
    with pytest.raises(ValueError):
        trace.comm_matrix(output="volume")
    with pytest.raises(ValueError):
        trace.comm_matrix(by="node")
    with pytest.raises(ValueError):
        trace.time_profile(bins=0)
    with pytest.raises(ValueError):
        trace.load_imbalance(by="thread")
