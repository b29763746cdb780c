"""The profiles computed in C (earl_profile.h through earlc._core) equal the
numpy passes they replaced (profiles_reference.py), on the bundled traces,
generated ones of every program shape and the real traces."""
import numpy as np
import pandas as pd
import pytest

import earlc
from earlc import _core, profiles
from earlc.synth import synth
from conftest import REFERENCE_NAMES, ROOT, reference_trace
import profiles_reference as ref

BUNDLED = ["hybrid", "pingpong-wrong-order", "collectives", "omp-locks", "demo-ring",
           "ring-late-sender"]
GENERATED = {"halo": dict(ranks=4, iterations=20), "omp": dict(threads=3, iterations=8),
             "hybrid": dict(ranks=2, threads=3, iterations=6),
             "master-worker": dict(ranks=4, iterations=20)}


BOUNDS = ["bin_start", "bin_end", "bin_start_ticks", "bin_end_ticks"]


def as_shown(trace, ticks_frame):
    """The reference's frame (bounds and regions in ticks) as time_profile shows it:
    bounds in seconds from the start with their ticks beside them, regions in seconds."""
    res, t0 = trace.timer_resolution, trace.start_time
    out = pd.DataFrame({"bin_start": (ticks_frame["bin_start"] - t0) / res,
                        "bin_end": (ticks_frame["bin_end"] - t0) / res,
                        "bin_start_ticks": ticks_frame["bin_start"],
                        "bin_end_ticks": ticks_frame["bin_end"]})
    for c in ticks_frame.columns[2:]:
        out[c] = ticks_frame[c] / res
    return out


def check(trace):
    res = trace.timer_resolution
    for bins in (1, 7, 50, 1000):
        got = profiles.time_profile(trace, bins=bins)
        want = ref.time_profile(trace, bins=bins)
        pd.testing.assert_frame_equal(got, as_shown(trace, want), check_dtype=False)
        assert np.round(got.drop(columns=BOUNDS).to_numpy() * res).sum() == \
            want.drop(columns=["bin_start", "bin_end"]).to_numpy().sum()
    for per_location in (False, True):
        got = profiles._inclusive(trace, per_location)
        assert np.array_equal(got, ref.inclusive(trace, per_location))


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled(name):
    check(earlc.open(ROOT / "traces" / name))


@pytest.mark.parametrize("kind", sorted(GENERATED))
def test_generated(kind, tmp_path):
    synth(kind, tmp_path / kind, **GENERATED[kind])
    check(earlc.open(tmp_path / kind))


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_real(name):
    check(earlc.open(reference_trace(name)))


def test_bad_arguments_are_clear_errors():
    trace = earlc.open(ROOT / "traces" / "hybrid")
    with pytest.raises(TypeError, match="_core.States"):
        _core.profile_time(trace._core, 0, 10, 5, 3)
    with pytest.raises(ValueError, match="int64 event ids"):
        _core.profile_inclusive(trace._core, b"\0" * 8, 3)
    states = trace.states._core
    with pytest.raises(earlc.TraceError, match="at least one bin"):
        _core.profile_time(states, 0, 0, 5, 3)  # a span of 0 ticks
    with pytest.raises(ValueError, match="at least 1"):
        _core.profile_time(states, 0, 10, 0, 3)
    with pytest.raises(ValueError, match="bins must be at least 1"):
        profiles.time_profile(trace, bins=0)
