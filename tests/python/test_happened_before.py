"""The happened-before order: vector timestamps (earlc.VectorClocks,
trace.happened_before, trace.concurrent) against hand-derived answers and against an
explicit graph built independently from the rules (hb_graph.py)."""
import numpy as np
import pytest

import earlc
from earlc import TraceWriter

from conftest import reference_trace
from hb_graph import ancestors, reachability

KIND = {name: k for k, name in enumerate(earlc.KIND_NAMES)}


def ids_of(trace, rank, kinds=None):
    """Event ids of a rank's master thread, optionally of some kinds only."""
    ids = trace.events.of_location(rank)
    if kinds:
        ids = ids[np.isin(trace.events.kind[ids], [KIND[k] for k in kinds])]
    return [int(i) for i in ids]


def unary(w, rank, t, name):
    w.enter(rank, t, name)
    w.leave(rank, t + 1, name)


def figure_2_3(path):
    """Ekpenyong's figure 2.3: P1..P3 are ranks 0..2.  A unary event is a user
    region (its ENTER stands for the event); the synchronous message from P1 to P3
    is a send answered by an acknowledgement that P1 receives, as a synchronous send
    completes only once the receive has started."""
    with TraceWriter(path, ranks=3, resolution=1000) as w:
        unary(w, 0, 10, "a11")
        w.recv(0, 30, source=1, tag=1, bytes=8)                 # a12
        w.send(0, 40, dest=2, tag=2, bytes=8)                   # a13: sync send ...
        w.recv(0, 50, source=2, tag=3, bytes=0)                 # ... completed by the ack
        unary(w, 0, 70, "a14")
        unary(w, 1, 5, "a21")
        w.send(1, 20, dest=0, tag=1, bytes=8)                   # a22
        w.send(1, 35, dest=2, tag=4, bytes=8)                   # a23
        unary(w, 2, 5, "a31")
        unary(w, 2, 15, "a32")
        w.recv(2, 45, source=0, tag=2, bytes=8)                 # a33: sync receive ...
        w.send(2, 46, dest=0, tag=3, bytes=0)                   # ... acknowledged
        w.recv(2, 60, source=1, tag=4, bytes=8)                 # a34


def test_figure_2_3_timestamps_and_claims(tmp_path):
    figure_2_3(tmp_path / "t")
    t = earlc.open(tmp_path / "t")
    p1 = ids_of(t, 0, ["ENTER", "MPI_RECV", "MPI_SEND"])
    p2 = ids_of(t, 1, ["ENTER", "MPI_SEND"])
    p3 = ids_of(t, 2, ["ENTER", "MPI_RECV", "MPI_SEND"])
    # the figure's events; a13 and a33 are each two records of one synchronous event
    a = {"a11": [p1[0]], "a12": [p1[1]], "a13": p1[2:4], "a14": [p1[4]],
         "a21": [p2[0]], "a22": [p2[1]], "a23": [p2[2]],
         "a31": [p3[0]], "a32": [p3[1]], "a33": p3[2:4], "a34": [p3[4]]}
    procs = [["a11", "a12", "a13", "a14"], ["a21", "a22", "a23"], ["a31", "a32", "a33", "a34"]]

    def before(x, y):  # some record of x happened before some record of y
        return any(t.happened_before(i, j) for i in a[x] for j in a[y])

    def stamp(e):  # Fidge/Mattern: events of each process that precede e or are e
        return tuple(sum(1 for f in p if f == e or before(f, e)) for p in procs)

    # the thesis's timestamps; a34 is (4,3,4) there only because Cheung's rule
    # bumps P1's entry after the synchronous message: causally P1 has 3 events before it
    assert stamp("a11") == (1, 0, 0)
    assert stamp("a22") == (0, 2, 0)
    assert stamp("a12") == (2, 2, 0)
    assert stamp("a13") == (3, 2, 3)
    assert stamp("a33") == (3, 2, 3)
    assert stamp("a34") == (3, 3, 4)
    # its claims: a32 --> a13 through the synchronous message; a32 || a12
    assert before("a32", "a13") and not before("a13", "a32")
    assert t.concurrent(a["a32"][0], a["a12"][0])
    assert t.concurrent(a["a21"][0], a["a11"][0])
    assert t.concurrent(a["a23"][0], a["a13"][1]) and t.happened_before(a["a23"][0], a["a34"][0])
    assert not t.happened_before(a["a14"][0], a["a34"][0])
    assert not t.happened_before(a["a34"][0], a["a14"][0])


def test_raw_stamps_count_events_per_location(tmp_path):
    figure_2_3(tmp_path / "t")
    t = earlc.open(tmp_path / "t")
    c = t.vector_clocks(np.arange(len(t)))
    assert c.stamps.shape == (len(t), 3) and c.bytes >= c.stamps.nbytes
    # an event's own entry is its position + 1; a34 (last receive of rank 2) knows
    # rank 0 up to its first send (3 records: ENTER, LEAVE, RECV, SEND -> 4)
    last = ids_of(t, 2)[-1]
    row = c.stamps[c.index([last])[0]]
    assert row[2] == len(ids_of(t, 2))
    assert row[0] == 4 and row[1] == 4


