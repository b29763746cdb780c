"""One way to show a time: every output that shows a person a time shows the same
event at the same seconds from the trace's start, with its tick beside it in JSON
and DataFrames.

The trace is written here with timestamps that start far from zero, as a trace of
`earlc record` does (nanoseconds since the machine booted): an output that shows
raw ticks, or counts from another origin, shows other numbers than the rest."""
import json
import subprocess
import sys

import pytest

import earlc
from earlc.display import format_seconds, format_time
from conftest import ROOT

BOOT = 7_397_466_976_977_800  # the first timestamp: about 85 days after boot, in ns
RES = 1_000_000_000


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """3 ranks: rank 1 receives twice from any source (rank 0 sends late: a late
    sender); rank 2's record ends in MPI_Barrier (a stop report)."""
    path = tmp_path_factory.mktemp("times") / "t"
    T = BOOT
    with earlc.TraceWriter(path, ranks=3, resolution=RES) as w:
        for r in range(3):
            w.enter(r, T, "main")
        w.enter(1, T + 100, "MPI_Recv")
        w.recv(1, T + 500, source=0, tag=1, bytes=8, requested_source=-1)
        w.leave(1, T + 510, "MPI_Recv")
        w.enter(1, T + 520, "MPI_Recv")
        w.recv(1, T + 700, source=2, tag=1, bytes=8, requested_source=-1)
        w.leave(1, T + 710, "MPI_Recv")
        w.enter(0, T + 400, "MPI_Send")
        w.send(0, T + 410, dest=1, tag=1, bytes=8)
        w.leave(0, T + 420, "MPI_Send")
        w.enter(2, T + 150, "MPI_Send")
        w.send(2, T + 160, dest=1, tag=1, bytes=8)
        w.leave(2, T + 170, "MPI_Send")
        w.enter(2, T + 800, "MPI_Barrier")
        w.mark_incomplete(2, "ended by the test")
        w.leave(0, T + 900, "main")
        w.leave(1, T + 1000, "main")
    t = earlc.open(path)
    assert t.start_time == BOOT
    return t


def seconds(ticks):
    return (ticks - BOOT) / RES


def event_at(trace, kind, ticks, location):
    ev = trace.events
    ids = [i for i in range(len(trace)) if earlc.KIND_NAMES[ev.kind[i]] == kind
           and int(ev.time[i]) == ticks and int(ev.location[i]) == location]
    assert len(ids) == 1
    return ids[0]


def test_the_definition(trace):
    assert trace.time_seconds(BOOT + 100) == 100 / RES
    assert list(trace.time_seconds(trace.events.time[:2])) == [0.0, 0.0]
    assert format_time(trace, BOOT + 100) == "0.100 us"


def test_analysis_text_json_html(trace, tmp_path):
    report = earlc.analyze(trace)
    occ = json.loads(report.to_json())["instances"]["late_sender"][0]
    recv_call = event_at(trace, "ENTER", BOOT + 100, 1)
    assert occ["event"] == recv_call and occ["severity"] == 300
    assert (occ["time"], occ["time_ticks"]) == (seconds(BOOT + 100), BOOT + 100)
    assert (occ["recv_call_time"], occ["recv_call_time_ticks"]) == (seconds(BOOT + 100), BOOT + 100)
    assert (occ["send_call_time"], occ["send_call_time_ticks"]) == (seconds(BOOT + 400), BOOT + 400)
    shown = "event %d at %s on rank 1" % (recv_call, format_seconds(occ["time"]))
    assert shown in report.to_text()
    page = report.to_html(pictures=False)
    assert ">%s<" % format_seconds(occ["time"]) in page
    # the stop report: rank 2 in MPI_Barrier since 800 ticks after the start
    stop = json.loads(report.to_json())["stopped"]
    rank2 = [s for s in stop["locations"] if s["rank"] == 2][0]
    assert (rank2["since"], rank2["since_ticks"]) == (seconds(BOOT + 800), BOOT + 800)
    assert (rank2["last_event"], rank2["last_event_ticks"]) == (seconds(BOOT + 800), BOOT + 800)
    group = [g for g in stop["groups"] if g["call"] == "MPI_Barrier"][0]
    assert group["since_first"] == seconds(BOOT + 800)
    assert "since %.6f s" % seconds(BOOT + 800) in report.to_text()


