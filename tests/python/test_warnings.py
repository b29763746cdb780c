"""Inconsistent content is counted as warnings with location and event position,
reported by `earlc info`, and reading goes on.  The archives are written on purpose
with earlc.TraceWriter."""
import subprocess
import sys


import earlc
from conftest import ROOT


def write(path, build):
    with earlc.TraceWriter(path, ranks=2) as w:
        build(w)
    return earlc.open(path)


def test_leave_without_enter_and_region_not_left(tmp_path):
    def build(w):
        w.leave(0, 10, "foo")          # nothing open
        w.enter(0, 20, "main")
        w.enter(0, 30, "bar")
        w.leave(0, 40, "baz")          # closes bar, names baz
        w.enter(1, 5, "main")          # never left
    trace = write(tmp_path / "t", build)
    c = trace.warnings.counts
    assert c["leave_without_enter"] == 1
    assert c["leave_mismatch"] == 1
    assert c["region_not_left"] == 2  # main on rank 0, main on rank 1
    d = {code: (loc, pos, ev) for code, loc, pos, ev, _ in trace.warnings.details}
    loc, pos, ev = d["leave_without_enter"]
    assert (loc, pos) == (0, 0) and trace.event(ev).kind == "LEAVE" and trace.event(ev).time == 10
    loc, pos, ev = d["leave_mismatch"]
    assert (loc, pos) == (0, 3) and trace.event(ev).time == 40
    assert len(trace) == 5  # everything still read
    # regions by their names, as the program has them (the ref only beside them)
    text = {code: detail for code, _, _, _, detail in trace.warnings.details}
    ref = {r.name: r.id for r in trace.regions}
    assert text["leave_without_enter"] == "LEAVE of region 'foo' (%d) with no region open" % ref["foo"]
    assert text["leave_mismatch"] == ("LEAVE of region 'baz' (%d) while region 'bar' (%d) is open"
                                      % (ref["baz"], ref["bar"]))
    still_open = [detail for code, *_, detail in trace.warnings.details if code == "region_not_left"]
    assert still_open == ["region 'main' (%d) still open at the end of the location" % ref["main"]] * 2


def test_requests_never_completed_or_unknown(tmp_path):
    def build(w):
        w.isend(0, 10, dest=1, request=7, tag=3, bytes=16)       # never completed
        w.isend_complete(0, 20, request=99)                      # never started
        w.irecv_request(1, 5, request=1)
        w.irecv(1, 30, source=0, request=1, tag=3, bytes=16)     # paired
    trace = write(tmp_path / "t", build)
    c = trace.warnings.counts
    assert c["request_not_completed"] == 1
    assert c["request_unknown"] == 1
    m = trace.events.messages
    ev = trace.events
    start = [r for r in range(len(m)) if earlc.KIND_NAMES[ev.kind[m.event[r]]] == "MPI_ISEND"][0]
    assert m.partner[start] == -1
    recv = trace.event(int(m.event[[r for r in range(len(m))
                                    if earlc.KIND_NAMES[ev.kind[m.event[r]]] == "MPI_IRECV"][0]]))
    req = trace.event(recv.partner)
    assert req.kind == "MPI_IRECV_REQUEST" and req.tag == 3 and req.peer.rank == 0


def test_cli_info_reports_warnings(tmp_path):
    def build(w):
        w.leave(0, 10, "foo")
    write(tmp_path / "t", build)
    r = subprocess.run([sys.executable, "-m", "earlc", "info", str(tmp_path / "t")],
                       capture_output=True, text=True, cwd=ROOT / "python")
    assert r.returncode == 0, r.stderr
    assert "Warnings (reading went on)" in r.stdout
    assert "leave_without_enter" in r.stdout and "position 0" in r.stdout


