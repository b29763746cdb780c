"""Traces as other tools write them, which libotf2 and otf2-print read: an anchor of
another name than traces.otf2 (APEX), definitions that announce wrong event counts
(APEX), no ClockProperties (the OTF2 library's own test archives), event files cut
short by a crashed run (`salvage`), counters sampled on their own METRIC locations
(Score-P's metric plugins).  Each archive is written here, with TraceWriter and its
test-only quirks, and checked against otf2-print where that helps."""
import shutil
import subprocess
import sys

import numpy as np
import pytest

import earlc
from conftest import ROOT, otf2_print, reference_trace


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "earlc", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT / "python")


def write_pingpong(path, name="traces", quirks=None, iterations=30):
    """Two ranks exchanging messages inside user regions: every record kind a
    reader must frame (ENTER/LEAVE of one field, sends with a length)."""
    with earlc.TraceWriter(path, ranks=2, name=name) as w:
        if quirks:
            w.quirks(**quirks)
        t = 1000
        for i in range(iterations):
            w.enter(0, t, "compute"); w.leave(0, t + 75, "compute")
            w.enter(1, t + 5, "compute"); w.leave(1, t + 60, "compute")
            w.enter(0, t + 80, "MPI_Send"); w.send(0, t + 85, dest=1, tag=i, bytes=64 * i)
            w.leave(0, t + 90, "MPI_Send")
            w.enter(1, t + 65, "MPI_Recv"); w.recv(1, t + 95, source=0, tag=i, bytes=64 * i)
            w.leave(1, t + 100, "MPI_Recv")
            t += 1000
    return path


def events_of(trace, loc):
    ev = trace.events
    ids = ev.loc_events[ev.loc_start[loc]:ev.loc_start[loc + 1]].astype(np.int64)
    return list(zip(ev.kind[ids].tolist(), ev.time[ids].tolist(), ev.payload[ids].tolist()))


# -- an anchor of any name ------------------------------------------------------------

def test_anchor_of_another_name_is_the_folders_archive(tmp_path):
    write_pingpong(tmp_path / "apex", name="APEX")
    trace = earlc.open(tmp_path / "apex")
    assert trace.path == str(tmp_path / "apex" / "APEX.otf2")
    same = earlc.open(write_pingpong(tmp_path / "scorep"))
    assert len(trace) == len(same) == 300
    assert events_of(trace, 1) == events_of(same, 1)
    assert not trace.warnings
    # otf2-print reads the same archive
    printed = otf2_print(tmp_path / "apex" / "APEX.otf2")
    assert sum(len(v) for v in printed.events.values()) == len(trace)
    r = run_cli("info", tmp_path / "apex")
    assert r.returncode == 0 and "APEX.otf2" in r.stdout


def test_a_folder_of_several_archives_names_them(tmp_path):
    write_pingpong(tmp_path / "a", name="APEX")
    shutil.copy(tmp_path / "a" / "APEX.otf2", tmp_path / "a" / "other.otf2")
    with pytest.raises(earlc.TraceError) as info:
        earlc.open(tmp_path / "a")
    assert "2 anchor files (APEX.otf2, other.otf2)" in str(info.value)
    assert info.value.status == "not an OTF2 archive"
    # naming the anchor chooses
    assert len(earlc.open(tmp_path / "a" / "APEX.otf2")) == 300


# -- announced counts the event files do not hold ------------------------------------------

