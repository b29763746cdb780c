"""The analysis on several threads gives the report of one thread, value for value
and in the same order: every generated kind of program, the bundled traces and the
real traces of the suite, analysed with 1, 2, 3 and 8 threads, the root causes
included.  EARLC_PARALLEL_GRAIN=1 makes the C kernels cut even these small traces
into parts (they would run whole below their grain), so that the parts' merging is
what is compared.  Then the engine's own rules: the first failure of the order under
strict, properties that must run alone, shared values computed once, and no thread
left behind."""
import json
import os
import threading
import time

import numpy as np
import pytest

import earlc
from earlc import _core
from earlc.analysis import Instances, Property, PropertyError
from earlc.analysis.engine import Evaluation
from earlc.analysis.schedule import Once, Pool, beside
from earlc.events import column
from earlc.synth import KINDS, synth
from conftest import REFERENCE_NAMES, ROOT, SHARED_TRACES

THREADS = (2, 3, 8)

#: a small trace of every generated kind
GENERATED = {
    "ping-pong": dict(ranks=2, iterations=20, wrong_order=True),
    "ring": dict(ranks=4, iterations=10, eager_limit=0),
    "halo": dict(ranks=6, iterations=8, delay=3000, delay_rank=2, delay_every=3),
    "master-worker": dict(ranks=4, iterations=12, any_source=True),
    "collectives": dict(ranks=5, iterations=6, split=2),
    "omp": dict(threads=4, iterations=6, lock_rounds=2),
    "hybrid": dict(ranks=3, threads=3, iterations=5),
}
BUNDLED = sorted(p.name for p in (ROOT / "traces").iterdir() if (p / "traces.otf2").exists())
REAL = REFERENCE_NAMES + ["generated-3r-longterm", "generated-4r-longterm"]


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setenv("EARLC_PARALLEL_GRAIN", "1")


def test_every_generated_kind_is_covered():
    assert sorted(GENERATED) == sorted(KINDS)


def everything(report) -> dict:
    """What a report says, as plain values (JSON, the tables, the counts, the
    warnings, the switched-off properties, the call tree)."""
    ct = report._ctx.calltree
    return {
        "json": report.to_json(),
        "tables": {k: [np.asarray(a).tolist() for a in v] for k, v in report._tables.items()},
        "counts": {k: [np.asarray(a).tolist() for a in v] for k, v in report._counts.items()},
        "warnings": report._ctx.analysis_warnings,
        "switched_off": [str(s) for s in report.switched_off],
        "callpaths": report.callpaths,
        "event_cnode": ct.event_cnode.tolist(),
        "rows": [np.asarray(a).tolist() for a in (ct.row_cnode, ct.row_location, ct.row_time,
                                                   ct.row_visits, ct.row_idle)],
    }


def check_threads(trace):
    for properties in (None, "all"):
        one = everything(earlc.analyze(trace, properties=properties, threads=1))
        assert not one["switched_off"], one["switched_off"]
        for threads in THREADS:
            many = everything(earlc.analyze(trace, properties=properties, threads=threads))
            for key in one:
                assert many[key] == one[key], (properties, threads, key)


@pytest.mark.parametrize("kind", sorted(GENERATED))
def test_generated(kind, tmp_path):
    synth(kind, tmp_path / kind, **GENERATED[kind])
    check_threads(earlc.open(tmp_path / kind))


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_traces(name):
    check_threads(earlc.open(ROOT / "traces" / name))


@pytest.mark.parametrize("name", REAL)
def test_real_traces(name):
    path = SHARED_TRACES / name / "traces.otf2"
    if not path.exists():
        pytest.skip("reference trace %s is absent" % name)
    check_threads(earlc.open(path))


def test_a_larger_trace_in_parts(tmp_path, monkeypatch):
    """16 processes and 200,000 events with the kernels' own grain: parts of the
    message table, of the call tree's processes and of the LEAVE waves."""
    monkeypatch.delenv("EARLC_PARALLEL_GRAIN")
    synth("halo", tmp_path / "h", ranks=16, events=200000, delay=2000, delay_rank=3,
          delay_every=5)
    t = earlc.open(tmp_path / "h")
    monkeypatch.setenv("EARLC_PARALLEL_GRAIN", "4096")
    check_threads(t)


# -- the kernels ------------------------------------------------------------------------

