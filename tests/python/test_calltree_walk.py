"""The call tree's walk (csrc/calltree.c) against a plain walk written here
from its definition: every event's call path follows from its enterptr, and
the time between two events of a location goes to the call path open on it
after the earlier one (idle when only its master's inherited frames are open).

The C walk keeps a stack of frames per location to skip look-ups; these traces
make the stack miss in every way it can (nesting deeper than the frames it
keeps, a LEAVE with nothing open, worker threads under inherited frames), so
that a frame used where enterptr says otherwise changes a number here.
"""
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc import KINDS, _core
from earlc.events import column
from earlc.synth import synth
from earlc.writer import TraceWriter

ROOT = Path(__file__).resolve().parents[2]
ENTER, LEAVE = KINDS["ENTER"], KINDS["LEAVE"]


def plain_walk(t):
    """(parent, region, event_cnode, {(cnode, location): [time, visits, idle]})."""
    ev = t.events
    enterptr = t.states.enterptr
    kind, loc, region, time = ev.kind, ev.location, ev.region, ev.time.astype(np.int64)
    paths, parent, regions = {}, [], []
    cnode = np.full(len(ev), -1, np.int64)
    rows = {}
    last = {}  # location -> (time, row key or None, idle)
    for i in range(len(ev)):
        k, l, e = int(kind[i]), int(loc[i]), int(enterptr[i])
        if k == ENTER:
            key = (int(cnode[e]) if e >= 0 else -1, int(region[i]))
            if key not in paths:
                paths[key] = len(parent)
                parent.append(key[0])
                regions.append(key[1])
            c = paths[key]
        else:
            c = int(cnode[e]) if e >= 0 else -1
        cnode[i] = c
        if k == ENTER:
            open_ = i
        elif k == LEAVE:
            open_ = int(enterptr[e]) if e >= 0 else -1
        else:
            open_ = e
        prev = last.get(l)
        if prev is not None and prev[1] is not None:
            rows[prev[1]][2 if prev[2] else 0] += int(time[i]) - prev[0]
        charged = int(cnode[open_]) if open_ >= 0 else -1
        idle = open_ >= 0 and int(loc[open_]) != l
        key = (charged, l) if charged >= 0 else None
        if key is not None:
            rows.setdefault(key, [0, 0, 0])
            if k == ENTER and not idle:
                rows[key][1] += 1
        last[l] = (int(time[i]), key, idle)
    return parent, regions, cnode, rows


def c_walk(ct):
    parent = column(ct, "parent", "i").tolist()
    regions = column(ct, "region", "I").tolist()
    cnode = np.asarray(column(ct, "event_cnode", "i"), np.int64)
    rows = {}
    for c, l, tm, v, idle in zip(*(column(ct, n, f).tolist() for n, f in (
            ("row_cnode", "i"), ("row_location", "i"), ("row_time", "Q"),
            ("row_visits", "Q"), ("row_idle", "Q")))):
        rows[(c, l)] = [tm, v, idle]
    return parent, regions, cnode, rows


def check(t):
    want = plain_walk(t)
    fresh = earlc.open(t.path)
    for threads in (1, 2):
        for got in (_core.CallTree(t.states._core, threads=threads),
                    _core.CallTree(_core.States(fresh._core, threads=threads, calltree=True))):
            parent, regions, cnode, rows = c_walk(got)
            assert parent == want[0]
            assert regions == want[1]
            assert np.array_equal(cnode, want[2])
            # rows with nothing counted are the C walk's own business
            assert {k: v for k, v in rows.items() if any(v)} == \
                {k: v for k, v in want[3].items() if any(v)}


def test_deep_recursion_and_stray_leaves(tmp_path):
    """Recursion 40 deep (the walk keeps 16 frames per location), LEAVEs of
    nothing open, and calls left open at the end."""
    path = tmp_path / "deep"
    with TraceWriter(path, ranks=3) as w:
        t = 1
        for r in range(3):
            w.enter(r, t, "main")
        for it in range(60):
            for r in range(3):
                depth = 5 + (it * 7 + r * 13) % 36
                for d in range(depth):
                    t += 1
                    w.enter(r, t, "f%d" % (d % 3))
                    if d % 5 == 2:
                        t += 1
                        w.send(r, t, (r + 1) % 3, tag=it)
                        t += 1
                        w.recv(r, t, (r + 2) % 3, tag=it)
                for d in reversed(range(depth)):
                    t += 1
                    w.leave(r, t, "f%d" % (d % 3))
                if it % 17 == 4 and r == 1:
                    t += 1
                    w.leave(r, t, "stray")  # nothing of it is open
                t += 1
                w.enter(r, t, "compute")
                t += 3
                w.leave(r, t, "compute")
        for r in range(3):
            t += 1
            w.enter(r, t, "unfinished")  # never left
    trace = earlc.open(path)
    check(trace)


@pytest.mark.parametrize("name", ["hybrid", "omp-locks", "demo-ring", "collectives"])
def test_bundled_traces(name):
    check(earlc.open(ROOT / "traces" / name))


def test_worker_threads_under_their_masters_frames(tmp_path):
    synth("hybrid", tmp_path / "h", ranks=2, threads=4, events=30000)
    check(earlc.open(tmp_path / "h"))
