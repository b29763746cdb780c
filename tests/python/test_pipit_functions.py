"""The pipit functions earlc adds: comm_over_time, comm_by_process and loop-iteration
detection (detect_iterations, pipit's detect_pattern), against what the generated
traces are made of and against otf2-print's records of a real one."""
import numpy as np
import pytest

from conftest import otf2_print, reference_trace

import earlc


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipit") / "ring"
    earlc.synth("ring", path, ranks=4, iterations=7, bytes=1000, delay=300, delay_rank=1)
    return earlc.open(path)


def test_comm_over_time(ring):
    vals, edges = ring.comm_over_time(bins=10)
    assert vals.dtype == np.int64 and len(vals) == 10 and len(edges) == 11
    assert edges[0] == ring.start_time and edges[-1] == ring.start_time + ring.duration_ticks
    assert vals.sum() == 4 * 7 * 1000
    counts, _ = ring.comm_over_time(output="count", bins=10)
    assert counts.sum() == 28
    # each send is in the bin of its time
    ev = ring.events
    sends = np.nonzero(ev.kind == earlc.KINDS["MPI_SEND"])[0]
    t = ev.time[sends].view(np.int64)
    want = np.histogram(t, bins=edges)[0]
    assert np.array_equal(counts, want)
    recv, _ = ring.comm_over_time(output="count", message="receive", bins=10)
    assert recv.sum() == 28 and not np.array_equal(recv, counts)
    for bad in (dict(output="size"), dict(message="both"), dict(bins=0)):
        with pytest.raises(ValueError):
            ring.comm_over_time(**bad)


def test_comm_by_process(ring):
    df = ring.comm_by_process()
    assert list(df.columns) == ["sent", "received"] and df.index.name == "rank"
    assert (df["sent"] == 7000).all() and (df["received"] == 7000).all()
    counts = ring.comm_by_process(output="count", by="location")
    m = ring.comm_matrix(output="count")
    assert np.array_equal(counts["sent"], m.sum(axis=1))
    assert np.array_equal(counts["received"], m.sum(axis=0))


def test_reference_trace_communication():
    path = reference_trace("pipit-ping-pong")
    trace = earlc.open(path)
    p = otf2_print(path)
    sends = sum(1 for evs in p.events.values() for k, _, _ in evs if k in ("MPI_SEND", "MPI_ISEND"))
    counts, _ = trace.comm_over_time(output="count", bins=7)
    assert counts.sum() == sends
    df = trace.comm_by_process(output="count")
    assert df["sent"].sum() == sends == df["received"].sum()


def test_iterations_of_a_generated_loop(ring):
    it = ring.detect_iterations()
    assert len(it) == 7 and it.phase == ["iteration"]
    ev = ring.events
    enters = ring.events.of_location(0).astype(np.int64)
    enters = enters[ev.kind[enters] == earlc.KINDS["ENTER"]]
    names = ring._region_name_array()
    iteration = enters[[names[r] == "iteration" for r in ev.region_of(enters).tolist()]]
    assert np.array_equal(it.first_event, iteration)
    df = it.to_dataframe()
    assert list(df["iteration"]) == list(range(7)) and (df["duration_ticks"] > 0).all()
    assert np.array_equal(df["duration_ticks"], df["end_ticks"] - df["start_ticks"])
    assert np.array_equal(df["start_ticks"], ring.events.time[it.first_event].view(np.int64))
    assert np.allclose(df["start"], ring.time_seconds(df["start_ticks"].to_numpy()))
    # the delayed rank's iterations are the longest on its location
    slow = ring.detect_iterations(location=1).to_dataframe()["duration"]
    fast = ring.detect_iterations(location=3).to_dataframe()["duration"]
    assert slow.sum() >= fast.sum()
    ids = it.events(2)
    assert ids[0] == it.first_event[2] and ids[-1] == it.last_event[2]
    assert set(ev.location[ids].tolist()) == {0}
    same = ring.detect_iterations(region="iteration")
    assert np.array_equal(same.first_event, it.first_event)


def test_iterations_without_a_loop_region():
    """pipit's ping-pong: main calls MPI_Send and MPI_Recv in turn, no iteration
    function: the period is found among main's calls."""
    trace = earlc.open(reference_trace("pipit-ping-pong"))
    it = trace.detect_iterations()
    assert it.phase == ["MPI_Send", "MPI_Recv"] and len(it) == 8
    other = trace.detect_iterations(location=1)
    assert other.phase == ["MPI_Recv", "MPI_Send"] and len(other) == 8


def test_nothing_repeats_and_bad_arguments(ring, tmp_path):
    with earlc.TraceWriter(tmp_path / "once", ranks=1) as w:
        w.enter(0, 10, "main")
        w.enter(0, 11, "setup")
        w.leave(0, 20, "setup")
        w.enter(0, 21, "solve")
        w.leave(0, 30, "solve")
        w.leave(0, 31, "main")
    it = earlc.open(tmp_path / "once").detect_iterations()
    assert len(it) == 0 and it.to_dataframe().empty
    with pytest.raises(ValueError, match="location 9 does not exist"):
        ring.detect_iterations(location=9)
    with pytest.raises(ValueError, match="no region named 'loop'"):
        ring.detect_iterations(region="loop")
