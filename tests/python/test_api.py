"""The Python API reads like the domain: Trace, definitions as objects and
DataFrames, zero-copy event columns, events as objects, progress reports."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest

import earlc
from earlc.progress import ProgressBar
from conftest import ROOT

DEMO = ROOT / "traces" / "demo-ring"


@pytest.fixture(scope="module")
def demo():
    return earlc.open(DEMO)


def test_open_folder_or_anchor(demo):
    again = earlc.open(DEMO / "traces.otf2")
    assert len(again) == len(demo) == 656
    assert demo.path.endswith("traces.otf2")


def test_trace_facts(demo):
    assert demo.timer_resolution == 1_000_000_000
    assert demo.duration_ticks == int(demo.events.time[-1] - demo.events.time[0])
    assert demo.duration == pytest.approx(demo.duration_ticks / 1e9)
    assert demo.kind_counts()["MPI_SEND"] == 40
    assert "demo-ring" in repr(demo)


def test_definitions_as_objects_and_dataframes(demo):
    locs = demo.locations
    assert [l.rank for l in locs] == [0, 1, 2, 3]
    assert all(l.type == "CPU_THREAD" and l.thread == 0 for l in locs)
    df = locs.to_dataframe()
    assert list(df["rank"]) == [0, 1, 2, 3] and "process" in df.columns
    assert df["process"].iloc[2] == "MPI Rank 2"
    regions = demo.regions.to_dataframe()
    assert set(regions["name"]) >= {"main", "compute", "MPI_Send", "MPI_Recv", "MPI_Barrier"}
    assert demo.regions.by_name("MPI_Barrier")[0].role == "BARRIER"
    comms = demo.communicators.to_dataframe()
    assert comms["name"].iloc[0] == "MPI_COMM_WORLD" and comms["size"].iloc[0] == 4
    assert demo.communicators.get(demo.communicators[0].id).name == "MPI_COMM_WORLD"


def test_event_columns_are_zero_copy_and_read_only(demo):
    ev = demo.events
    for name in ("time", "location", "kind", "region", "ref"):
        col = getattr(ev, name)
        assert isinstance(col, np.ndarray) and len(col) == len(demo)
        assert not col.flags.owndata and not col.flags.writeable
    assert ev.time.dtype == np.uint64 and ev.kind.dtype == np.uint8
    with pytest.raises(ValueError):
        ev.time[0] = 1
    # the memory stays valid while a view lives, even without the trace
    t = earlc.open(DEMO).events.time
    import gc
    gc.collect()
    assert t[-1] == demo.events.time[-1]


def test_event_aligned_payload_columns(demo):
    ev = demo.events
    sends = np.nonzero(ev.kind == earlc.KINDS["MPI_SEND"])[0]
    assert (ev.peer[sends] >= 0).all() and (ev.bytes[sends] == 8192).all()
    enters = np.nonzero(ev.kind == earlc.KINDS["ENTER"])[0]
    assert (ev.peer[enters] == -1).all() and (ev.tag[enters] == -1).all()
    df = ev.to_dataframe()
    assert len(df) == len(demo) and df["kind"].iloc[0] == earlc.KIND_NAMES[ev.kind[0]]
    assert set(df.loc[df["kind"] == "ENTER", "region"]) >= {"main", "compute"}


def test_per_location_sequence(demo):
    ev = demo.events
    for loc in demo.locations:
        ids = ev.of_location(loc.index)
        assert len(ids) == loc.events
        assert (ev.location[ids] == loc.index).all()
        assert (np.diff(ids) > 0).all()


def test_event_objects_read_naturally(demo):
    ev = demo.events
    i = int(np.nonzero(ev.kind == earlc.KINDS["MPI_RECV"])[0][0])
    e = demo.event(i)
    assert e.kind == "MPI_RECV" and e.tag == 0 and e.bytes == 8192
    assert e.peer.rank == (e.location.rank - 1) % 4
    assert e.communicator.name == "MPI_COMM_WORLD"
    assert "MPI_RECV" in repr(e)
    c = demo.event(int(np.nonzero(ev.kind == earlc.KINDS["MPI_COLLECTIVE_END"])[0][0]))
    assert c.operation == "BARRIER" and c.root is None
    assert demo.event(-1).id == len(demo) - 1
    with pytest.raises(IndexError):
        demo.event(len(demo))
    with pytest.raises(AttributeError):
        demo.event(0).no_such_field


def test_progress_is_reported(tmp_path):
    calls = []
    earlc.open(DEMO, progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = [c[0] for c in calls]
    assert "reading" in phases and phases[-1] == "done"
    reading = [c for c in calls if c[0] == "reading"]
    assert reading[-1][1] == reading[-1][2] == 656


def test_a_failing_progress_callback_does_not_stop_reading():
    def broken(*args):
        raise RuntimeError("display gone")
    assert len(earlc.open(DEMO, progress=broken)) == 656


def test_progress_bar_draws_only_on_terminals():
    out = io.StringIO()
    bar = ProgressBar(stream=out, enabled=True)
    bar("reading", 50, 100)
    bar("done", 1, 1)
    text = out.getvalue()
    assert "reading" in text and "50.0%" in text and text.endswith("\r")
    quiet = io.StringIO()
    ProgressBar(stream=quiet)("reading", 1, 2)  # StringIO is no terminal
    assert quiet.getvalue() == ""


def test_threads_give_identical_columns():
    one = earlc.open(DEMO, threads=1)
    four = earlc.open(DEMO, threads=4)
    for name in ("time", "location", "kind", "payload", "region", "ref", "loc_events"):
        assert np.array_equal(getattr(one.events, name), getattr(four.events, name))


def test_memory_report(demo):
    # time 8, location 4, kind 1, payload 4, loc_events 4 bytes per event
    m = demo.memory()
    assert m["core"] == len(demo) * 21 + (len(demo.locations) + 1) * 8
    assert m["total"] > m["core"]
    demo.events.region, demo.events.ref  # copies of Python's, not the store's
    assert demo.memory() == m


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "earlc", *args], capture_output=True,
                          text=True, cwd=ROOT / "python")


def test_cli_info_text():
    r = run_cli("info", str(DEMO))
    assert r.returncode == 0, r.stderr
    for needle in ("Creator    earlc traces/make_demo.py", "Processes  4", "Events     656",
                   "MPI_SEND", "Regions by paradigm", "Warnings   none"):
        assert needle in r.stdout


def test_cli_info_json(tmp_path):
    out = tmp_path / "info.json"
    r = run_cli("info", str(DEMO), "--format", "json", "-o", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["events"] == 656 and data["processes"] == 4
    assert data["events_by_kind"]["MPI_RECV"] == 40
    assert data["regions_by_paradigm"]["MPI"] == 4
    assert data["warnings"] == {}


def test_cli_usage_errors():
    r = run_cli()
    assert r.returncode == 2
    r = run_cli("info")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "required: trace" in r.stderr


def test_parallel_read_and_merge_equal_a_single_thread(tmp_path):
    """Large enough for the merge to be split between threads (>= 65536 events)."""
    earlc.synth("halo", tmp_path / "h", ranks=6, events=120000)
    one = earlc.open(tmp_path / "h", threads=1)
    assert len(one) >= 120000
    for threads in (2, 3, 5):
        other = earlc.open(tmp_path / "h", threads=threads)
        for name in ("time", "location", "kind", "payload", "region", "ref", "loc_events"):
            assert np.array_equal(getattr(one.events, name), getattr(other.events, name)), name
        for col in one.events.messages.columns:
            assert np.array_equal(getattr(one.events.messages, col),
                                  getattr(other.events.messages, col)), col


def test_memory_kept_for_the_next_trace_and_released(tmp_path):
    """Closing a trace keeps its large columns for the next open (warm pages);
    release_memory gives them back at once."""
    import gc

    earlc.synth("ring", tmp_path / "r", ranks=2, events=200000)
    earlc.release_memory()
    t = earlc.open(tmp_path / "r", threads=1)
    n = len(t)
    del t
    gc.collect()
    kept = earlc.memory_stats()
    if kept["kept_blocks"] == 0:
        pytest.skip("large blocks come from malloc (AddressSanitizer build)")
    again = earlc.open(tmp_path / "r", threads=1)
    assert len(again) == n
    assert earlc.memory_stats()["reused"] > kept["reused"]
    del again
    gc.collect()
    assert earlc.release_memory() > 0
    assert earlc.memory_stats()["kept_blocks"] == 0


def _handler_name(arr=None):
    try:
        from numpy._core.multiarray import get_handler_name
    except ImportError:  # numpy 1.x
        from numpy.core.multiarray import get_handler_name
    return get_handler_name() if arr is None else get_handler_name(arr)


def test_analysis_arrays_use_store_memory_and_numpy_is_restored(tmp_path):
    """During an analysis numpy allocates from earlc's kept memory (NEP 49); the
    default allocator is back afterwards, also when a property fails, and arrays
    made during the analysis stay valid after it."""
    from earlc.analysis import Instances, Property

    earlc.synth("ring", tmp_path / "r", ranks=2, events=50000)
    t = earlc.open(tmp_path / "r")
    before = _handler_name()
    report = earlc.analyze(t)
    assert _handler_name() == before
    where = report.worst["late_sender"].where  # made during the analysis, kept by the report
    owner = where if where.base is None else where.base
    assert _handler_name(owner) == "earlc_store_memory"
    assert int(where.sum()) >= 0 and len(report.to_dataframe()) > 0

    class Broken(Property):
        name, title, parent, unit = "broken", "Broken", None, "sec"
        description = diagnosis = "fails on purpose"

        def detect(self, ctx, subscribed):
            np.zeros(10 ** 6)  # allocated from the store, then an error
            raise RuntimeError("on purpose")

    with pytest.raises(earlc.analysis.PropertyError, match="on purpose"):
        earlc.analyze(t, properties=[Broken()], strict=True)
    assert _handler_name() == before
    assert [s.name for s in earlc.analyze(t, properties=[Broken()]).switched_off] == ["broken"]
    assert _handler_name() == before


def test_store_narrow_columns(demo):
    """loc_events holds 32-bit ids; a trace without the requested-source/tag
    attributes (the demo, written by earlc synth) stores no such columns, and
    the message table still answers with -2 (not recorded) for every row."""
    ev = demo.events
    assert ev.loc_events.dtype == np.uint32
    assert sorted(ev.loc_events.tolist()) == list(range(len(ev)))
    m = ev.messages
    assert len(m) > 0
    assert "requested_source" in m.columns
    for name in ("requested_source", "requested_tag"):
        col = getattr(m, name)
        assert col.dtype == np.int32 and len(col) == len(m)
        assert (col == -2).all()
        assert not col.flags.writeable
        assert getattr(m, name) is col  # made once
    assert list(m.to_dataframe().columns) == m.columns
    with pytest.raises(AttributeError):
        m.no_such_column


@pytest.mark.parametrize("name", ["casita-jacobi-hybrid", "casita-cuda-simple", "pipit-ping-pong",
                                  "sstmacro-mpi-coverage"])
def test_tables_show_what_is_missing_as_minus_one(name):
    """A collective without a root, a thread record without a team, a program without
    a name: -1 in every DataFrame, never OTF2's 4294967295; the numpy columns keep the
    store's values."""
    from conftest import reference_trace

    trace = earlc.open(reference_trace(name))
    ev = trace.events
    frames = {t: getattr(ev, t).to_dataframe() for t in ("messages", "collectives", "threading",
                                                         "programs", "metrics", "rma")}
    frames.update(events=ev.to_dataframe(), locations=trace.locations.to_dataframe(),
                  processes=trace.processes.to_dataframe(), regions=trace.regions.to_dataframe(),
                  communicators=trace.communicators.to_dataframe(),
                  groups=trace.groups.to_dataframe())
    for what, df in frames.items():
        for col in df.columns:
            values = df[col].to_numpy()
            if values.dtype.kind in "iu":
                assert not (values.astype(np.uint64) == 0xFFFFFFFF).any(), (what, col)
    missing = (ev.collectives.root_rank == 0xFFFFFFFF)
    if missing.any():  # rooted and unrooted collectives both occur in these traces
        assert (frames["collectives"]["root_rank"].to_numpy()[missing] == -1).all()
        assert frames["collectives"]["root_rank"].dtype == np.int64