@pytest.mark.parametrize("kind,ranks,threads", [
    ("ring", 4, 1), ("ping-pong", 2, 1), ("halo", 4, 1), ("master-worker", 5, 1),
    ("collectives", 6, 1), ("omp", 1, 4), ("hybrid", 3, 2)])
@pytest.mark.parametrize("seed", [1, 7])
def test_generated_traces_agree_with_explicit_graph(tmp_path, kind, ranks, threads, seed):
    earlc.synth(kind, tmp_path / "t", ranks=ranks, threads=threads, iterations=2, seed=seed,
                split=2 if kind == "collectives" else None)
    t = earlc.open(tmp_path / "t")
    reach = reachability(t)
    n = len(t)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, 30000), rng.integers(0, n, 30000)
    want = np.array([(reach[int(y)] >> int(x)) & 1 == 1 for x, y in zip(a, b)])
    assert want.any() and not want.all()
    assert np.array_equal(t.happened_before(a, b), want)
    conc = np.array([x != y and not w1 and not ((reach[int(x)] >> int(y)) & 1)
                     for x, y, w1 in zip(a, b, want)])
    assert np.array_equal(t.concurrent(a, b), conc)
    assert t._clocks.cycles_broken == 0


@pytest.mark.parametrize("name", ["sstmacro-mpi-coverage", "casita-jacobi-hybrid",
                                  "casita-cuda-simple", "pipit-ping-pong"])
def test_reference_traces_agree_with_explicit_graph(name):
    t = earlc.open(reference_trace(name))
    n = len(t)
    targets = np.random.default_rng(5).choice(n, 12, replace=False)
    anc = ancestors(t, targets)
    every = np.arange(n)
    c = t.vector_clocks(every)
    assert c.cycles_broken == 0
    for b in targets:
        want = np.zeros(n, bool)
        want[list(anc[int(b)])] = True
        assert np.array_equal(c.happened_before(every, int(b)), want), b


def shapes_trace(path, region, root=None):
    with TraceWriter(path, ranks=4, resolution=1000) as w:
        for r in range(4):
            # the rank that enters last is rank 3; times say nothing about the order
            w.collective(r, 10 + 5 * r, 100, region, root=root)
    return earlc.open(path)


def begin_end(t, rank):
    begin = ids_of(t, rank, ["MPI_COLLECTIVE_BEGIN"])[0]
    end = ids_of(t, rank, ["MPI_COLLECTIVE_END"])[0]
    return begin, end


@pytest.mark.parametrize("region,root,rule", [
    ("MPI_Allreduce", None, lambda i, j: True),
    ("MPI_Barrier", None, lambda i, j: True),
    ("MPI_Bcast", 1, lambda i, j: i == 1),
    ("MPI_Scatter", 2, lambda i, j: i == 2),
    ("MPI_Reduce", 1, lambda i, j: j == 1),
    ("MPI_Gather", 0, lambda i, j: j == 0),
    ("MPI_Scan", None, lambda i, j: j >= i),
    ("MPI_Exscan", None, lambda i, j: j > i),
])
def test_collective_shapes(tmp_path, region, root, rule):
    t = shapes_trace(tmp_path / "t", region, root)
    for i in range(4):
        for j in range(4):
            if i == j:
                continue
            b, _ = begin_end(t, i)
            _, e = begin_end(t, j)
            assert t.happened_before(b, e) == rule(i, j), (region, i, j)
            # nothing of a later member reaches back: ends never precede begins
            assert not t.happened_before(e, b)


def test_receive_stamped_before_its_send_in_time(tmp_path):
    """Clock skew: the receive's timestamp is earlier than its send's; the order
    still has the send first, and what follows the receive follows the send."""
    with TraceWriter(tmp_path / "t", ranks=2, resolution=1000) as w:
        unary(w, 0, 100, "before_send")
        w.send(0, 200, dest=1, tag=0, bytes=4)
        w.recv(1, 50, source=0, tag=0, bytes=4)
        unary(w, 1, 60, "after_recv")
    t = earlc.open(tmp_path / "t")
    send = ids_of(t, 0, ["MPI_SEND"])[0]
    recv = ids_of(t, 1, ["MPI_RECV"])[0]
    after = ids_of(t, 1, ["ENTER"])[0]
    first = ids_of(t, 0, ["ENTER"])[0]
    assert recv < send  # the total order follows the timestamps
    assert t.happened_before(send, recv) and not t.happened_before(recv, send)
    assert t.happened_before(first, after)
    assert t._clocks.cycles_broken == 0


def test_cycle_of_an_inconsistent_trace_is_counted(tmp_path):
    """Each rank receives the message the other sends after its own receive: no
    execution can do that.  The replay breaks the cycle and counts it."""
    with TraceWriter(tmp_path / "t", ranks=2, resolution=1000) as w:
        for r in range(2):
            w.recv(r, 10, source=1 - r, tag=0, bytes=4)
            w.send(r, 20, dest=1 - r, tag=0, bytes=4)
    t = earlc.open(tmp_path / "t")
    c = t.vector_clocks(np.arange(len(t)))
    assert c.cycles_broken == 1
    # one of the two messages is still honoured
    s0, r1 = ids_of(t, 0, ["MPI_SEND"])[0], ids_of(t, 1, ["MPI_RECV"])[0]
    s1, r0 = ids_of(t, 1, ["MPI_SEND"])[0], ids_of(t, 0, ["MPI_RECV"])[0]
    assert c.happened_before(s0, r1) != c.happened_before(s1, r0)