@pytest.mark.parametrize("announced", [7, 10 ** 12])
def test_wrong_announced_counts_are_warnings(tmp_path, announced):
    truth = earlc.open(write_pingpong(tmp_path / "truth"))
    trace = earlc.open(write_pingpong(tmp_path / "apex", quirks={"announced_events": announced}))
    assert trace.warnings.counts["event_count_mismatch"] == 2
    details = [d for d in trace.warnings.details if d[0] == "event_count_mismatch"]
    assert [d[1] for d in details] == [0, 1]
    assert details[0][4] == ("the definitions announce %d records, the event file holds 150"
                             % announced)
    assert [l.declared_events for l in trace.locations] == [announced, announced]
    assert [l.events for l in trace.locations] == [150, 150]
    for loc in range(2):
        assert events_of(trace, loc) == events_of(truth, loc)
    # the analysis is the one of the truthful archive
    a, b = earlc.analyze(trace), earlc.analyze(truth)
    assert a.total("late_sender") == b.total("late_sender") > 0
    # otf2-print reads the events that are there
    printed = otf2_print(tmp_path / "apex" / "traces.otf2")
    assert sum(len(v) for v in printed.events.values()) == 300
    # the report says what it means, and does not call the events inconsistent
    r = run_cli("analyze", tmp_path / "apex")
    assert r.returncode == 0
    assert "Note (event_count_mismatch 2): the definitions announce" in r.stdout
    assert "inconsistent" not in r.stdout


def test_a_truthful_archive_has_no_count_warning(tmp_path):
    trace = earlc.open(write_pingpong(tmp_path / "t"))
    assert trace.warnings.counts["event_count_mismatch"] == 0


# -- no ClockProperties --------------------------------------------------------------------------

def test_missing_clock_properties_fall_back_to_nanoseconds(tmp_path):
    truth = earlc.open(write_pingpong(tmp_path / "truth"))
    trace = earlc.open(write_pingpong(tmp_path / "noclock",
                                      quirks={"omit_clock_properties": True}))
    assert trace.warnings.counts["clock_properties_missing"] == 1
    (code, loc, _, event, text), = [d for d in trace.warnings.details
                                    if d[0] == "clock_properties_missing"]
    assert loc == -1 and event == -1 and "ns" in text
    assert trace.timer_resolution == 1_000_000_000
    assert trace.clock_offset == trace.start_time == 1000
    assert trace.duration_ticks == truth.duration_ticks
    assert trace._defs.clock_length == truth.duration_ticks
    assert np.array_equal(trace.events.time, truth.events.time)
    report = earlc.analyze(trace)
    assert report.total("late_sender") == earlc.analyze(truth).total("late_sender") > 0
    # otf2-print reads it (and has no clock to print)
    defs = subprocess.run(["otf2-print", "-G", str(tmp_path / "noclock" / "traces.otf2")],
                          capture_output=True, text=True, check=True).stdout
    assert "CLOCK_PROPERTIES" not in defs
    r = run_cli("info", tmp_path / "noclock")
    assert r.returncode == 0 and "clock_properties_missing" in r.stdout


# -- event files cut short ----------------------------------------------------------------------

@pytest.fixture
def cut_archive(tmp_path):
    """An archive whose location 1 lost the last 4 bytes of its event file: the last
    LEAVE's region is gone, which libotf2 decodes as region 0."""
    src = write_pingpong(tmp_path / "whole")
    dst = tmp_path / "cut"
    shutil.copytree(src, dst)
    evt = dst / "traces" / ("%d.evt" % earlc.open(src).locations[1].id)
    evt.write_bytes(evt.read_bytes()[:-4])
    return src, dst


def test_a_cut_file_is_refused_by_default(cut_archive):
    _, cut = cut_archive
    with pytest.raises(earlc.TraceError) as info:
        earlc.open(cut)
    assert "truncated" in str(info.value) and "salvage" in str(info.value)
    r = run_cli("analyze", cut)
    assert r.returncode == 2 and "salvage" in r.stderr


