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


# location 0, stride 100: chunks after e11 (c1, 10 ticks) and before e12 (c2, 5)
CHUNKS = (i64(23, 24), i64(1, 2), i64(10, 5))


def test_chunk_sums_come_back_as_a_map_that_outlives_the_call():
    offset, cnode, value = _core.rc_chunk_sums(*CHUNKS, 100, 3, i64(0), i64(10), i64(13))
    gc.collect()
    assert np.frombuffer(offset, np.int64).tolist() == [0, 2]
    assert np.frombuffer(cnode, np.int64).tolist() == [1, 2]
    assert np.frombuffer(value, np.float64).tolist() == [10.0, 5.0]


def test_a_wrong_array_type_names_the_argument():
    with pytest.raises(ValueError, match="lo must be a contiguous int64 array"):
        _core.rc_chunk_sums(*CHUNKS, 100, 3, i64(0), f64(10), i64(13))
    with pytest.raises(ValueError, match="hi holds 2 values, 1 expected"):
        _core.rc_chunk_sums(*CHUNKS, 100, 3, i64(0), i64(10), i64(13, 14))


def test_what_the_core_rejects_is_a_trace_error():
    # a chunk's call path beyond the 2 of the call tree
    with pytest.raises(earlc.TraceError, match="call path 2"):
        _core.rc_chunk_sums(*CHUNKS, 100, 2, i64(0), i64(10), i64(13))
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