def test_threads_fork_join_barrier_and_locks(tmp_path):
    """OpenMP: the fork precedes the workers' events, their events precede the join,
    a team barrier orders every thread's work before it with every thread's after it,
    and a lock release precedes the next acquire."""
    earlc.synth("omp", tmp_path / "t", ranks=1, threads=3, iterations=1, seed=2)
    t = earlc.open(tmp_path / "t")
    kind = t.events.kind
    fork = int(np.flatnonzero(np.isin(kind, [KIND["OMP_FORK"], KIND["THREAD_FORK"]]))[0])
    joins = np.flatnonzero(np.isin(kind, [KIND["OMP_JOIN"], KIND["THREAD_JOIN"]]))
    worker = t.events.of_location(2)
    team = worker[t.states.forkptr[worker] == fork]
    assert len(team)
    assert all(t.happened_before(fork, team))
    assert all(t.happened_before(team, int(joins[0])))
    acq = np.flatnonzero(np.isin(kind, [KIND["OMP_ACQUIRE_LOCK"], KIND["THREAD_ACQUIRE_LOCK"]]))
    prev = t.states.lockptr[acq]
    handed = acq[(prev >= 0) & (t.events.location[np.maximum(prev, 0)] != t.events.location[acq])]
    assert len(handed)
    assert all(t.happened_before(t.states.lockptr[handed], handed))


def test_bad_event_ids(tmp_path):
    figure_2_3(tmp_path / "t")
    t = earlc.open(tmp_path / "t")
    with pytest.raises(IndexError, match="not an event"):
        t.vector_clocks([0, len(t)])
    with pytest.raises(IndexError, match="not an event"):
        t.happened_before(-1, 0)
    c = t.vector_clocks([0, 1])
    assert list(c.index(1)) == [1] and list(c.index([1, 0])) == [1, 0]
    with pytest.raises(KeyError, match="not stamped"):
        c.happened_before(0, 2)
    assert t.happened_before(3, 3) is False and t.concurrent(3, 3) is False
    empty = t.vector_clocks([])
    assert empty.stamps.shape == (0, 3)
    with pytest.raises(KeyError, match="not stamped"):
        empty.happened_before(0, 1)
    with pytest.raises(KeyError, match="not stamped"):
        c.happened_before([0, 1], [len(t) - 1, 1])  # past the last stamped event


@pytest.mark.parametrize("threads", [2, 3, 8, 64])
def test_stamps_do_not_depend_on_threads(tmp_path, monkeypatch, threads):
    # a thread replays 256 locations' clocks at least, unless told otherwise
    monkeypatch.setenv("EARLC_PARALLEL_GRAIN", "1")
    earlc.synth("hybrid", tmp_path / "t", ranks=5, threads=2, iterations=2, seed=4)
    t = earlc.open(tmp_path / "t")
    every = np.arange(len(t))
    one = t.vector_clocks(every, threads=1)
    for _ in range(2):
        many = t.vector_clocks(every, threads=threads)
        assert np.array_equal(many.stamps, one.stamps)
        assert np.array_equal(many.location, one.location)
        assert np.array_equal(many.position, one.position)


def _same_stamps(t, threads):
    every = np.arange(len(t))
    one = t.vector_clocks(every, threads=1)
    many = t.vector_clocks(every, threads=threads)
    assert np.array_equal(many.stamps, one.stamps)
    assert np.array_equal(many.location, one.location)
    assert np.array_equal(many.position, one.position)
    assert many.cycles_broken == one.cycles_broken
    return one


@pytest.mark.parametrize("kind", ["halo", "hybrid"])
def test_stamps_of_the_replay_in_two_stages(tmp_path, kind):
    """With few locations two threads divide the replay by stage (one walks, one
    computes the clocks), from 16,384 events on: the stamps are those of one thread,
    messages, collectives and thread teams included."""
    earlc.synth(kind, tmp_path / "t", ranks=4, threads=2, iterations=80, seed=3)
    t = earlc.open(tmp_path / "t")
    assert len(t) >= 16384
    _same_stamps(t, 2)


def test_cycles_broken_in_the_replay_in_two_stages(tmp_path):
    """Cycles broken while the replay runs in two stages: the same stamps and count."""
    with TraceWriter(tmp_path / "t", ranks=2, resolution=1000) as w:
        for k in range(4500):
            for r in range(2):
                w.recv(r, 10 * k + 1, source=1 - r, tag=0, bytes=4)
                w.send(r, 10 * k + 2, dest=1 - r, tag=0, bytes=4)
    t = earlc.open(tmp_path / "t")
    assert len(t) >= 16384
    assert _same_stamps(t, 2).cycles_broken == 4500
