"""The spilled timestamps of the analysis in turn (earlc.parts.spill): the
counts that number the events a report names must be those of a search over
the location's whole list of timestamps, for keys in every block, at block
edges, before the first and after the last event, and in blocks whose span
needs 64 bits."""
import numpy as np
import pytest

from earlc.parts.scratch import Scratch
from earlc.parts.spill import BLOCK, LocationTimes


@pytest.fixture
def spilled(tmp_path):
    rng = np.random.default_rng(7)
    times = LocationTimes(Scratch(str(tmp_path)))
    truth = {}
    for location, n in enumerate((1, BLOCK - 1, BLOCK, 10 * BLOCK + 3)):
        t = np.sort(rng.integers(0, 1 << 16, n)).astype(np.uint64)  # many equal times
        if n > 5 * BLOCK:
            t[3 * BLOCK:] += np.uint64(1 << 33)      # block 2 spans 2**32 ticks: 64 bits
            t[5 * BLOCK + 7:] += np.uint64(1 << 40)  # so does block 5
        for lo in range(0, n, 2 * BLOCK):            # added in chunks, as pass 1 does
            times.add(location, t[lo:lo + 2 * BLOCK])
        truth[location] = t
    return times, truth


@pytest.mark.parametrize("side", ["left", "right"])
def test_counts_equal_a_search_over_all_timestamps(spilled, side):
    times, truth = spilled
    for location, t in truth.items():
        probe = np.concatenate([t, t + np.uint64(1), t - np.uint64(1),
                                np.array([0, 1 << 62], dtype=np.uint64)])
        got = times.before(location, probe, side)
        np.testing.assert_array_equal(got, np.searchsorted(t, probe, side=side))


def test_count_before_orders_equal_times_by_location(spilled):
    times, truth = spilled
    t = truth[3][:50]
    for location in (0, 2, 3):
        key_loc = np.full(len(t), location)
        got = times.count_before(t, key_loc, np.zeros(len(t), dtype=np.int64))
        expect = sum(np.searchsorted(truth[l], t, side="right" if l < location else "left")
                     for l in truth if l != location)
        np.testing.assert_array_equal(got, expect)
