"""The glue of the root-cause subsystem (earlc._core.rc_*): it reads records
(properties/rootcause/records.py) field by field; a field of the wrong type or
size is a ValueError, a missing one a TypeError, each naming the record and the
field; inputs the C core rejects are an earlc.TraceError saying what is wrong,
and results come back as buffers that outlive the call."""
import gc

import numpy as np
import pytest

import earlc
from earlc import _core
from earlc.properties.rootcause.records import (CallPathMap, ChunkTable, EventChunks,
                                               EventColumns, ExcessPairs, Spans, TimeChunks)


def i64(*values):
    return np.asarray(values, dtype=np.int64)


def f64(*values):
    return np.asarray(values, dtype=np.float64)


def chunks(table=None, stride=100, n_cnodes=3, events=None):
    """No event chunks by default, and on location 0 a table of chunks after e11
    (c1, 10 ticks) and before e12 (c2, 5)."""
    return TimeChunks(stride, n_cnodes, events,
                      table or ChunkTable(i64(23, 24), i64(1, 2), i64(10, 5)))


def test_chunk_sums_come_back_as_a_map_that_outlives_the_call():
    m = _core.rc_chunk_sums(chunks(), Spans(i64(0), i64(10), i64(13)))
    gc.collect()
    assert np.frombuffer(m["offset"], np.int64).tolist() == [0, 2]
    assert np.frombuffer(m["cnode"], np.int64).tolist() == [1, 2]
    assert np.frombuffer(m["value"], np.float64).tolist() == [10.0, 5.0]


