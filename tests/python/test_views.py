"""Views of a trace (trace.filter): every analysis accepts one.  The view of the whole
trace gives exactly the whole trace's results; views that split a trace (by time, by
location) add up to them; a region filter keeps the call paths inside the region."""
import numpy as np
import pandas as pd
import pytest

from conftest import reference_trace

import earlc
from earlc.view import TraceView

PROFILES = ("flat_profile", "call_tree", "load_imbalance", "idle_time")


def traces(tmp_path):
    yield earlc.synth("ring", tmp_path / "ring", ranks=4, iterations=5, delay=300,
                      delay_rank=1).path
    yield earlc.synth("hybrid", tmp_path / "hybrid", ranks=3, threads=2, iterations=2,
                      delay=200, delay_rank=1).path
    yield earlc.synth("collectives", tmp_path / "coll", ranks=5, iterations=2, split=2).path
    for name in ("pipit-ping-pong", "sstmacro-mpi-coverage", "casita-jacobi-hybrid"):
        try:
            yield reference_trace(name)
        except pytest.skip.Exception:
            continue


def same_report(a, b):
    return [n for n in a._tables
            if not all(np.array_equal(x, y) for x, y in zip(a.cells(n), b.cells(n)))]


def test_the_whole_view_is_the_whole_trace(tmp_path):
    for path in traces(tmp_path):
        trace = earlc.open(path)
        v = trace.filter()
        assert len(v) == len(trace)
        whole, part = earlc.analyze(trace), earlc.analyze(v)
        assert same_report(whole, part) == [], path
        for name in whole.worst:
            assert np.array_equal(whole.worst[name].where, part.worst[name].where)
        for f in PROFILES:
            pd.testing.assert_frame_equal(getattr(trace, f)(), getattr(v, f)())
        pd.testing.assert_frame_equal(trace.flat_profile(per_location=True),
                                      v.flat_profile(per_location=True))
        # the time profile of a view is computed in numpy: equal to the C kernel's
        pd.testing.assert_frame_equal(trace.time_profile(bins=9), v.time_profile(bins=9),
                                      check_dtype=False)
        assert np.array_equal(trace.comm_matrix(), v.comm_matrix())


