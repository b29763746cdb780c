"""The glue of the root-cause subsystem (earlc._core.rc_*): arrays of the wrong
type or size are a ValueError naming the argument, inputs the C core rejects an
earlc.TraceError saying what is wrong, and results come back as buffers that
outlive the call."""
import gc

import numpy as np
import pytest

import earlc
from earlc import _core


def i64(*values):
    return np.asarray(values, dtype=np.int64)


def f64(*values):
    return np.asarray(values, dtype=np.float64)


# location 0, stride 100: no event chunks, and a table of chunks after e11 (c1, 10
# ticks) and before e12 (c2, 5)
CHUNKS = (None, (i64(23, 24), i64(1, 2), i64(10, 5)))


def test_chunk_sums_come_back_as_a_map_that_outlives_the_call():
    offset, cnode, value = _core.rc_chunk_sums(CHUNKS, 100, 3, i64(0), i64(10), i64(13))
    gc.collect()
    assert np.frombuffer(offset, np.int64).tolist() == [0, 2]
    assert np.frombuffer(cnode, np.int64).tolist() == [1, 2]
    assert np.frombuffer(value, np.float64).tolist() == [10.0, 5.0]


def test_a_wrong_array_type_names_the_argument():
    with pytest.raises(ValueError, match="lo must be a contiguous int64 array"):
        _core.rc_chunk_sums(CHUNKS, 100, 3, i64(0), f64(10), i64(13))
    with pytest.raises(ValueError, match="hi holds 2 values, 1 expected"):
        _core.rc_chunk_sums(CHUNKS, 100, 3, i64(0), i64(10), i64(13, 14))


def test_what_the_core_rejects_is_a_trace_error():
    # a chunk's call path beyond the 2 of the call tree
    with pytest.raises(earlc.TraceError, match="call path 2"):
        _core.rc_chunk_sums(CHUNKS, 100, 2, i64(0), i64(10), i64(13))
    late = (i64(0, 1), i64(1), f64(3.0))
    with pytest.raises(earlc.TraceError, match="out of range"):
        _core.rc_excess(late, i64(1), late, i64(0), None, None)


def test_excess():
    late = (i64(0, 2), i64(1, 2), f64(5.0, 3.0))
    early = (i64(0, 1), i64(2), f64(4.0))
    (offset, cnode, value), total = _core.rc_excess(late, i64(0), early, i64(0), None, None)
    assert np.frombuffer(cnode, np.int64).tolist() == [1]
    assert np.frombuffer(value, np.float64).tolist() == [5.0]
    assert np.frombuffer(total, np.float64).tolist() == [5.0]


def _event_chunks():
    """One location: ENTER c1 at t0, ENTER c2 at t5, LEAVE c2 at t9 (c2's parent
    is c1): chunks of 5 ticks to c1 before e1's point and 4 to c2 after e2's."""
    roles = np.zeros(256, np.uint8)
    roles[earlc.KINDS["ENTER"]] = _core.RC_CHUNK_ENTER
    roles[earlc.KINDS["LEAVE"]] = _core.RC_CHUNK_LEAVE
    kind = np.asarray([earlc.KINDS["ENTER"], earlc.KINDS["ENTER"], earlc.KINDS["LEAVE"]],
                      np.uint8)
    table = _core.rc_event_chunks(1, np.zeros(3, np.int32), kind,
                                  np.asarray([0, 5, 9], np.uint64), np.asarray([1, 2, 2], np.int32),
                                  np.asarray([-1, 0, 1], np.int32), roles.tobytes(), -1)
    return table


def test_event_chunks_are_summed_between_points():
    table = _event_chunks()
    gc.collect()
    assert np.frombuffer(table[1], np.uint32).tolist() == [2, 5]
    chunks = (table, (i64(), i64(), i64()))
    # after e0's point up to e2's: c1's (c2's comes after e2's point); after e1's
    # point to the end: c2's
    offset, cnode, value = _core.rc_chunk_sums(chunks, 4, 3, i64(0, 0), i64(0, 1), i64(2, 3))
    assert np.frombuffer(offset, np.int64).tolist() == [0, 1, 2]
    assert np.frombuffer(cnode, np.int64).tolist() == [1, 2]
    assert np.frombuffer(value, np.float64).tolist() == [5.0, 4.0]


def test_event_chunks_of_the_wrong_type_are_named():
    offset, slot, cnode, ticks, far_chunk, far_ticks = _event_chunks()
    wrong = ((offset, np.frombuffer(slot, np.uint32).astype(np.int64), cnode, ticks, far_chunk,
              far_ticks), (i64(), i64(), i64()))
    with pytest.raises(ValueError, match="chunk slot must be a contiguous uint32 array"):
        _core.rc_chunk_sums(wrong, 4, 3, i64(0), i64(0), i64(2))
    with pytest.raises(ValueError, match="roles holds 3 values, 256 expected"):
        _core.rc_event_chunks(1, np.zeros(3, np.int32), np.zeros(3, np.uint8),
                              np.zeros(3, np.uint64), np.zeros(3, np.int32), np.zeros(1, np.int32),
                              b"abc", -1)


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
