"""Logical time (earl_logical, earlc.logical): steps that respect the happened-before
order, lateness, the locations late most often, and the logical timeline picture.
An independent Python reference computes the steps of MPI traces."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, reference_trace

import earlc
from earlc.events import KINDS

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
SEND = (KINDS["MPI_SEND"], KINDS["MPI_ISEND"])
RECV = (KINDS["MPI_RECV"], KINDS["MPI_IRECV"])


def reference_steps(trace):
    """Steps by the rules of docs/workflow.md, for MPI traces: C(e) = max(C(previous on
    the location), C(send) of a receive, C(begin) of every member of its collective
    instance) + 1 for stepped events; passes in the total order until nothing changes
    (a receive timestamped before its send needs a second pass)."""
    ev = trace.events
    st = trace.states
    n = len(trace)
    kind = ev.kind
    loc = ev.location.astype(np.int64)
    deps = {}
    send = st.gather("sendptr", np.nonzero(np.isin(kind, RECV))[0])
    for r, s in zip(np.nonzero(np.isin(kind, RECV))[0].tolist(), send.tolist()):
        if s >= 0:
            deps[r] = [s]
    member = set()
    for c in st.collectives():
        begins = []
        for m in c.members:
            ids = ev.of_location(int(loc[m])).astype(np.int64)
            before = ids[ids < m]
            b = [int(x) for x in before[::-1] if kind[x] in (KINDS["MPI_COLLECTIVE_BEGIN"],
                                                             KINDS["MPI_COLLECTIVE_END"])]
            if b and kind[b[0]] == KINDS["MPI_COLLECTIVE_BEGIN"]:
                begins.append(b[0])
        for m in c.members:
            member.add(int(m))
            deps.setdefault(int(m), []).extend(begins)
    stepped = np.isin(kind, SEND + RECV)
    stepped[list(member)] = True
    prev = np.full(n, -1, dtype=np.int64)
    for l in range(len(trace.locations)):
        ids = ev.of_location(l).astype(np.int64)
        prev[ids[1:]] = ids[:-1]
    c = np.zeros(n, dtype=np.int64)
    changed = True
    while changed:
        changed = False
        for e in range(n):
            v = c[prev[e]] if prev[e] >= 0 else 0
            for d in deps.get(e, ()):
                v = max(v, c[d])
            v += int(stepped[e])
            if v != c[e]:
                c[e] = v
                changed = True
    ids = np.nonzero(stepped)[0]
    return ids, c[ids] - 1


def generated(tmp_path, kind, **options):
    out = tmp_path / kind
    earlc.synth(kind, out, **options)
    return earlc.open(out)


def mpi_traces(tmp_path):
    yield generated(tmp_path, "ring", ranks=4, iterations=5, delay=300, delay_rank=1)
    yield generated(tmp_path, "halo", ranks=6, iterations=3, delay=200, delay_rank=4)
    yield generated(tmp_path, "collectives", ranks=5, iterations=2, split=2, root=1)
    yield earlc.open(reference_trace("sstmacro-mpi-coverage"))
    yield earlc.open(reference_trace("pipit-ping-pong"))


def test_steps_match_an_independent_reference(tmp_path):
    for trace in mpi_traces(tmp_path):
        lt = trace.logical_time()
        ids, steps = reference_steps(trace)
        assert np.array_equal(lt.events, ids), trace.path
        assert np.array_equal(lt.step, steps), trace.path
        assert lt.steps == int(steps.max()) + 1
        assert lt.cycles_broken == 0


def check_rules(trace):
    lt = trace.logical_time()
    ev = trace.events
    st = trace.states
    row = {int(e): k for k, e in enumerate(lt.events.tolist())}
    # a receive at least one step after its send
    recv = lt.events[np.isin(lt.kind, RECV)]
    send = st.gather("sendptr", recv)
    for r, s in zip(recv.tolist(), send.tolist()):
        if s >= 0:
            assert lt.step[row[r]] >= lt.step[row[s]] + 1
    # steps grow along every location
    for l in range(len(trace.locations)):
        steps = lt.step[lt.location == l]
        assert np.all(np.diff(steps) >= 1)
    # the members of a collective share one step
    for c in st.collectives():
        members = [row[int(m)] for m in c.members if int(m) in row]
        assert len({int(lt.step[k]) for k in members}) <= 1
    # lateness: after the earliest event of the step, which has none
    first = {}
    for s, t in zip(lt.step.tolist(), lt.time.tolist()):
        first[s] = min(first.get(s, t), t)
    assert np.array_equal(lt.lateness, lt.time - np.array([first[s] for s in lt.step.tolist()]))
    assert len(first) == lt.steps
    return lt


def test_rules_hold_on_threaded_and_real_traces(tmp_path):
    for trace in (generated(tmp_path, "hybrid", ranks=3, threads=3, iterations=2),
                  generated(tmp_path, "omp", ranks=1, threads=4, iterations=2),
                  earlc.open(reference_trace("casita-jacobi-hybrid"))):
        lt = check_rules(trace)
        kinds = set(lt.kind.tolist())
        assert KINDS["THREAD_FORK"] in kinds or KINDS["OMP_FORK"] in kinds


def test_the_delayed_rank_is_late_most(tmp_path):
    trace = generated(tmp_path, "ring", ranks=6, iterations=8, delay=500, delay_rank=3)
    lt = check_rules(trace)
    late = lt.late_processes()
    assert list(late.columns) == ["location", "name", "rank", "events", "last", "late",
                                  "lateness", "lateness_ticks", "max_lateness",
                                  "max_lateness_ticks", "mean_lateness", "mean_lateness_ticks"]
    assert (late["lateness"] == late["lateness_ticks"] / trace.timer_resolution).all()
    # rank 3 sends late every iteration, and the rank it sends to receives late
    assert set(late["rank"].head(2)) == {3, 4}
    assert late.set_index("rank").loc[3, "lateness"] == late["lateness"].max()
    assert late["last"].sum() <= lt.steps
    df = lt.to_dataframe()
    assert len(df) == len(lt) and set(df["kind"]) == {"MPI_SEND", "MPI_RECV"}
    assert np.array_equal(df["time_ticks"], lt.time)
    assert np.allclose(df["time"], (lt.time - trace.start_time) / trace.timer_resolution)
    assert np.array_equal(df["lateness_ticks"], lt.lateness)


def test_view_rows_and_cli(tmp_path):
    trace = generated(tmp_path, "ring", ranks=4, iterations=5, delay=300, delay_rank=1)
    whole = trace.logical_time()
    v = trace.filter(locations=[1, 2])
    part = v.logical_time()
    keep = np.isin(whole.location, [1, 2])
    assert np.array_equal(part.events, whole.events[keep])
    assert np.array_equal(part.step, whole.step[keep])
    r = subprocess.run([sys.executable, "-m", "earlc", "logical", str(trace.path), "--format",
                        "json"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    import json

    data = json.loads(r.stdout)
    assert data["steps"] == whole.steps and data["events"] == len(whole)
    assert data["late_processes"][0]["rank"] in (1, 2)


def test_logical_timeline_picture(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.collections import LineCollection, PolyCollection

    from earlc.plot import plot_logical_timeline

    trace = generated(tmp_path, "ring", ranks=4, iterations=5, delay=300, delay_rank=1)
    fig = plot_logical_timeline(trace, tmp_path / "l.png")
    ax = fig.axes[0]
    boxes = [c for c in ax.collections if isinstance(c, PolyCollection)]
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(boxes[0].get_paths()) == len(trace.logical_time())
    assert len(lines[0].get_segments()) == 20  # every message of 4 ranks x 5 iterations
    assert (tmp_path / "l.png").read_bytes()[:4] == b"\x89PNG"
    r = subprocess.run([sys.executable, "-m", "earlc", "plot", "timeline", "--logical",
                        str(trace.path), "-o", str(tmp_path / "c.svg")], capture_output=True,
                       text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.svg").read_text().startswith("<?xml")
    r = subprocess.run([sys.executable, "-m", "earlc", "plot", "comm", "--logical",
                        str(trace.path), "-o", str(tmp_path / "d.png")], capture_output=True,
                       text=True, env=ENV)
    assert r.returncode == 2 and "--logical" in r.stderr


def test_a_collective_shares_one_step_whatever_its_shape(tmp_path):
    """Rank 0 sends two messages to rank 1, then all three ranks enter a Bcast rooted at
    0: the receives come one step after their sends, and the Bcast's members share the
    step after the latest of them (a Bcast's happened-before order alone would not put
    rank 2's end, which follows only the root's begin, on rank 1's step)."""
    with earlc.TraceWriter(tmp_path / "bcast", ranks=3) as w:
        for k, t in enumerate((10, 20)):
            w.enter(0, t, "MPI_Send")
            w.send(0, t + 1, dest=1, tag=k, bytes=8)
            w.leave(0, t + 2, "MPI_Send")
            w.enter(1, t + 3, "MPI_Recv")
            w.recv(1, t + 4, source=0, tag=k, bytes=8)
            w.leave(1, t + 5, "MPI_Recv")
        for rank, t in ((0, 40), (1, 42), (2, 41)):
            w.collective(rank, t, 50, "MPI_Bcast", root=0, sent=8 if rank == 0 else 0,
                         received=0 if rank == 0 else 8)
    trace = earlc.open(tmp_path / "bcast")
    lt = trace.logical_time()
    got = [(int(l), earlc.KIND_NAMES[k], int(s)) for l, k, s in
           zip(lt.location, lt.kind, lt.step)]
    assert sorted(got) == sorted([
        (0, "MPI_SEND", 0), (0, "MPI_SEND", 1), (1, "MPI_RECV", 1), (1, "MPI_RECV", 2),
        (0, "MPI_COLLECTIVE_END", 3), (1, "MPI_COLLECTIVE_END", 3),
        (2, "MPI_COLLECTIVE_END", 3)])
    # lateness: the first of each step is on time
    ends = lt.kind == earlc.KINDS["MPI_COLLECTIVE_END"]
    assert lt.lateness[ends].min() == 0
    assert np.array_equal(lt.step, reference_steps(trace)[1])