def test_kernels_give_the_one_thread_answer(tmp_path):
    synth("hybrid", tmp_path / "t", ranks=4, threads=3, events=100000)
    t = earlc.open(tmp_path / "t")
    st = t.states
    enters = np.nonzero(t.events.kind == earlc.KINDS["ENTER"])[0].astype(np.int64)
    ids = np.concatenate([enters[::3], enters[:50], [-1], enters[::7]])  # repeats, -1, unsorted
    truth = st.leaveptr[np.maximum(ids, 0)]
    truth[ids < 0] = -1
    cap = _core.p2p_capacity(t._core)

    def p2p(threads):
        cols = [np.empty(cap, np.int64) for _ in range(8)]
        n = _core.p2p_messages(st._core, *cols, threads=threads)
        return [c[:n].tolist() for c in cols]

    def tree(threads):
        return tree_of(_core.CallTree(st._core, threads=threads))

    def tree_of(ct):
        return [column(ct, name, fmt).tolist() for name, fmt in (
            ("parent", "i"), ("region", "I"), ("event_cnode", "i"), ("row_cnode", "i"),
            ("row_location", "i"), ("row_time", "Q"), ("row_visits", "Q"), ("row_idle", "Q"))]

    def walked(threads):  # the call tree walked by the EARL layer's pass, handed over
        return tree_of(_core.CallTree(_core.States(t._core, threads=threads, calltree=True)))

    base_p2p, base_tree = p2p(1), tree(1)
    assert len(base_p2p[0]) > 1000
    for threads in (1,) + THREADS:
        assert walked(threads) == base_tree, threads
        out = np.empty(len(ids), np.int64)
        _core.leaves(st._core, ids, out, threads=threads)
        assert np.array_equal(out, truth), threads
        _core.leaves_after(st._core, ids, ids, out, threads=threads)
        assert np.array_equal(out, truth), threads
        assert p2p(threads) == base_p2p, threads
        assert tree(threads) == base_tree, threads