def test_salvage_keeps_the_whole_records_before_the_cut(cut_archive):
    whole, cut = cut_archive
    truth = earlc.open(whole)
    trace = earlc.open(cut, salvage=True)
    assert trace.warnings.counts["event_file_cut_short"] == 1
    (code, loc, pos, _, text), = [d for d in trace.warnings.details
                                  if d[0] == "event_file_cut_short"]
    assert loc == 1 and pos == 149
    assert text.startswith("cut short after 149 records (1 of 150 lost;")
    assert events_of(trace, 0) == events_of(truth, 0)
    assert events_of(trace, 1) == events_of(truth, 1)[:149]
    # otf2-print, which fails on the file, reads one record more before it stops:
    # the cut LEAVE, with region 0 for its lost bytes
    out = subprocess.run(["otf2-print", "-L", str(trace.locations[1].id),
                          str(cut / "traces.otf2")], capture_output=True, text=True)
    assert out.returncode != 0
    printed = [l.split() for l in out.stdout.splitlines()
               if l.split()[:1] and l.split()[0] in ("ENTER", "LEAVE", "MPI_RECV")]
    assert len(printed) == 150
    assert printed[-1][0] == "LEAVE" and printed[-1][-1] == "<0>"
    assert events_of(truth, 1)[-1][2] != 0  # the truth is another region
    assert [(k, int(t)) for k, _, t, *_ in printed[:149]] == [
        (earlc.KIND_NAMES[k], t) for k, t, _ in events_of(trace, 1)]
    # the analysis goes on, with the region left open counted
    assert trace.warnings.counts["region_not_left"] == 1
    assert earlc.analyze(trace).total("time") > 0
    # a count that matches nothing is not reported twice
    assert trace.warnings.counts["event_count_mismatch"] == 0


@pytest.mark.parametrize("keep", [-2, -9, -200, 40])
def test_salvage_at_other_cuts(tmp_path, keep):
    src = write_pingpong(tmp_path / "whole")
    truth = earlc.open(src)
    dst = tmp_path / "cut"
    shutil.copytree(src, dst)
    evt = dst / "traces" / ("%d.evt" % truth.locations[0].id)
    evt.write_bytes(evt.read_bytes()[:keep])
    trace = earlc.open(dst, salvage=True)
    kept = trace.locations[0].events
    assert 0 < kept <= 150
    assert events_of(trace, 0) == events_of(truth, 0)[:kept]
    assert trace.warnings.counts["event_file_cut_short"] == 1


def test_salvage_of_an_empty_event_file(tmp_path):
    src = write_pingpong(tmp_path / "whole")
    (src / "traces" / "0.evt").write_bytes(b"")
    with pytest.raises(earlc.TraceError, match="empty"):
        earlc.open(src)
    trace = earlc.open(src, salvage=True)
    assert [l.events for l in trace.locations] == [0, 150]
    assert "150 of 150 lost" in [d[4] for d in trace.warnings.details
                                 if d[0] == "event_file_cut_short"][0]


def test_salvage_refuses_a_file_damaged_inside(tmp_path):
    src = write_pingpong(tmp_path / "whole")
    evt = src / "traces" / "0.evt"
    data = bytearray(evt.read_bytes())
    data[18] = 4  # a record type no writer makes, where the first record starts
    evt.write_bytes(bytes(data))
    for salvage in (False, True):
        with pytest.raises(earlc.TraceError, match="corrupt"):
            earlc.open(src, salvage=salvage)


def test_salvage_on_every_subcommand_that_opens_a_trace(cut_archive, tmp_path):
    _, cut = cut_archive
    r = run_cli("info", cut, "--salvage")
    assert r.returncode == 0 and "event_file_cut_short" in r.stdout
    r = run_cli("analyze", cut, "--salvage", "--format", "json")
    assert r.returncode == 0 and '"event_file_cut_short"' in r.stdout
    from earlc.cli import build_parser

    parser = build_parser()
    takes_trace = [name for name, sub in parser._subparsers._group_actions[0].choices.items()
                   if any(a.dest == "trace" for a in sub._actions)]
    assert len(takes_trace) >= 7
    for name in takes_trace:
        sub = parser._subparsers._group_actions[0].choices[name]
        assert any(a.dest == "salvage" for a in sub._actions), name


# -- counters on their own METRIC locations -----------------------------------------------------

