"""Compact per-event columns.  The EARL layer keeps enterptr in 32 bits, and the
public int64 `trace.states.enterptr` is made from it on first access only; the
store keeps one payload column (an ENTER's or LEAVE's region, any other event's
side-table row), and the public `events.region` and `events.ref` are made from
it on first access only.

The values users read must be those of the columns the store used to hold:
enterptr checked against a replay of each location's own region stack and the
other ways of reading a pointer, region against otf2-print, ref against the
side tables' event columns.  earlc's own analyses, profiles, search, races and
timelines must read the compact columns without making those copies."""
import re
import subprocess
import warnings

import numpy as np
import pytest

import earlc
from conftest import REFERENCE_NAMES, ROOT, need_otf2_print, reference_trace

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


_ENTER_LEAVE = re.compile(r"^(ENTER|LEAVE)\s+(\d+)\s+\d+\s+Region: .*<(\d+)>\s*$")


def regions_by_otf2_print(trace):
    """The region of every ENTER and LEAVE as otf2-print reads the archive, in
    event ids of the trace: per location, its ENTERs and LEAVEs in order."""
    need_otf2_print()
    out = subprocess.run(["otf2-print", trace.path], capture_output=True, text=True,
                         check=True).stdout
    per_location = {}
    for line in out.splitlines():
        m = _ENTER_LEAVE.match(line)
        if m:
            per_location.setdefault(int(m.group(2)), []).append(int(m.group(3)))
    ev = trace.events
    want = np.full(len(trace), 0xFFFFFFFF, dtype=np.uint32)
    for loc in trace.locations:
        ids = ev.of_location(loc.index)
        ids = ids[ev.kind[ids] <= KINDS["LEAVE"]]
        refs = per_location.get(loc.id, [])
        assert len(refs) == len(ids), loc
        want[ids] = refs
    return want


def rows_by_side_tables(trace):
    """The row of every event in its family's table, from the tables' event
    columns (-1 for events without one)."""
    ev = trace.events
    want = np.full(len(trace), -1, dtype=np.int32)
    for table in (ev.messages, ev.collectives, ev.threading, ev.programs, ev.metrics, ev.rma):
        want[table.event] = np.arange(len(table), dtype=np.int32)
    return want


def check_region_and_ref(trace):
    ev = trace.events
    n = len(trace)
    assert ev.payload.dtype == np.uint32 and len(ev.payload) == n
    want_region, want_ref = regions_by_otf2_print(trace), rows_by_side_tables(trace)
    ids = np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(5)
    some = rng.integers(-n, n, size=min(n, 500)) if n else np.empty(0, np.int64)
    mask = (ids % 3) == 1
    # chosen events, without the whole columns
    assert np.array_equal(ev.region_of(ids), want_region)
    assert np.array_equal(ev.ref_of(ids), want_ref)
    assert np.array_equal(ev.region_of(some), want_region[some])
    assert np.array_equal(ev.ref_of(mask), want_ref[mask])
    one = [(ev.region_of(int(i)), ev.ref_of(int(i))) for i in some[:20]]
    assert all(isinstance(r, np.uint32) and isinstance(f, np.int32) for r, f in one)
    assert [(int(r), int(f)) for r, f in one] == \
        [(int(want_region[i]), int(want_ref[i])) for i in some[:20]]
    assert "region" not in ev._derived and "ref" not in ev._derived
    # the public columns: computed once, then the same read-only arrays
    region, ref = ev.region, ev.ref
    assert region.dtype == np.uint32 and ref.dtype == np.int32
    assert np.array_equal(region, want_region) and np.array_equal(ref, want_ref)
    assert not region.flags.writeable and not ref.flags.writeable
    assert ev.region is region and ev.ref is ref
    # an event has a region or a row, never both; the payload holds whichever it has
    has_region = ev.kind <= KINDS["LEAVE"]
    assert (ref[has_region] == -1).all() and (region[~has_region] == 0xFFFFFFFF).all()
    assert np.array_equal(np.where(has_region, region, ref.view(np.uint32)), ev.payload)


@pytest.mark.parametrize("name", BUNDLED)
def test_region_and_ref_bundled(name):
    check_region_and_ref(bundled(name))


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_region_and_ref_reference(name):
    check_region_and_ref(earlc.open(reference_trace(name)))


def test_region_and_ref_generated(tmp_path):
    for kind, args in (("master-worker", {"any_source": 1}), ("hybrid", {}), ("collectives", {})):
        earlc.synth(kind, tmp_path / kind, **args)
        check_region_and_ref(earlc.open(tmp_path / kind))


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
def test_earlc_never_builds_the_public_copies(source, tmp_path):
    kind, name = source.split(":")
    trace = bundled(name) if kind == "bundled" else earlc.open(reference_trace(name))
    report = run_everything(trace)
    duration = trace.duration
    trace.to_perfetto(tmp_path / "t.json", start=duration * 0.3, end=duration * 0.6)
    trace.to_perfetto(tmp_path / "r.json", report=report)
    assert "region" not in trace.events._derived and "ref" not in trace.events._derived
    trace.event(len(trace) // 2), trace.events.to_dataframe()  # read by kind, not kept
    assert "region" not in trace.events._derived and "ref" not in trace.events._derived
    st = trace.states
    assert "enterptr" not in st._dense
    before = st.memory()
    st.enterptr  # now, and only now, 8 bytes an event
    assert st.memory() - before == 8 * len(trace)