def test_the_analysis_takes_the_call_tree_of_the_earl_layers_pass(ring, monkeypatch):
    """The analysis builds the EARL layer with the call tree walked on the way
    (one walk over the events less), and its report is the one of a trace whose
    EARL layer was built before, without it."""
    import earlc.states

    asked = []
    real = _core.States

    def recording(*args, **kwargs):
        asked.append(kwargs.get("calltree", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(earlc.states._core, "States", recording)
    fresh = earlc.open(ring.path)
    got = everything(earlc.analyze(fresh, threads=2))
    assert asked == [True]
    before = earlc.open(ring.path)
    before.states  # built without the call tree
    assert asked == [True, False]
    assert everything(earlc.analyze(before, threads=2)) == got


def test_kernel_threads_are_checked():
    t = earlc.open(ROOT / "traces" / "demo-ring")
    out = np.empty(1, np.int64)
    with pytest.raises(ValueError, match="threads"):
        _core.leaves(t.states._core, np.zeros(1, np.int64), out, threads=-1)
    with pytest.raises(ValueError, match="threads"):
        _core.CallTree(t.states._core, threads=-2)


# -- the engine ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ring():
    return earlc.open(ROOT / "traces" / "ring-late-sender")


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_threads_argument_is_checked(ring, bad):
    with pytest.raises(ValueError, match="threads"):
        earlc.analyze(ring, threads=bad)


def test_default_is_the_traces_threads(ring, monkeypatch):
    seen = []
    real = Evaluation.run

    def run(self, order, value, progress=None, threads=1):
        seen.append(threads)
        return real(self, order, value, progress, threads)
    monkeypatch.setattr(Evaluation, "run", run)
    earlc.analyze(ring)
    earlc.analyze(earlc.open(ROOT / "traces" / "ring-late-sender", threads=1))
    earlc.analyze(ring, threads=3)
    assert seen == [os.cpu_count() or 1, 1, 3]


def _failing(name, position_after=None):
    class Fails(Property):
        unit = "occ"
        description = diagnosis = "raises"

        def totals(self, ctx):
            raise RuntimeError("%s failed" % self.name)
    Fails.name, Fails.title = name, name
    return Fails()


class Slow(Property):
    """Sleeps, so that the properties after it in the order finish first."""

    name, title, unit = "slow", "Slow", "occ"
    description = diagnosis = "sleeps"

    def totals(self, ctx):
        time.sleep(0.2)
        return None


def test_strict_raises_the_first_failure_of_the_order(ring):
    """The property evaluated first on one thread fails first, whatever finished
    first on several."""
    class SlowFails(Slow):
        name, title = "a_slow_failure", "Slow failure"

        def totals(self, ctx):
            time.sleep(0.3)
            raise RuntimeError("the first in order")
    plugins = [SlowFails(), _failing("z_fast_failure")]
    for threads in (1, 2, 8):
        with pytest.raises(PropertyError, match="a_slow_failure"):
            earlc.analyze(ring, plugins=plugins, strict=True, threads=threads)


def test_switched_off_in_the_order_of_one_thread(ring):
    class SlowFails(Slow):
        name, title = "a_slow_failure", "Slow failure"

        def totals(self, ctx):
            time.sleep(0.2)
            raise RuntimeError("slow")
    plugins = [SlowFails(), _failing("b_fast_failure"), _failing("c_fast_failure")]
    one = [str(s) for s in earlc.analyze(ring, plugins=plugins, threads=1).switched_off]
    assert len(one) == 3
    for threads in (2, 8):
        many = earlc.analyze(ring, plugins=plugins, threads=threads).switched_off
        assert [str(s) for s in many] == one


def test_a_property_that_is_not_concurrent_runs_alone(ring):
    running, overlaps = [], []
    lock = threading.Lock()

    def tracked(cls):
        def totals(self, ctx):
            with lock:
                running.append(self.name)
                if len(running) > 1 and (not self.concurrent or
                                         any(n.startswith("alone") for n in running)):
                    overlaps.append(tuple(running))
            time.sleep(0.05)
            with lock:
                running.remove(self.name)
            return None
        cls.totals = totals
        return cls

    props = []
    for k in range(6):
        cls = tracked(type("P%d" % k, (Property,), {
            "name": ("alone%d" % k) if k % 2 else ("beside%d" % k), "title": "P%d" % k,
            "unit": "occ", "description": "d", "diagnosis": "d", "concurrent": bool(k % 2 == 0)}))
        props.append(cls())
    earlc.analyze(ring, plugins=props, threads=4)
    assert not overlaps, overlaps


def test_properties_of_an_optional_group_start_first(ring):
    """A property of an optional group (the root causes: costlier than the
    default catalog's) starts before cheap ones that are ready with it, which then
    fill the other thread beside it, whatever their place in the order."""
    started = []
    lock = threading.Lock()

    def tracked(name, group=None):
        def totals(self, ctx):
            with lock:
                started.append(self.name)
            time.sleep(0.05)
            return None
        return type(name, (Property,), {
            "name": name, "title": name, "unit": "occ", "description": "d",
            "diagnosis": "d", "group": group, "totals": totals})()
    props = [tracked("a_cheap"), tracked("b_cheap"), tracked("c_cheap"),
             tracked("z_costly", group="costly_group")]
    earlc.analyze(ring, properties=props, threads=1)
    assert started[-1] == "z_costly", started  # last in the order
    started.clear()
    earlc.analyze(ring, properties=props, threads=2)
    assert started[0] == "z_costly", started
    assert sorted(started) == ["a_cheap", "b_cheap", "c_cheap", "z_costly"]


def test_a_shared_value_is_computed_once(ring):
    calls = []

    class Shares(Property):
        unit = "occ"
        description = diagnosis = "shares"

        def totals(self, ctx):
            def compute():
                calls.append(threading.get_ident())
                time.sleep(0.1)
                return 1
            assert ctx.memo("shared by plugins", compute) == 1
            return None
    props = []
    for k in range(4):
        p = Shares()
        p.name, p.title = "shares%d" % k, "Shares %d" % k
        props.append(p)
    earlc.analyze(ring, plugins=props, threads=4)
    assert len(calls) == 1


def test_no_thread_is_left_behind(ring):
    def tasks():
        return len(os.listdir("/proc/self/task"))
    earlc.analyze(ring, threads=4)  # imports done, lazy arrays built
    before_py, before_os = threading.active_count(), tasks()
    for threads in (2, 8):
        earlc.analyze(ring, properties="all", threads=threads)
    # at most as many as before: a thread of an earlier test may end meanwhile;
    # the kernel drops a joined thread's task a moment after the join returns
    assert threading.active_count() <= before_py
    deadline = time.monotonic() + 2
    while tasks() > before_os and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tasks() <= before_os


def test_warnings_in_the_order_of_one_thread(ring):
    """Warnings said by properties (and by what they share) come in the order of
    the properties that said them first, then by code and detail."""
    class Warns(Property):
        unit = "occ"
        description = diagnosis = "warns"

        def totals(self, ctx):
            if self.name.startswith("a"):
                time.sleep(0.1)
            ctx.warn("code_" + self.name, "said by " + self.name)
            ctx.memo("warned once", lambda: ctx.warn("shared", "said while shared"))
            return None
    props = []
    for name in ("a_first", "b_second", "c_third"):
        p = Warns()
        p.name, p.title = name, name
        props.append(p)
    one = earlc.analyze(ring, plugins=props, threads=1)._ctx.analysis_warnings
    assert [c for c, _ in one][:2] == ["code_a_first", "shared"]
    for threads in (2, 8):
        assert earlc.analyze(ring, plugins=props, threads=threads)._ctx.analysis_warnings == one


# -- what the parallel evaluation relies on -----------------------------------------------

def test_once_computes_once_and_retries_after_a_failure():
    once, calls = Once(), []

    def compute():
        calls.append(1)
        time.sleep(0.05)
        if len(calls) == 1:
            raise RuntimeError("first")
        return 42
    out = []

    def ask():
        try:
            out.append(once.get(compute))
        except RuntimeError:
            out.append("raised")
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(str, out)) == ["42", "42", "42", "raised"] and len(calls) == 2


def test_beside_runs_during_the_block_and_is_joined_after_it():
    started, seen = threading.Event(), []

    def task():
        started.set()
        time.sleep(0.05)
        seen.append("task")
    with beside(task):
        assert started.wait(2)  # running while the block runs
        seen.append("block")
    assert seen == ["block", "task"]  # joined before the block's end returns
    assert not [t for t in threading.enumerate() if t.name == "earlc-beside"]


def test_beside_raises_what_the_task_raised_unless_the_block_raised_first():
    def fails():
        raise KeyError("task")
    with pytest.raises(KeyError, match="task"):
        with beside(fails):
            pass
    with pytest.raises(ValueError, match="block"):
        with beside(fails):
            raise ValueError("block")


def test_the_earl_layer_is_built_while_the_catalog_is_assembled(ring, monkeypatch):
    """On several threads the engine asks for the EARL layer beside the catalog's
    assembly (a C pass without the GIL beside Python work): both are under way
    at once."""
    from earlc.analysis import engine
    from earlc.states import States

    trace = earlc.open(ROOT / "traces" / "ring-late-sender", threads=2)
    building, overlapped = threading.Event(), []
    real_init, real_selection = States.__init__, engine.selection

    def slow_init(self, *args, **kwargs):
        building.set()
        time.sleep(0.2)
        real_init(self, *args, **kwargs)

    def selection(*args, **kwargs):
        overlapped.append(building.wait(2) and trace._states is None)
        return real_selection(*args, **kwargs)
    monkeypatch.setattr(States, "__init__", slow_init)
    monkeypatch.setattr(engine, "selection", selection)
    earlc.analyze(trace, threads=2)
    assert overlapped == [True]


def test_the_time_chunks_are_built_while_the_points_are_found(ring, monkeypatch):
    """On several threads the root causes build their time chunks (C, without
    the GIL) on a thread of their own while they find the synchronisation points
    (numpy): both are under way at once, on one thread they come one after the
    other; the same tables either way."""
    from earlc.properties.rootcause import intervals, points

    building, overlapped = threading.Event(), []
    real_chunks, real_points = intervals._build_chunks, points._point_table

    def slow_chunks(*args, **kwargs):
        building.set()
        time.sleep(0.2)
        return real_chunks(*args, **kwargs)

    def point_table(ctx):
        overlapped.append(building.wait(0.5 if ctx.threads > 1 else 0))
        return real_points(ctx)
    monkeypatch.setattr(intervals, "_build_chunks", slow_chunks)
    monkeypatch.setattr(points, "_point_table", point_table)
    one = everything(earlc.analyze(ring, properties="all", threads=1))
    assert overlapped[0] is False  # the first look at the points
    overlapped.clear()
    building.clear()
    many = everything(earlc.analyze(ring, properties="all", threads=2))
    assert overlapped[0] is True
    assert many == one


def test_the_collective_and_message_delays_run_side_by_side(monkeypatch):
    """On several threads the short-term delay costs of the collectives and of
    the messages are computed by the properties that ask for them, side by
    side: both are under way at once; on one thread they come one after the
    other.  The same tables either way."""
    from earlc.properties.rootcause import delays

    demo = earlc.open(ROOT / "traces" / "demo-ring")  # Late Senders and collective waits
    started = {"collectives": threading.Event(), "messages": threading.Event()}
    overlapped = []
    real = {"collectives": delays._collective_delays, "messages": delays.message_delays}

    def meeting(family, other):
        def run(ctx, *args, **kwargs):
            started[family].set()
            overlapped.append(started[other].wait(2.0 if ctx.threads > 1 else 0))
            return real[family](ctx, *args, **kwargs)
        return run
    monkeypatch.setattr(delays, "_collective_delays", meeting("collectives", "messages"))
    monkeypatch.setattr(delays, "message_delays", meeting("messages", "collectives"))
    one = everything(earlc.analyze(demo, properties="all", threads=1))
    assert overlapped == [False, True]  # the second finds the first done
    overlapped.clear()
    for e in started.values():
        e.clear()
    many = everything(earlc.analyze(demo, properties="all", threads=2))
    assert overlapped == [True, True]
    assert many == one


def test_pool_gives_the_place_of_a_waiting_task():
    """Two cores, one task waiting for a shared value and one busy: a third task
    runs meanwhile (it is what both wait for)."""
    pool = Pool(2)
    shared, busy = threading.Event(), threading.Event()

    def waiting_task():
        with pool.waiting():
            shared.wait(5)

    def third():
        shared.set()
        busy.set()
    t0 = time.perf_counter()
    pool.give("w", waiting_task)
    pool.give("b", lambda: busy.wait(5))  # holds its core
    done, given = [], False
    while len(done) < 3:
        if not given and pool.room():
            pool.give("t", third)
            given = True
        done += pool.finished(more=not given)
    pool.close()
    assert time.perf_counter() - t0 < 4
    assert sorted(k for k, _ in done) == ["b", "t", "w"]
    assert all(e is None for _, e in done)


def test_selections_keep_the_columns_set_on_what_they_select(ring):
    """A refinement selects from its subscription with the columns that
    subscription set (Late Sender, wrong order's later_source); and the most
    severe occurrences keep the columns the property set (Late Receiver's
    send_completion)."""
    inst = Instances(np.arange(4), np.ones(4, np.int64), {"a": np.arange(4) * 10})
    sel = inst.select(np.array([True, False, True, True]))
    sel.columns["mine"] = np.array([7, 8, 9])
    sub = sel.select(np.array([0, 2]))
    assert sub["mine"].tolist() == [7, 9] and sub["a"].tolist() == [0, 30]
    assert list(sub.columns) == ["a", "mine"]
    sub.columns.own()
    assert list(sub.columns) == ["a", "mine"] and sub["mine"].tolist() == [7, 9]
    report = earlc.analyze(earlc.open(ROOT / "traces" / "pingpong-wrong-order"),
                           properties="all")
    for name, col in (("late_sender_wrong_order", "later_source"),):
        if len(report.worst.get(name, ())):
            assert col in report.worst[name].columns
    rows = json.loads(report.to_json())["instances"]
    for name, col in (("late_sender_wrong_order", "later_source"),
                      ("late_receiver", "send_completion")):
        for row in rows.get(name, []):
            assert col in row, (name, row)


_HEAPS = r"""
import ctypes, re, sys, tempfile
import earlc
earlc.analyze(earlc.open(sys.argv[1]), properties="all", threads=4)
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
with tempfile.NamedTemporaryFile() as f:
    fp = libc.fopen(f.name.encode(), b"w")
    libc.malloc_info(0, fp)
    libc.fclose(fp)
    print(len(re.findall(r'<heap nr="\d+"', open(f.name).read())))
"""


def _heaps(env) -> int:
    """malloc's heaps in a fresh process after an analysis on 4 threads."""
    import subprocess
    import sys
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    environment.update(env)
    out = subprocess.run([sys.executable, "-c", _HEAPS, str(ROOT / "traces" / "ring-late-sender")],
                         env=environment, check=True, capture_output=True, text=True).stdout
    return int(out.split()[-1])


def test_threads_share_one_malloc_heap():
    """The analysis's threads allocate from one malloc heap: memory one thread
    frees serves the others, so several threads hold no more than one; a
    choice made in the environment is left alone."""
    assert _heaps({}) == 1
    assert _heaps({"MALLOC_ARENA_MAX": "8"}) > 1


def test_command_line_threads(tmp_path):
    """earlc analyze --threads N: the same JSON report for 1 and 3 threads; a
    wrong number is one line naming the option (exit status 2)."""
    import subprocess
    import sys

    def cli(*args):
        env = dict(os.environ, EARLC_PARALLEL_GRAIN="1")
        return subprocess.run([sys.executable, "-m", "earlc", "analyze",
                               str(ROOT / "traces" / "ring-late-sender"), *args],
                              capture_output=True, text=True, cwd=ROOT / "python", env=env)
    reports = []
    for threads in ("1", "3"):
        out = tmp_path / ("r%s.json" % threads)
        r = cli("--threads", threads, "--format", "json", "-o", str(out))
        assert r.returncode == 0, r.stderr
        reports.append(json.loads(out.read_text()))
    assert reports[0] == reports[1]
    r = cli("--threads", "many")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "--threads" in r.stderr, r.stderr
