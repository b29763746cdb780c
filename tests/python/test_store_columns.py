"""Compact per-event columns.  The EARL layer keeps enterptr in 32 bits, and the
public int64 `trace.states.enterptr` is made from it on first access only; the
store keeps one payload column (an ENTER's or LEAVE's region, any other event's
side-table row), and the public `events.region` and `events.ref` are made from
it on first access only; the message table keeps `partner` as 32-bit event ids,
and the public int64 `events.messages.partner` is made from them on first access
only.

The values users read must be those of the columns the store used to hold:
enterptr checked against a replay of each location's own region stack and the
other ways of reading a pointer, region against otf2-print, ref against the
side tables' event columns, partner against a replay of each location's
requests.  earlc's own analyses, profiles, search, races and timelines must read
the compact columns without making those copies."""
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


_STARTS = {KINDS["MPI_ISEND"], KINDS["MPI_IRECV_REQUEST"]}
#: the records that end their request (a test only looks at it)
_ENDS = {KINDS["MPI_ISEND_COMPLETE"], KINDS["MPI_IRECV"], KINDS["MPI_REQUEST_CANCELLED"]}


def partners_by_replay(trace):
    """Per message row, the other half of its request (-1 for none), from each
    location's requests in its own order: a start waits under its request id
    (a start again leaves the earlier one without partner); a completion or a
    cancel takes it, and both get partners; a test sees it, and only the test
    gets one."""
    ev, m = trace.events, trace.events.messages
    want = np.full(len(m), -1, dtype=np.int64)
    for loc in range(len(trace.locations)):
        started = {}
        for e in ev.of_location(loc).tolist():
            k = int(ev.kind[e])
            if k in _STARTS:
                row = int(ev.ref_of(e))
                started[int(m.request[row])] = e
            elif k in _ENDS or k == KINDS["MPI_REQUEST_TEST"]:
                row = int(ev.ref_of(e))
                request = int(m.request[row])
                start = started.pop(request, -1) if k in _ENDS else started.get(request, -1)
                want[row] = start
                if start >= 0 and k in _ENDS:
                    want[int(ev.ref_of(start))] = e
    return want


def check_partner(trace):
    ev, m = trace.events, trace.events.messages
    rows = len(m)
    want = partners_by_replay(trace)
    # the store's column: the same ids in 32 bits, 0xFFFFFFFF for none
    raw = m._ids32["partner"]
    assert raw.dtype == np.uint32 and len(raw) == rows
    assert np.array_equal(np.where(raw == 0xFFFFFFFF, -1, raw.astype(np.int64)), want)
    # chosen rows, as numpy indexes them, without the whole column
    every = np.arange(rows, dtype=np.int64)
    rng = np.random.default_rng(7)
    some = rng.integers(-rows, rows, size=min(rows, 500)) if rows else np.empty(0, np.int64)
    mask = (every % 3) == 2
    assert np.array_equal(m.partner_of(every), want) and m.partner_of(every).dtype == np.int64
    assert np.array_equal(m.partner_of(some), want[some])
    assert np.array_equal(m.partner_of(mask), want[mask])
    one = [m.partner_of(int(r)) for r in some[:20]]
    assert all(isinstance(p, np.int64) for p in one)
    assert [int(p) for p in one] == [int(want[r]) for r in some[:20]]
    # the event objects and the table's frame read it the same way
    for r in some[:20].tolist():
        e = trace.event(int(m.event[r]))
        assert e.partner == (int(want[r]) if want[r] >= 0 else None)
    frame = m.to_dataframe()
    assert frame["partner"].dtype == np.int64 and np.array_equal(frame["partner"], want)
    assert "partner" not in vars(m)
    # the public column: made once, then the same read-only int64 array
    full = m.partner
    assert full.dtype == np.int64 and np.array_equal(full, want)
    assert not full.flags.writeable and m.partner is full
    assert np.array_equal(m.to_dataframe()["partner"], want)
    # halves on the same location, each pointing back unless it is a test
    linked = want >= 0
    assert (ev.location[want[linked]] == ev.location[m.event[linked]]).all()
    ends = linked & np.isin(ev.kind[m.event], list(_ENDS))
    assert np.array_equal(want[ev.ref_of(want[ends])], m.event[ends].astype(np.int64))
    return int(linked.sum())


@pytest.mark.parametrize("name", BUNDLED)
def test_partner_bundled(name):
    check_partner(bundled(name))


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_partner_reference(name):
    check_partner(earlc.open(reference_trace(name)))


def test_partner_generated(tmp_path):
    linked = {}
    for kind, args in (("halo", {"ranks": 6, "iterations": 20}), ("hybrid", {}),
                       ("master-worker", {"any_source": 1}), ("ping-pong", {"wrong_order": 1})):
        earlc.synth(kind, tmp_path / kind, **args)
        linked[kind] = check_partner(earlc.open(tmp_path / kind))
    assert linked["halo"] > 0 and linked["hybrid"] > 0  # programs with requests


def test_partner_of_edge_cases():
    m = bundled("hybrid").events.messages
    empty = m.partner_of(np.empty(0, dtype=np.int64))
    assert empty.dtype == np.int64 and len(empty) == 0
    with pytest.raises(IndexError):
        m.partner_of(len(m))
    none = bundled("omp-locks").events.messages  # no message rows at all
    assert len(none) == 0 and none.partner.dtype == np.int64 and len(none.partner) == 0


def test_memory_counts_partner_in_32_bits():
    """trace.memory() counts what the store holds: 4 bytes per message row for
    partner, and nothing for copies made in Python."""
    t = bundled("hybrid")
    ev = t.events
    m = t.memory()
    side = ev.metric_values.nbytes + ev.metric_value_types.nbytes
    for table in (ev.messages, ev.collectives, ev.threading, ev.programs, ev.metrics, ev.rma):
        for name in table.columns:
            if name in table._ids32:
                side += table._ids32[name].nbytes
            elif name not in table._absent:
                side += getattr(table, name).nbytes
    assert ev.messages._ids32["partner"].itemsize == 4 and len(ev.messages) > 0
    assert m["total"] - m["core"] == side
    ev.messages.partner  # a copy of Python's, not the store's
    assert t.memory() == m


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
    assert "partner" not in vars(trace.events.messages)
    trace.event(len(trace) // 2), trace.events.to_dataframe()  # read by kind, not kept
    trace.events.messages.to_dataframe()  # a frame of its own, nothing kept
    assert "region" not in trace.events._derived and "ref" not in trace.events._derived
    assert "partner" not in vars(trace.events.messages)
    st = trace.states
    assert "enterptr" not in st._dense
    before = st.memory()
    st.enterptr  # now, and only now, 8 bytes an event
    assert st.memory() - before == 8 * len(trace)