class _Raw:
    """A record whose fields are taken as they are (no conversion)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def test_a_wrong_field_is_named_by_record_and_field():
    with pytest.raises(ValueError, match="spans.start must be a contiguous int64 array"):
        _core.rc_chunk_sums(chunks(), _Raw(location=i64(0), start=f64(10), end=i64(13)))
    with pytest.raises(ValueError, match="spans.end holds 2 values, 1 expected"):
        _core.rc_chunk_sums(chunks(), _Raw(location=i64(0), start=i64(10), end=i64(13, 14)))
    with pytest.raises(TypeError, match="spans must be a record with a field end"):
        _core.rc_chunk_sums(chunks(), _Raw(location=i64(0), start=i64(10)))
    with pytest.raises(ValueError, match="chunks.table.ticks holds 1 values, 2 expected"):
        _core.rc_chunk_sums(chunks(_Raw(key=i64(23, 24), cnode=i64(1, 2), ticks=i64(10))),
                            Spans(i64(0), i64(10), i64(13)))
    with pytest.raises(TypeError, match="chunks.stride must be an integer"):
        _core.rc_chunk_sums(TimeChunks(None, 3, None, ChunkTable(i64(), i64(), i64())),
                            Spans(i64(0), i64(10), i64(13)))


def test_what_the_core_rejects_is_a_trace_error():
    # a chunk's call path beyond the 2 of the call tree
    with pytest.raises(earlc.TraceError, match="call path 2"):
        _core.rc_chunk_sums(chunks(n_cnodes=2), Spans(i64(0), i64(10), i64(13)))
    late = CallPathMap(i64(0, 1), i64(1), f64(3.0))
    with pytest.raises(earlc.TraceError, match="out of range"):
        _core.rc_excess(ExcessPairs(late, i64(1), late, i64(0)))


def test_excess():
    late = CallPathMap(i64(0, 2), i64(1, 2), f64(5.0, 3.0))
    early = CallPathMap(i64(0, 1), i64(2), f64(4.0))
    r = _core.rc_excess(ExcessPairs(late, i64(0), early, i64(0)))
    assert np.frombuffer(r["excess"]["cnode"], np.int64).tolist() == [1]
    assert np.frombuffer(r["excess"]["value"], np.float64).tolist() == [5.0]
    assert np.frombuffer(r["sum"], np.float64).tolist() == [5.0]
    # within the call paths of another map: c1 only (c2 is not in it, and gives nothing)
    within = CallPathMap(i64(0, 1), i64(2), f64(1.0))
    r = _core.rc_excess(ExcessPairs(late, i64(0), early, i64(0), within, i64(0)))
    assert np.frombuffer(r["excess"]["cnode"], np.int64).tolist() == []


def _event_chunks():
    """One location: ENTER c1 at t0, ENTER c2 at t5, LEAVE c2 at t9 (c2's parent
    is c1): chunks of 5 ticks to c1 before e1's point and 4 to c2 after e2's."""
    roles = np.zeros(256, np.uint8)
    roles[earlc.KINDS["ENTER"]] = _core.RC_CHUNK_ENTER
    roles[earlc.KINDS["LEAVE"]] = _core.RC_CHUNK_LEAVE
    kind = np.asarray([earlc.KINDS["ENTER"], earlc.KINDS["ENTER"], earlc.KINDS["LEAVE"]],
                      np.uint8)
    return EventChunks.build(EventColumns(
        n_locations=1, location=np.zeros(3, np.int32), kind=kind,
        time=np.asarray([0, 5, 9], np.uint64), cnode=np.asarray([1, 2, 2], np.int32),
        parent=np.asarray([-1, 0, 1], np.int32), role=roles.tobytes(), program_cnode=-1))


def test_event_chunks_are_summed_between_points():
    table = _event_chunks()
    gc.collect()
    assert np.frombuffer(table.slot, np.uint32).tolist() == [2, 5]
    c = chunks(ChunkTable(i64(), i64(), i64()), stride=4, events=table)
    # after e0's point up to e2's: c1's (c2's comes after e2's point); after e1's
    # point to the end: c2's
    m = _core.rc_chunk_sums(c, Spans(i64(0, 0), i64(0, 1), i64(2, 3)))
    assert np.frombuffer(m["offset"], np.int64).tolist() == [0, 1, 2]
    assert np.frombuffer(m["cnode"], np.int64).tolist() == [1, 2]
    assert np.frombuffer(m["value"], np.float64).tolist() == [5.0, 4.0]


def test_event_chunks_of_the_wrong_type_are_named():
    table = _event_chunks()
    table.slot = np.frombuffer(table.slot, np.uint32).astype(np.int64)
    with pytest.raises(ValueError, match="chunks.events.slot must be a contiguous uint32 array"):
        _core.rc_chunk_sums(chunks(ChunkTable(i64(), i64(), i64()), stride=4, events=table),
                            Spans(i64(0), i64(0), i64(2)))
    with pytest.raises(ValueError, match="columns.role holds 3 values, 256 expected"):
        EventChunks.build(EventColumns(
            n_locations=1, location=np.zeros(3, np.int32), kind=np.zeros(3, np.uint8),
            time=np.zeros(3, np.uint64), cnode=np.zeros(3, np.int32),
            parent=np.zeros(1, np.int32), role=b"abc", program_cnode=-1))


def test_delays_longer_than_32_bits_of_ticks(tmp_path):
    """A rank delayed by 3 s at a 1 GHz timer: the time chunks between its ENTER
    and LEAVE events exceed 32 bits (the far table), and its short-term delay
    costs still explain exactly the wait of the rank that receives from it."""
    earlc.synth("ring", tmp_path / "ring", ranks=3, iterations=3, delay=3_000_000_000,
                delay_rank=1)
    trace = earlc.open(tmp_path / "ring")
    report = earlc.analyze(trace, properties="all")
    wait = dict(report.by_location("late_sender"))
    cost = dict(report.by_location("delay_latesender"))
    assert wait[2] > 3 * (1 << 31)  # three delayed iterations, each beyond 32 bits
    assert cost[1] == wait[2]


def test_at_cells_makes_the_additions_of_ufunc_at_in_its_order():
    """The critical path's sums per (location, call path) through one flat index:
    the same cells, added in the same order as np.add.at with a pair of index
    arrays (repeated cells, values whose sum depends on the order), also on a
    table that has no flat view."""
    from earlc.properties.rootcause.arrays import at_cells

    rng = np.random.default_rng(7)
    row, col = rng.integers(0, 5, 5000), rng.integers(0, 9, 5000)
    values = rng.standard_normal(5000) * 10.0 ** rng.integers(-8, 8, 5000)
    for ufunc in (np.add, np.subtract):
        for table in (rng.standard_normal((5, 9)), rng.standard_normal((9, 5)).T):
            want, got = table.copy(), table.copy(order="K")
            ufunc.at(want, (row, col), values)
            at_cells(ufunc, got, row, col, values)
            assert got.tobytes() == want.tobytes()


def test_the_root_causes_let_go_of_what_only_their_first_steps_read(tmp_path, monkeypatch):
    """What the analysis still holds once it is done (before it lets go of
    everything): not the points sorted by location for the interval queries nor
    the pair points (only the short-term steps read them, not the replay or the
    critical path), not the group points' rows; the collective wait states'
    narrow columns.  The report is unchanged (test_rootcause, test_parts)."""
    from earlc.analysis.context import AnalysisContext

    held = {}
    forget = AnalysisContext.forget_shared

    def snapshot(self):
        held.update({k: o._value for k, o in self._memo.items()})
        forget(self)
    monkeypatch.setattr(AnalysisContext, "forget_shared", snapshot)
    earlc.synth("halo", tmp_path / "h", ranks=4, iterations=8)
    earlc.analyze(tmp_path / "h", properties="all")
    assert "sync_points" in held and "delay_costs" in held  # the root causes ran
    assert "rc_points_by_location" not in held and "rc_pair_points" not in held
    assert "groups" not in held["rc_point_table"]
    cw = held["sync_points"].collective_waits
    assert len(cw.event)
    assert cw.kind.dtype == np.int8
    for column in (cw.location, cw.delayer_location, cw.instance, cw.comm):
        assert column.dtype == np.int32
    assert held["sync_points"].late_sender.wait.dtype == np.float64
