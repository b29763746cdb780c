"""Happened-before stamps, pattern search and message races of a trace in parts
(docs/parallel.md, docs/patterns.md, docs/races.md): for P = 1 to 4 parts the
stamps of every event a part holds, the matches of several patterns (with and
without limits, on 1 and 2 threads) and the races are the single-process ones.

The parts run in two ways: on threads of this process, talking through an
in-memory exchange (parts_threads.py: the collective logic, fast, on every
generated, bundled and real trace), and as MPI processes under `mpiexec -n P`
(the same driver scripts a user writes, and the command line, on fewer traces:
the MPI path).  A bad pattern ends every process with the same line."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc import TraceWriter

# the searches of the parts run on threads: a PatternWarning (a class without
# events) is expected, and warnings.catch_warnings is no guard across threads
pytestmark = pytest.mark.filterwarnings("ignore::earlc.PatternWarning")
from earlc.parts import open_part
from earlc.synth import synth
from conftest import PARTS_REAL, needs_mpi, trace_folders
from causal_patterns import MPI_PATTERNS, PATTERNS
from parts_threads import run_parts

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("parts_causal_driver.py")

PROGRAMS = {
    "ping-pong": dict(ranks=2, iterations=8, wrong_order=True),
    "ping-pong-any": dict(ranks=4, iterations=6, any_source=True),
    "master-worker": dict(ranks=5, iterations=8),
    "halo": dict(ranks=6, iterations=4, delay=3000, delay_rank=2, delay_every=3),
    "collectives": dict(ranks=5, iterations=3, split=2, delay=300, delay_rank=3),
    "hybrid": dict(ranks=3, threads=3, iterations=3, delay=300, delay_rank=1),
    "omp": dict(threads=4, iterations=3, lock_rounds=3),
}
BUNDLED = ["demo-ring", "pingpong-wrong-order", "collectives", "omp-locks", "hybrid"]
REAL = PARTS_REAL

#: traces whose answers to the quadratic patterns are too many for a test
LARGE = {"sstmacro-mpi-coverage", "casita-jacobi-hybrid", "generated-3r-longterm"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """name -> archive folder: generated programs, bundled and real traces."""
    return trace_folders(tmp_path_factory.mktemp("causal"), PROGRAMS, BUNDLED, REAL,
                         bundled_prefix="bundled-")


def part_counts(path, most=4):
    """1 to 4 parts (no more than locations); 2 and the most for the large traces."""
    n = min(most, len(earlc.open(path).locations))
    if Path(path).name in LARGE:
        return sorted({2, n})
    return range(1, n + 1)


def quiet_search(trace, text, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", earlc.PatternWarning)
        return trace.search(text, **kw)


# -- the parts on threads -----------------------------------------------------------------

def test_stamps_equal_the_whole_traces(traces):
    for name, path in traces.items():
        whole = earlc.open(path)
        want = whole.vector_clocks(np.arange(len(whole)), threads=1)
        for parts in part_counts(path):
            def one(ex):
                part = open_part(path, ex)
                held = np.arange(len(part.trace))  # own events and ghosts
                c = part.trace.vector_clocks(held, threads=1 + (ex.rank + parts) % 2)
                g = part.global_ids(held)
                # a consistent trace is stamped in a symbolic pass, a solve in a few
                # rounds (about log2 of the longest chain of dependencies across
                # parts, two exchanges each) and a final pass
                rounds = c.replay.extra.get("solve_rounds", 0)
                few = (c.replay.extra["method"] == "frontier" and
                       rounds <= 2 + np.log2(len(whole)) and c.replay.rounds == 2 * rounds)
                return (np.array_equal(c.stamps, want.stamps[g]) and
                        np.array_equal(c.location, want.location[g]) and
                        np.array_equal(c.position, want.position[g]) and
                        c.cycles_broken == want.cycles_broken and
                        (few or want.cycles_broken > 0))
            assert all(run_parts(parts, one)), (name, parts)


@pytest.mark.parametrize("kind", ["halo", "collectives"])
def test_no_part_receives_every_crossing_event(kind, tmp_path):
    """The crossing events' clocks are solved by every part on its own crossing
    events: the most one part receives in a round of the solve is about 1/P of
    every part's summary together, which the first part received when it solved
    alone (replay.METHOD "gather", kept for comparisons) and no longer does."""
    from earlc.parts import replay

    synth(kind, tmp_path / "t", ranks=8, iterations=30 if kind == "halo" else 10)
    path = tmp_path / "t"
    whole = earlc.open(path)
    want = whole.vector_clocks(np.arange(len(whole)), threads=1)

    def one(ex):
        t = open_part(path, ex).trace
        c = t.vector_clocks(np.arange(len(t)), threads=1)
        same = np.array_equal(c.stamps, want.stamps[t.part.global_ids(np.arange(len(t)))])
        return same, c.replay.extra["summary_bytes"], c.replay.extra["solve_held"]

    held = {}
    try:
        for method in ("gather", "frontier"):
            replay.METHOD = method
            for parts in (2, 3, 4):
                got = run_parts(parts, one)
                assert all(g[0] for g in got), (method, parts)
                total = sum(g[1] for g in got)
                held[method, parts] = max(g[2] for g in got) * parts / total
    finally:
        replay.METHOD = "frontier"
    for parts in (2, 3, 4):
        assert held["frontier", parts] <= 1.6, (parts, held)
    # the first part solving alone received (P - 1) / P of all
    assert held["gather", 4] > 2.5, held


def test_happened_before_of_a_part(traces):
    """trace.happened_before on part ids, every part asking about its own events
    and ghosts, answers as the whole trace."""
    path = traces["ping-pong-any"]
    whole = earlc.open(path)

    def one(ex):
        t = open_part(path, ex).trace
        rng = np.random.default_rng(ex.rank)
        a, b = rng.integers(0, len(t), 200), rng.integers(0, len(t), 200)
        g = t.part.global_ids(np.concatenate([a, b]))
        got = (t.happened_before(a, b), t.concurrent(a, b))
        return got, g[:200], g[200:]

    for (hb, conc), ga, gb in run_parts(3, one):
        assert np.array_equal(hb, whole.happened_before(ga, gb))
        assert np.array_equal(conc, whole.concurrent(ga, gb))


def test_search_matches_equal_the_whole_traces(traces):
    for name, path in traces.items():
        whole = earlc.open(path)
        chosen = {k: v for k, v in PATTERNS.items()
                  if name not in LARGE or k in ("last", "limited", "none")}
        want = {}
        for k, text in chosen.items():
            m = quiet_search(whole, text, threads=1)
            want[k] = (m.events, m.warnings, m.to_dict())
            want[k, 3] = quiet_search(whole, text, threads=1, limit=3).events
        for parts in part_counts(path):
            threads = 1 + parts % 2

            def one(ex):
                t = open_part(path, ex).trace
                bad = []
                for k, text in chosen.items():
                    m = quiet_search(t, text, threads=threads)
                    if not (np.array_equal(m.events, want[k][0]) and m.warnings == want[k][1]):
                        bad.append(k)
                    d, w = m.to_dict(), want[k][2]
                    if (d["time_ticks"], d["time"], d["columns"]) != \
                            (w["time_ticks"], w["time"], w["columns"]):
                        bad.append(k + " times")
                    m3 = quiet_search(t, text, threads=2 if threads == 1 else 1, limit=3)
                    if not np.array_equal(m3.events, want[k, 3]) or \
                            m3.truncated != (len(want[k][0]) >= 3):
                        bad.append(k + " limit")
                return bad
            for bad in run_parts(parts, one):
                assert not bad, (name, parts, bad)


def test_search_statistics_and_root(traces):
    path = traces["halo"]
    text = PATTERNS["pairs"]
    whole = earlc.open(path)
    ref = whole.search(text, threads=1)

    def one(ex):
        m = open_part(path, ex).trace.search(text, threads=2, root=1)
        if ex.rank != 1:
            with pytest.raises(RuntimeError, match="gathered on MPI process 1"):
                m.events
            return None
        return m.events, m.stats, m.to_dataframe()

    got = run_parts(3, one)
    events, stats, df = got[1]
    assert got[0] is None and got[2] is None
    assert np.array_equal(events, ref.events)
    assert df.equals(ref.to_dataframe())
    assert stats["parts"] == 3 and len(stats["threads"]) == 6
    assert sum(t["nodes"] for t in stats["threads"]) == stats["nodes"]
    assert {t["part"] for t in stats["threads"]} == {0, 1, 2}
    assert stats["rounds"] >= 1 and stats["stamped"] > 0
    assert stats["prepare_seconds"] == 0 and 0 <= stats["merge_seconds"] <= stats["seconds"]


def test_races_equal_the_whole_traces(traces):
    for name, path in traces.items():
        whole = earlc.open(path)
        for clocks in ("vector", "lamport"):
            want = earlc.races(whole, wildcard="all", clocks=clocks)
            js, text = want.to_json(), want.to_text(top=1000)
            for parts in part_counts(path):
                got = run_parts(parts, lambda ex: earlc.races(open_part(path, ex).trace,
                                                              wildcard="all", clocks=clocks))
                for r in got:
                    assert r.to_json() == js, (name, clocks, parts)
                    assert r.to_text(top=1000) == text, (name, clocks, parts)
            if name in ("master-worker", "sstmacro-mpi-coverage"):  # every table too
                r = got[-1]
                assert r.to_dataframe().equals(want.to_dataframe())
                assert r.receives_dataframe().equals(want.receives_dataframe())
                assert r.findings_dataframe().equals(want.findings_dataframe())


def test_races_wildcard_choices_in_parts(traces):
    path = traces["master-worker"]
    whole = earlc.open(path)
    for wildcard in ([0], "MPI_Recv", lambda e: e.location.rank in (1, 3)):
        want = earlc.races(whole, wildcard=wildcard).to_json()
        got = run_parts(3, lambda ex: earlc.races(open_part(path, ex).trace,
                                                  wildcard=wildcard).to_json())
        assert got == [want] * 3, wildcard
    # what the trace does not record is refused on every part alike
    errors = run_parts(2, lambda ex: _error(lambda: earlc.races(open_part(path, ex).trace)))
    assert errors[0] == errors[1] and "does not say which asked for any source" in errors[0]


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the message is the result
        return "%s: %s" % (type(exc).__name__, exc)
    return None


def test_cycles_of_an_inconsistent_trace_in_parts(tmp_path):
    """Each rank receives what its neighbour sends after its own receive: the
    cycles are broken at the same events in parts, and counted the same."""
    with TraceWriter(tmp_path / "t", ranks=3, resolution=1000) as w:
        for k in range(3):
            for r in range(3):
                w.recv(r, 100 * k + 10 + r, source=(r + 2) % 3, tag=0, bytes=4)
                w.send(r, 100 * k + 30 + r, dest=(r + 1) % 3, tag=0, bytes=4)
    path = tmp_path / "t"
    whole = earlc.open(path)
    want = whole.vector_clocks(np.arange(len(whole)))
    races = earlc.races(whole, wildcard="all").to_json()
    assert want.cycles_broken > 0
    for parts in (1, 2, 3):
        def one(ex):
            t = open_part(path, ex).trace
            c = t.vector_clocks(np.arange(len(t)))
            g = t.part.global_ids(np.arange(len(t)))
            return (np.array_equal(c.stamps, want.stamps[g]), c.cycles_broken,
                    earlc.races(t, wildcard="all").to_json(), c.replay.extra)
        for same, cycles, js, extra in run_parts(parts, one):
            assert same and cycles == want.cycles_broken and js == races
            # the crossing events have no order: the replay in rounds breaks the cycles
            assert parts == 1 or (extra["method"] == "rounds" and "cycle" in extra["fallback"])


def test_a_bad_pattern_fails_every_part_alike(traces):
    path = traces["ring-late-sender"] if "ring-late-sender" in traces else traces["halo"]
    got = run_parts(3, lambda ex: _error(lambda: open_part(path, ex).trace.search(
        'S := ["", "MPI_SND", ""]; S $a; P := $a;')))
    assert got[0] == got[1] == got[2] and got[0].startswith("PatternError: pattern: line 1")


# -- the parts as MPI processes ---------------------------------------------------------------



def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + e["PYTHONPATH"]
                                              if e.get("PYTHONPATH") else "")
    return e


def mpiexec(n, *args, timeout=300):
    return subprocess.run(["mpiexec", "-n", str(n), *map(str, args)], capture_output=True,
                          text=True, env=env(), timeout=timeout)


MPI_TRACES = ["master-worker", "hybrid"]


@needs_mpi
@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_under_mpiexec(processes, traces, tmp_path):
    """A script under mpiexec: stamps of every event, the matches of the patterns
    with and without a limit, the races, on every rank the whole trace's."""
    names = [n for n in MPI_TRACES if len(earlc.open(traces[n]).locations) >= processes]
    r = mpiexec(processes, sys.executable, DRIVER, tmp_path,
                *["%s=%s" % (n, traces[n]) for n in names])
    assert r.returncode == 0, r.stderr
    for name in names:
        got = json.loads((tmp_path / (name + ".json")).read_text())
        whole = earlc.open(traces[name])
        assert got["stamps"] is True, name
        assert got["rounds"] is True
        for k in MPI_PATTERNS:
            want = quiet_search(whole, PATTERNS[k], threads=1).events.tolist()
            assert got["search"][k] == want, (name, k)
        want = quiet_search(whole, PATTERNS["limited"], limit=3).events.tolist()
        assert got["search"]["limited/3"] == want, name
        assert got["races"] == json.loads(earlc.races(whole, wildcard="all").to_json())