def write_metric_locations(path):
    """Two ranks with a GPU power metric location each (energy accumulated, power a
    gauge), and PAPI cycles recorded beside ENTER/LEAVE on the threads."""
    with earlc.TraceWriter(path, ranks=2) as w:
        gpus = [w.metric_location(r, "GPU %d" % r) for r in range(2)]
        energy = w.metric_member("energy", "uint64", unit="J", mode="accumulated_start")
        power = w.metric_member("power", "double", unit="W", mode="absolute_point")
        cls = w.metric_class([energy, power], occurrence="asynchronous")
        for r in range(2):
            w.enter(r, 100, "main"); w.metric(r, 100, "PAPI_TOT_CYC", 1000)
            w.enter(r, 200, "work"); w.metric(r, 200, "PAPI_TOT_CYC", 1500)
            w.leave(r, 700, "work"); w.metric(r, 700, "PAPI_TOT_CYC", 9000 + r)
            w.leave(r, 900, "main"); w.metric(r, 900, "PAPI_TOT_CYC", 9500 + r)
        for i in range(20):
            for r in range(2):
                w.metric(("loc", gpus[r]), 100 + 40 * i, cls, [10 * i * (r + 1), 50.0 + i + r / 2])
    return path


def test_metric_locations_are_time_series(tmp_path):
    trace = earlc.open(write_metric_locations(tmp_path / "m"))
    df = trace.metrics
    assert list(df.columns) == ["location", "metric", "unit", "time", "time_ticks", "value"]
    gpu = [l.index for l in trace.locations if l.type == "METRIC"]
    assert len(gpu) == 2
    power = df[(df.metric == "power") & (df.location == gpu[1])]
    assert power.value.tolist() == [50.5 + i for i in range(20)]
    assert power.time_ticks.tolist() == [100 + 40 * i for i in range(20)]
    assert power.time.tolist() == [(40 * i) / 1e9 for i in range(20)]
    assert set(power.unit) == {"W"}
    energy = df[(df.metric == "energy") & (df.location == gpu[0])]
    assert energy.value.tolist() == [10.0 * i for i in range(20)]
    # the PAPI counter beside the regions is a time series too
    cycles = df[df.metric == "PAPI_TOT_CYC"]
    assert len(cycles) == 8 and set(cycles.location) == {0, 2}
    assert len(df) == 2 * 20 * 2 + 8


def test_metric_location_counters_are_no_empty_severities(tmp_path):
    trace = earlc.open(write_metric_locations(tmp_path / "m"))
    report = earlc.analyze(trace)
    names = [p.name for p in report.properties]
    assert "hwc_papi_tot_cyc" in names and "hwc_energy" not in names
    assert report.total("hwc_papi_tot_cyc") == 2 * 8000 + 1
    r = run_cli("analyze", tmp_path / "m")
    assert r.returncode == 0 and "PAPI_TOT_CYC" in r.stdout and "energy" not in r.stdout


def test_reference_papi_counters_as_time_series():
    path = reference_trace("pipit-ping-pong-papi")
    trace = earlc.open(path)
    df = trace.metrics
    members = trace.events.metrics.n.astype(int).sum()
    assert len(df) == members > 0
    assert (np.diff(df.time_ticks.to_numpy().astype(np.int64)) >= 0).all()
    # every value as otf2-print shows it: the first record's first member
    first = subprocess.run(["otf2-print", str(path)], capture_output=True, text=True,
                           check=True).stdout
    line = next(l for l in first.splitlines() if l.startswith("METRIC"))
    assert "%d" % df.value.iloc[0] in line


def test_timeline_draws_metric_panels(tmp_path):
    pytest.importorskip("matplotlib")

    from earlc.plot import plot_timeline

    trace = earlc.open(write_metric_locations(tmp_path / "m"))
    fig = plot_timeline(trace, tmp_path / "t.png", wait_states=False)
    # the rows are the threads; the counter beside their regions (as its rate) and
    # the metric locations are panels under them
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["rank 0.0", "rank 1.0"]
    assert [ax.get_ylabel() for ax in fig.axes[1:]] == ["PAPI_TOT_CYC /s", "energy\n(J)",
                                                        "power\n(W)"]
    lines = fig.axes[3].get_lines()
    assert len(lines) == 2 and list(lines[1].get_ydata()) == [50.5 + i for i in range(20)]
    assert len(plot_timeline(trace, None, wait_states=False, metrics=False).axes) == 1
    r = run_cli("plot", "timeline", tmp_path / "m", "-o", tmp_path / "n.png", "--no-metrics",
                "--no-wait-states")
    assert r.returncode == 0, r.stderr
