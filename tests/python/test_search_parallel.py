"""The parallel pattern search returns exactly the sequential answer: the same array
in the same order for 1, 2, 3, 8 and 64 threads (64 on this small machine:
oversubscribed), one or several teams, with and without limits, over repeated runs."""
import numpy as np
import pytest

import earlc

PATTERNS = {
    "pairs": 'S := ["", "MPI_ISEND", ""]; S $a, $b; P := $a || $b;',
    "existential": 'S := ["", "MPI_ISEND", ""]; R := ["", "MPI_IRECV", ""]; '
                   'E := ["", "ENTER", ""]; S $a; R $r; E ~e; '
                   "P := $a --> $r & ~e || $r & $a --> ~e;",
    "universal": 'S := ["", "MPI_ISEND", ""]; S $s, *all; R := ["", "MPI_IRECV", ""]; R $r;'
                 "P := $s --> $r & (*all !--> $r | $s !--> *all);",
    "three": 'E := ["rank 1", "ENTER", ""]; S := ["", "MPI_ISEND", ""]; E $e; S $a, $b;'
             "P := $e || $a & $a --> $b;",
    "subpattern": 'S := ["", "MPI_ISEND", ""]; R := ["", "MPI_IRECV", ""]; S $s, *o; R $r;'
                  "L := $s --> $r & (*o !--> $r | $s !--> *o); L $l, $m; P := $l || $m;",
}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("par")
    earlc.synth("halo", d / "halo", ranks=4, iterations=8)
    return earlc.open(d / "halo")


@pytest.mark.parametrize("name", list(PATTERNS))
def test_same_answer_for_any_thread_count(trace, name):
    text = PATTERNS[name]
    ref = trace.search(text, threads=1)
    assert len(ref) > 0
    assert ref.stats["tasks"] == 1 and len(ref.stats["threads"]) == 1
    for threads in (2, 3, 8, 64):
        for repeat in range(3):
            m = trace.search(text, threads=threads)
            assert np.array_equal(m.events, ref.events), (name, threads, repeat)
            assert m.columns == ref.columns
            st = m.stats
            assert len(st["threads"]) == threads
            assert sum(t["nodes"] for t in st["threads"]) == st["nodes"]
            assert st["tasks"] >= 1


def test_phases_are_timed(trace):
    """The statistics split the wall time: the preparation (classes and timestamps)
    beside the execution, and within the execution the merge of the tasks' matches,
    which only a search on several threads has."""
    one = trace.search(PATTERNS["pairs"], threads=1).stats
    two = trace.search(PATTERNS["pairs"], threads=2).stats
    for st in (one, two):
        assert st["prepare_seconds"] > 0
        assert 0 <= st["merge_seconds"] <= st["seconds"]
    assert one["merge_seconds"] == 0


@pytest.mark.parametrize("k", [1, 3, 40])
def test_limits_are_the_first_k_for_any_thread_count(trace, k):
    for name in ("pairs", "universal", "three"):
        full = trace.search(PATTERNS[name], threads=1)
        for threads in (1, 2, 3, 8, 64):
            for teams in (1, 2):
                m = trace.search(PATTERNS[name], threads=threads, teams=teams, limit=k)
                assert np.array_equal(m.events, full.events[:k]), (name, threads, teams)
                assert m.truncated == (len(full) >= k)


def test_teams(trace):
    ref = trace.search(PATTERNS["three"], threads=1)
    m = trace.search(PATTERNS["three"], threads=6, teams=3)
    assert np.array_equal(m.events, ref.events)
    assert sorted({t["team"] for t in m.stats["threads"]}) == [0, 1, 2]
    with pytest.raises(ValueError, match="teams"):
        trace.search(PATTERNS["three"], teams=0)
    with pytest.raises(ValueError, match="threads"):
        trace.search(PATTERNS["three"], threads=-1)


def test_ctrl_c_stops_a_search(tmp_path):
    """A signal stops a running search (one or several threads) with its exception;
    the search itself takes seconds here, the interrupt comes after 0.2 s."""
    import _thread
    import threading

    earlc.synth("halo", tmp_path / "big", ranks=2, events=400000)
    t = earlc.open(tmp_path / "big")
    for threads in (1, 2):
        timer = threading.Timer(0.2, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            t.search(PATTERNS["pairs"], threads=threads, pruning=False)
        timer.join()
    # the trace is still usable afterwards
    assert len(t.search(PATTERNS["pairs"], threads=2)) > 0