@needs_mpi
def test_the_command_line_under_mpiexec(traces, tmp_path):
    path = traces["master-worker"]
    text = PATTERNS["limited"]
    for command in (["search", path, text, "--format", "json", "--limit", "7"],
                    ["races", path, "--wildcard", "all", "--format", "json"]):
        one = subprocess.run([sys.executable, "-m", "earlc", *map(str, command)], env=env(),
                             capture_output=True, text=True)
        assert one.returncode == 0, one.stderr
        r = mpiexec(3, sys.executable, "-m", "earlc", *command)
        assert r.returncode == 0, r.stderr
        a, b = json.loads(one.stdout), json.loads(r.stdout)
        if command[0] == "search":  # the work differs with the parts, not the answer
            a.pop("stats"), b.pop("stats")
        assert a == b, command[0]
    # a bad pattern: one line, status 2, from every process alike
    r = mpiexec(3, sys.executable, "-m", "earlc", "search", path, 'S := ["", "MPI_SND", ""]; S $a; P := $a;')
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        'earlc: error: pattern: line 1, column 11: unknown event kind "MPI_SND" (kinds are named '
        'as earlc names them: ENTER, LEAVE, MPI_SEND, MPI_ISEND, MPI_RECV, MPI_IRECV, '
        'MPI_COLLECTIVE_BEGIN, ...)']
    r = mpiexec(2, sys.executable, "-m", "earlc", "races", path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--wildcard" in r.stderr
