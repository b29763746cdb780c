"""The wait states of a window from the window's own analysis (analysis/window.py)
equal those of the whole analysis whose waiting call overlaps the window:
occurrence by occurrence (event charged, severity) per property, on generated
traces of every program shape and on the real traces, with windows at the start,
in the middle, at the end, between events and around long calls."""
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc.analysis.window import View, analyze_window, wait_state_properties
from earlc.synth import synth
from earlc.timeline import Window
from conftest import REFERENCE_NAMES, reference_trace

ROOT = Path(__file__).resolve().parents[2]

# (program, options): small enough to analyse many windows of each
PROGRAMS = {
    "ping-pong": dict(ranks=2, iterations=60, wrong_order=True),
    "ping-pong-any": dict(ranks=4, iterations=40, any_source=True),
    "halo": dict(ranks=6, iterations=30, delay=3000, delay_rank=2, delay_every=4),
    "ring": dict(ranks=5, iterations=30, eager_limit=0),
    "collectives": dict(ranks=5, iterations=20),
    "omp": dict(threads=4, iterations=20, lock_rounds=3),
    "hybrid": dict(ranks=3, threads=3, iterations=12),
    "master-worker": dict(ranks=5, iterations=40),
}

#: (start, end) as fractions of the trace's duration
FRACTIONS = [(0.0, 0.01), (0.0, 0.3), (0.2, 0.21), (0.37, 0.52), (0.5, 0.5), (0.66, 0.9),
             (0.95, 1.0), (0.0, 1.0)]


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def generated(request, tmp_path_factory):
    kind = request.param.split("-any")[0]
    out = tmp_path_factory.mktemp("window") / request.param
    synth(kind, out, **PROGRAMS[request.param])
    trace = earlc.open(out)
    return trace, earlc.analyze(trace)


def occurrences(win, found):
    """{property: sorted (where, severity)} of the occurrences whose waiting call
    overlaps the window."""
    out = {}
    for p, inst in found:
        if inst is None or not len(inst):
            continue
        overlaps = win.waiting_calls(inst.where)[3]
        rows = sorted(zip(inst.where[overlaps].tolist(), inst.severity[overlaps].tolist()))
        if rows:
            out[p.name] = rows
    return out


def whole(report):
    names = {p.name for p in wait_state_properties()}
    return [(p, report.instances(p.name)) for p in report.properties if p.name in names]


def check_window(trace, report, start, end, locations=None):
    d = trace.duration_ticks
    first = trace.start_time + int(start * d)
    last = trace.start_time + int(end * d)
    win = Window(trace, first, last, locations)
    want = occurrences(win, whole(report))
    got = occurrences(win, analyze_window(trace, win.lo, win.hi, win.locations.tolist()))
    assert got == want, (start, end, locations)
    # and what the export draws: the same spans
    a, b = win.wait_states(), win.wait_states(report)
    assert len(a) == len(b)
    key = lambda w: sorted(zip([w.names[k] for k in w.prop.tolist()], w.where.tolist(),
                               w.start.tolist(), w.end.tolist(), w.severity.tolist()))
    assert key(a) == key(b)
    return sum(len(v) for v in want.values())


def test_generated_windows(generated):
    trace, report = generated
    seen = sum(check_window(trace, report, s, e) for s, e in FRACTIONS)
    assert seen > 0  # the programs wait somewhere: the comparison compares something


def test_generated_windows_of_some_locations(generated):
    trace, report = generated
    n = len(trace.locations)
    for locations in ([0], list(range(1, n, 2)) or [0]):
        for s, e in FRACTIONS[1:5]:
            check_window(trace, report, s, e, locations)


def sliding(trace, report):
    """Windows one after another over the whole trace: every occurrence is found
    in the windows its call overlaps, with the whole analysis's severity."""
    edges = np.linspace(0, 1, 24)
    for s, e in zip(edges[:-1], edges[1:]):
        check_window(trace, report, float(s), float(e))


def test_many_small_windows(generated):
    sliding(*generated)


@pytest.mark.parametrize("name", ["hybrid", "pingpong-wrong-order", "collectives", "omp-locks",
                                  "ring-late-sender"])
def test_repository_traces(name):
    """pingpong-wrong-order needs the messages in flight at a window's end (a
    later receive of an earlier-sent message makes a Late Sender wrong-order)."""
    trace = earlc.open(ROOT / "traces" / name)
    report = earlc.analyze(trace)
    for s, e in FRACTIONS:
        check_window(trace, report, s, e)
    sliding(trace, report)


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_real_traces(name):
    trace = earlc.open(reference_trace(name))
    report = earlc.analyze(trace)
    for s, e in FRACTIONS:
        check_window(trace, report, s, e)


def test_view_is_small_for_a_small_window(generated):
    """The point of it: a 1% window's view holds a small part of the trace."""
    trace, _ = generated
    win = Window(trace, trace.start_time + trace.duration_ticks // 2,
                 trace.start_time + trace.duration_ticks // 2 + trace.duration_ticks // 100)
    view = View(trace, win.lo, win.hi, win.locations.tolist())
    assert len(view) < len(trace) // 4
    assert view.start <= win.lo and view.stop >= win.hi
    assert view.contains(np.arange(win.lo, win.hi)).all()


def test_wait_state_properties_come_with_their_publishers():
    order = [p.name for p in wait_state_properties()]
    assert order.index("p2p_messages") < order.index("late_sender") < \
        order.index("late_sender_wrong_order")
    assert "mpi_collectives" in order and "omp_barriers" in order
    assert "time" not in order and "visits" not in order  # no call-tree metrics