def split_tick(trace, frac):
    t = trace.events.time.view(np.int64)
    k = len(trace) // frac
    while t[k + 1] - t[k] < 2:
        k += 1
    return int((t[k] + t[k + 1]) // 2)  # between two events


def test_views_that_split_a_trace_add_up(tmp_path):
    for path in traces(tmp_path):
        trace = earlc.open(path)
        whole = earlc.analyze(trace)
        end = trace.start_time + trace.duration_ticks
        b = split_tick(trace, 3)
        halves = [TraceView(trace, _ticks=(trace.start_time, b)), TraceView(trace, _ticks=(b, end))]
        n = len(trace.locations)
        parts = [trace.filter(locations=range(n // 2)), trace.filter(locations=range(n // 2, n))]
        for split in (halves, parts):
            assert sum(len(v) for v in split) == len(trace)
            reports = [earlc.analyze(v) for v in split]
            for name in whole._tables:
                assert whole.total(name) == sum(r.total(name) for r in reports), (path, name)
                assert whole.occurrences(name) == sum(r.occurrences(name) for r in reports)
            flat = [v.flat_profile() for v in split]
            exc = pd.concat(flat).groupby("region")["time_exc"].sum()
            want = trace.flat_profile().groupby("region")["time_exc"].sum()
            pd.testing.assert_series_equal(exc.sort_index(), want.sort_index())


def test_window_occurrences_are_the_whole_analysis_ones(tmp_path):
    """An occurrence counts in the view holding the event it is charged to, with the
    severity the whole analysis gives it."""
    path = earlc.synth("ring", tmp_path / "r", ranks=4, iterations=8, delay=300,
                       delay_rank=2).path
    trace = earlc.open(path)
    whole = earlc.analyze(trace)
    v = trace.filter(start=trace.duration * 0.3, end=trace.duration * 0.6, locations=[1, 3])
    part = earlc.analyze(v)
    inst = whole.instances("late_sender")
    inside = v.contains(inst.where)
    assert 0 < inside.sum() < len(inst)
    assert part.total("late_sender") == int(inst.severity[inside].sum())
    assert part.occurrences("late_sender") == int(inside.sum())
    assert set(part.worst["late_sender"].where.tolist()) <= set(inst.where[inside].tolist())
    # times are clipped to the window
    assert part.total("time") <= 2 * (v.last - v.first)


def test_region_filter(tmp_path):
    path = earlc.synth("ring", tmp_path / "r", ranks=4, iterations=4, delay=300,
                       delay_rank=2).path
    trace = earlc.open(path)
    whole = earlc.analyze(trace)
    v = trace.filter(regions=["ring_exchange"])
    part = earlc.analyze(v)
    inside = [c for c, p in enumerate(whole.callpaths) if "/ring_exchange" in p]
    for name in ("time", "late_sender", "visits"):
        c, l, x = whole.cells(name)
        keep = np.isin(c, inside)
        pc, pl, px = part.cells(name)
        assert np.array_equal(pc, c[keep]) and np.array_equal(px, x[keep]), name
    assert part.total("comp") == 0
    assert set(v.flat_profile()["region"]) == {"ring_exchange", "MPI_Send", "MPI_Recv"}
    ev = trace.events
    assert set(ev.kind[v.ids].tolist()) == {earlc.KINDS[k] for k in
                                            ("ENTER", "LEAVE", "MPI_SEND", "MPI_RECV")}
    # views narrow further: a region filter and a location filter together
    w = v.filter(locations=[0])
    assert set(ev.location[w.ids].tolist()) == {0} and set(w.ids) <= set(v.ids)


def test_search_races_and_communication_of_a_view(tmp_path):
    path = earlc.synth("master-worker", tmp_path / "mw", ranks=4, iterations=3).path
    trace = earlc.open(path)
    v = trace.filter(start=trace.duration / 3)
    text = 'S := ["", "MPI_SEND", ""]; R := ["", "MPI_RECV", ""]; S $s; R $r; P := $s --> $r;'
    whole = trace.search(text)
    part = v.search(text)
    keep = v.contains(whole.events[:, 0]) & v.contains(whole.events[:, 1])
    assert np.array_equal(part.events, whole.events[keep]) and 0 < len(part) < len(whole)
    first = v.search(text, limit=3)
    assert first.truncated and np.array_equal(first.events, part.events[:3])
    r_whole = earlc.races(trace, wildcard="all")
    r_part = earlc.races(v, wildcard="all")
    assert np.array_equal(r_part.recv, r_whole.recv[v.contains(r_whole.recv)])
    assert len(r_part) == sum(len(r_whole.alternatives(int(x))) for x in r_part.recv)
    m = v.comm_matrix(output="count")
    ev = trace.events
    sends = np.nonzero(np.isin(ev.kind, [earlc.KINDS["MPI_SEND"], earlc.KINDS["MPI_ISEND"]]))[0]
    assert m.sum() == v.contains(sends).sum()
    vals, edges = v.comm_over_time(output="count", bins=4)
    assert vals.sum() == m.sum() and edges[0] == v.first and edges[-1] == v.last


def test_bad_filters(tmp_path):
    path = earlc.synth("ring", tmp_path / "r", ranks=2, iterations=2).path
    trace = earlc.open(path)
    with pytest.raises(ValueError, match="no region named 'nosuch'"):
        trace.filter(regions=["nosuch"])
    with pytest.raises(ValueError, match="location 7 does not exist"):
        trace.filter(locations=[7])
    with pytest.raises(ValueError, match="ends"):
        trace.filter(start=1e-6, end=0.5e-6)
    with pytest.raises(ValueError, match="root causes"):
        earlc.analyze(trace.filter(), properties="all")
    with pytest.raises(ValueError, match="outside the trace"):
        trace.filter(start=trace.duration * 2 + 1)