def test_round_trip_every_field(tmp_path):
    """Write a scenario, read it back: every event field equals what was written."""
    with earlc.TraceWriter(tmp_path / "t", ranks=3) as w:
        row = w.comm("row", [0, 2])
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=1024); w.leave(0, 60, "MPI_Send")
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=1024); w.leave(1, 80, "MPI_Recv")
        w.isend(2, 100, dest=1, request=5, tag=1, bytes=8, comm=row)  # row rank 1 = world rank 2
        w.isend_complete(2, 120, request=5)
        w.collective(0, 200, 260, "MPI_Bcast", root=0, sent=64)
        w.collective(1, 210, 250, "MPI_Bcast", root=0, received=64)
        w.collective(2, 205, 255, "MPI_Bcast", root=0, received=64)
    t = earlc.open(tmp_path / "t")
    assert not t.warnings
    assert t.kind_counts() == {"ENTER": 5, "LEAVE": 5, "MPI_SEND": 1, "MPI_RECV": 1,
                               "MPI_ISEND": 1, "MPI_ISEND_COMPLETE": 1,
                               "MPI_COLLECTIVE_BEGIN": 3, "MPI_COLLECTIVE_END": 3}
    send = t.event(int(t.events.messages.event[0]))
    assert (send.kind, send.time, send.location.rank, send.peer.rank, send.tag, send.bytes) == \
        ("MPI_SEND", 55, 0, 1, 7, 1024)
    assert send.communicator.name == "MPI_COMM_WORLD"
    recv = [t.event(i) for i in range(len(t)) if t.event(i).kind == "MPI_RECV"][0]
    assert (recv.time, recv.location.rank, recv.peer.rank, recv.bytes) == (70, 1, 0, 1024)
    isend = [t.event(i) for i in range(len(t)) if t.event(i).kind == "MPI_ISEND"][0]
    assert isend.communicator.name == "row" and isend.peer.rank == 2 and isend.peer_rank == 1
    done = t.event(isend.partner)
    assert done.kind == "MPI_ISEND_COMPLETE" and done.time == 120 and done.peer.rank == 2
    ends = [t.event(i) for i in range(len(t)) if t.event(i).kind == "MPI_COLLECTIVE_END"]
    assert {e.operation for e in ends} == {"BCAST"}
    assert all(e.root.rank == 0 for e in ends)
    assert sorted(e.bytes_received for e in ends) == [0, 64, 64]
    regions = {r.name: r for r in t.regions}
    assert regions["MPI_Bcast"].paradigm == "MPI" and regions["MPI_Send"].role == "POINT2POINT"
    assert t.timer_resolution == 1_000_000_000


def test_time_going_backwards_is_clamped_and_counted(tmp_path):
    """libotf2's writer refuses backwards time, so the damage is done to the bytes:
    OTF2 stores each timestamp as 8 little-endian bytes before its record."""
    import struct

    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        w.enter(0, 0x1111111111, "main")
        w.enter(0, 0x2222222222, "foo")
        w.leave(0, 0x3333333333, "foo")
        w.leave(0, 0x4444444444, "main")
        w.enter(1, 0x2100000000, "main")
        w.leave(1, 0x2300000000, "main")
    evt = tmp_path / "t" / "traces" / "0.evt"
    data = bytearray(evt.read_bytes())
    at = data.find(struct.pack("<Q", 0x3333333333))
    assert at > 0
    data[at:at + 8] = struct.pack("<Q", 0x2000000000)  # before its predecessor 0x2222222222
    evt.write_bytes(bytes(data))
    trace = earlc.open(tmp_path / "t")
    assert trace.warnings.counts["time_backwards"] == 1
    (code, loc, pos, ev, detail), = trace.warnings.details
    assert (code, loc, pos) == ("time_backwards", 0, 2)
    e = trace.event(ev)
    assert e.kind == "LEAVE" and e.region.name == "foo"
    assert e.time == 0x2222222222  # clamped to its predecessor, so the order stays consistent
    t = trace.events.time
    assert (t[1:] >= t[:-1]).all()
    assert len(trace) == 6


def test_the_report_details_its_warnings_itself(tmp_path):
    """The EARL layer's inconsistencies are not in `earlc info`: the report
    lists them (and does not send the reader elsewhere)."""
    def build(w):
        w.enter(0, 10, "main"); w.enter(0, 20, "MPI_Recv")
        w.recv(0, 30, source=1, tag=1, bytes=8)        # no send anywhere
        w.leave(0, 40, "MPI_Recv"); w.leave(0, 50, "main")
        w.enter(1, 10, "main"); w.leave(1, 50, "main")
    trace = write(tmp_path / "t", build)
    report = earlc.analyze(trace, packages=False)
    assert report.trace_warnings
    text = report.to_text()
    assert "earlc info" not in text
    for code in report.trace_warnings:
        assert "  - %s: " % code in text
    codes = {d["code"] for d in report.warning_details}
    assert set(report.trace_warnings) <= codes
