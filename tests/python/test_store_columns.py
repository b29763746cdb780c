"""Compact per-event columns: the EARL layer keeps enterptr in 32 bits, and the
public int64 `trace.states.enterptr` is made from it on first access only.

The values users read must be those of the int64 array the pass used to write
(checked against a replay of each location's own region stack and against the
other ways of reading a pointer), and earlc's own analyses, profiles, search,
races and timelines must read the 32-bit array without making the int64 copy."""
import warnings

import numpy as np
import pytest

import earlc
from conftest import REFERENCE_NAMES, ROOT, reference_trace

KINDS = earlc.KINDS
BUNDLED = sorted(p.name for p in (ROOT / "traces").iterdir() if (p / "traces.otf2").exists())


def bundled(name):
    return earlc.open(ROOT / "traces" / name)


def own_stack_tops(trace):
    """Per event, the ENTER its location itself has innermost open when the event
    happens (for a LEAVE: the ENTER it closes), -1 when none: a replay of each
    location's stack in its own order, independent of the EARL layer."""
    ev = trace.events
    out = np.full(len(trace), -1, dtype=np.int64)
    kind = ev.kind
    for loc in range(len(trace.locations)):
        stack = []
        for e in ev.of_location(loc).tolist():
            k = kind[e]
            if k == KINDS["LEAVE"]:
                out[e] = stack.pop() if stack else -1
                continue
            out[e] = stack[-1] if stack else -1
            if k == KINDS["ENTER"]:
                stack.append(e)
    return out


def check_enterptr(trace):
    st = trace.states
    n = len(trace)
    ids = np.arange(n, dtype=np.int64)
    assert "enterptr" not in st._dense
    # enterptr_of reads like numpy indexing of the int64 array, without building it
    got = st.enterptr_of(ids)
    rng = np.random.default_rng(3)
    some = rng.integers(-n, n, size=min(n, 500)) if n else np.empty(0, np.int64)
    mask = (ids % 3) == 0
    pieces = [st.enterptr_of(some), st.enterptr_of(mask)]
    scalars = [st.enterptr_of(int(i)) for i in some[:20]]
    gathered = st.gather("enterptr", ids)
    one_by_one = [st.pointer("enterptr", int(i)) for i in ids[:50]]
    assert "enterptr" not in st._dense
    full = st.enterptr
    assert full.dtype == np.int64 and len(full) == n
    assert np.array_equal(got, full) and got.dtype == np.int64
    assert np.array_equal(pieces[0], full[some])
    assert np.array_equal(pieces[1], full[mask])
    assert scalars == [full[int(i)] for i in some[:20]]
    assert all(isinstance(x, np.int64) for x in scalars)
    assert np.array_equal(gathered, full)
    assert [e.id if e is not None else -1 for e in one_by_one] == full[:50].tolist()
    # the 32-bit array: the same ids, 0xFFFFFFFF for none
    raw = st._enterptr32
    assert raw.dtype == np.uint32
    assert np.array_equal(np.where(raw == 0xFFFFFFFF, -1, raw.astype(np.int64)), full)
    # -1 or an ENTER; the location's own innermost open region wherever it has one
    # (a worker thread's outermost region hangs off its master's: another location)
    assert ((full == -1) | (trace.events.kind[np.maximum(full, 0)] == KINDS["ENTER"])).all()
    tops = own_stack_tops(trace)
    own = tops >= 0
    assert np.array_equal(full[own], tops[own])
    inherited = ~own & (full >= 0)
    assert (trace.events.location[full[inherited]] != trace.events.location[inherited]).all()


@pytest.mark.parametrize("name", BUNDLED)
def test_enterptr_bundled(name):
    check_enterptr(bundled(name))


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_enterptr_reference(name):
    check_enterptr(earlc.open(reference_trace(name)))


def test_enterptr_of_edge_cases():
    t = bundled("hybrid")
    st = t.states
    empty = st.enterptr_of(np.empty(0, dtype=np.int64))
    assert empty.dtype == np.int64 and len(empty) == 0
    assert st.enterptr_of(0) == -1  # the first event opens nothing before it
    with pytest.raises(IndexError):
        st.enterptr_of(len(t))


def run_everything(trace):
    """What earlc does with a trace: the analysis with every property, the
    profiles, a pattern search, message races and a timeline export."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = earlc.analyze(trace, properties="all")
        trace.flat_profile()
        trace.call_tree()
        trace.time_profile()
        trace.idle_time(mpi=True)
        if trace.kind_counts().get("MPI_SEND", 0):
            trace.search('S := ["", "MPI_*SEND", "MPI_*"]; R := ["", "MPI_*RECV", ""]; '
                         'S $a; R $b; P := $a --> $b;', limit=20).to_dataframe()
            earlc.races(trace, wildcard="all").to_dataframe()
    return report


@pytest.mark.parametrize("source", ["bundled:hybrid", "bundled:omp-locks",
                                    "bundled:ring-late-sender", "reference:casita-jacobi-hybrid",
                                    "reference:sstmacro-mpi-coverage"])
def test_earlc_never_builds_the_int64_enterptr(source, tmp_path):
    kind, name = source.split(":")
    trace = bundled(name) if kind == "bundled" else earlc.open(reference_trace(name))
    report = run_everything(trace)
    duration = trace.duration
    trace.to_perfetto(tmp_path / "t.json", start=duration * 0.3, end=duration * 0.6)
    trace.to_perfetto(tmp_path / "r.json", report=report)
    st = trace.states
    assert "enterptr" not in st._dense
    before = st.memory()
    st.enterptr  # now, and only now, 8 bytes an event
    assert st.memory() - before == 8 * len(trace)