def test_races_text_json_dataframes(trace):
    r = earlc.races(trace)  # the trace records which receives asked for any source
    recv = event_at(trace, "MPI_RECV", BOOT + 500, 1)
    send = event_at(trace, "MPI_SEND", BOOT + 160, 2)
    d = r.to_dict()
    rec = [x for x in d["receives"] if x["event"] == recv][0]
    assert (rec["time"], rec["time_ticks"]) == (seconds(BOOT + 500), BOOT + 500)
    alt = [a for a in rec["alternatives"] if a["event"] == send][0]
    assert (alt["time"], alt["time_ticks"]) == (seconds(BOOT + 160), BOOT + 160)
    df = r.to_dataframe()
    row = df[(df.recv == recv) & (df.send == send)].iloc[0]
    assert (row.recv_time, row.recv_time_ticks) == (seconds(BOOT + 500), BOOT + 500)
    assert (row.send_time, row.send_time_ticks) == (seconds(BOOT + 160), BOOT + 160)
    rows = r.receives_dataframe().set_index("recv")
    assert rows.loc[recv, "time"] == seconds(BOOT + 500)
    text = r.to_text()
    assert "receive #%d on rank 1 at %s in main/MPI_Recv" % (
        recv, format_seconds(seconds(BOOT + 500))) in text
    assert "send #%d tag 1 on rank 2 at %s" % (send, format_seconds(seconds(BOOT + 160))) in text
    assert "%.6f" % ((BOOT + 500) / RES) not in text  # not from when the machine booted


def test_search_text_json_dataframe(trace):
    pattern = 'R := ["", "MPI_RECV", ""]; R $a; P := $a;'
    recv = event_at(trace, "MPI_RECV", BOOT + 500, 1)
    m = trace.search(pattern)
    df = m.to_dataframe().set_index("a")
    assert (df.loc[recv, "a.time"], df.loc[recv, "a.time_ticks"]) == (seconds(BOOT + 500),
                                                                      BOOT + 500)
    d = m.to_dict()
    k = d["matches"].index([recv])
    assert (d["time"][k], d["time_ticks"][k]) == ([seconds(BOOT + 500)], [BOOT + 500])
    out = subprocess.run([sys.executable, "-m", "earlc", "search", trace.path, pattern],
                         capture_output=True, text=True, cwd=ROOT / "python")
    assert out.returncode == 0, out.stderr
    line = [l for l in out.stdout.splitlines() if l.split()[:1] == [str(recv)]][0]
    assert line.split()[1] == "%.9f" % seconds(BOOT + 500)


def test_dataframes_of_the_trace(trace):
    recv_call = event_at(trace, "ENTER", BOOT + 100, 1)
    df = trace.events.to_dataframe()
    assert (df.time[recv_call], df.time_ticks[recv_call]) == (seconds(BOOT + 100), BOOT + 100)
    tp = trace.time_profile(bins=10)
    assert tp.bin_start[0] == 0.0 and tp.bin_start_ticks[0] == BOOT
    assert tp.bin_end.iloc[-1] == seconds(BOOT + 1000) and tp.bin_end_ticks.iloc[-1] == BOOT + 1000


def test_perfetto_and_the_window(trace, tmp_path):
    out = tmp_path / "t.json"
    trace.to_perfetto(out, wait_states=False)
    doc = json.loads(out.read_text())
    recv_slices = [e for e in doc["traceEvents"] if e.get("name") == "MPI_Recv"]
    assert min(e["ts"] for e in recv_slices) == pytest.approx(seconds(BOOT + 100) * 1e6)
    # --from / --to count from the same start
    trace.to_perfetto(out, start=seconds(BOOT + 500), end=seconds(BOOT + 700), wait_states=False)
    assert json.loads(out.read_text())["otherData"]["window_ticks"] == [BOOT + 500, BOOT + 700]
