"""earlc.TraceWriter: archives checked with otf2-print and read back with earlc.open."""
import os
import re
import shutil
import subprocess

import pytest

import earlc
from conftest import ROOT
from earlc.writer import TraceWriter, collective_op, region_kind

needs_otf2_print = pytest.mark.skipif(shutil.which("otf2-print") is None,
                                      reason="otf2-print is not installed")


def otf2_print(anchor, *args):
    out = subprocess.run(["otf2-print", *args, str(anchor)], capture_output=True, text=True,
                         check=True)
    # no warning at all (docs/writer.md promises it): "out of order Group definition"
    # was one, for groups numbered against the order they were written in
    assert out.stderr == "", out.stderr
    return out.stdout


def printed_events(anchor):
    """(kind, location id, time, attributes) of every event line of otf2-print."""
    rows = []
    for line in otf2_print(anchor).splitlines():
        m = re.match(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$", line)
        if m and m.group(1) not in ("Event",):
            rows.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return rows


def printed_definitions(anchor, kind):
    return [line for line in otf2_print(anchor, "-G").splitlines() if line.startswith(kind + " ")]


def ring(path, **kw):
    with TraceWriter(path, ranks=2, threads_per_rank=1, resolution=1_000_000_000, **kw) as w:
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=1024); w.leave(0, 60, "MPI_Send")
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=1024); w.leave(1, 80, "MPI_Recv")
    return w


@needs_otf2_print
def test_the_example_in_a_few_lines(tmp_path):
    w = ring(tmp_path / "t")
    assert w.closed
    anchor = tmp_path / "t" / "traces.otf2"
    assert w.anchor_path == str(anchor)
    assert printed_events(anchor) == [
        ("ENTER", 1, 10, 'Region: "MPI_Recv" <1>'),
        ("ENTER", 0, 50, 'Region: "MPI_Send" <0>'),
        ("MPI_SEND", 0, 55, 'Receiver: 1 ("Master thread" <1>), Communicator: "MPI_COMM_WORLD" <0>, '
                            'Tag: 7, Length: 1024'),
        ("LEAVE", 0, 60, 'Region: "MPI_Send" <0>'),
        ("MPI_RECV", 1, 70, 'Sender: 0 ("Master thread" <0>), Communicator: "MPI_COMM_WORLD" <0>, '
                            'Tag: 7, Length: 1024'),
        ("LEAVE", 1, 80, 'Region: "MPI_Recv" <1>'),
    ]
    clock = printed_definitions(anchor, "CLOCK_PROPERTIES")[0]
    assert "Ticks per Seconds: 1000000000, Global Offset: 10, Length: 70" in clock
    locations = printed_definitions(anchor, "LOCATION")
    assert len(locations) == 2 and all("# Events: 3" in line for line in locations)
    regions = printed_definitions(anchor, "REGION")
    assert any('"MPI_Send"' in r and "Role: POINT2POINT" in r and 'Paradigm: "MPI"' in r
               for r in regions), regions


def test_region_inference_follows_score_p():
    assert region_kind("MPI_Barrier") == ("MPI", "BARRIER")
    assert region_kind("MPI_Allreduce") == ("MPI", "COLL_ALL2ALL")
    assert region_kind("MPI_Bcast") == ("MPI", "COLL_ONE2ALL")
    assert region_kind("MPI_Reduce") == ("MPI", "COLL_ALL2ONE")
    assert region_kind("MPI_Scan") == ("MPI", "COLL_OTHER")
    assert region_kind("MPI_Iallreduce") == ("MPI", "COLL_ALL2ALL")
    assert region_kind("MPI_Send") == ("MPI", "POINT2POINT")
    assert region_kind("MPI_Waitall") == ("MPI", "POINT2POINT")
    assert region_kind("MPI_Put") == ("MPI", "RMA")
    assert region_kind("MPI_Init") == ("MPI", "FUNCTION")
    assert region_kind("!$omp parallel @jacobi.c:12") == ("OPENMP", "PARALLEL")
    assert region_kind("!$omp implicit barrier @jacobi.c:20") == ("OPENMP", "IMPLICIT_BARRIER")
    assert region_kind("!$omp ibarrier @x.c:1") == ("OPENMP", "IMPLICIT_BARRIER")
    assert region_kind("!$omp barrier @x.c:1") == ("OPENMP", "BARRIER")
    assert region_kind("!$omp critical @x.c:3") == ("OPENMP", "CRITICAL")
    assert region_kind("!$omp critical sblock @x.c:3") == ("OPENMP", "CRITICAL_SBLOCK")
    assert region_kind("!$omp for @x.c:4") == ("OPENMP", "LOOP")
    assert region_kind("!$omp taskwait @x.c:5") == ("OPENMP", "TASK_WAIT")
    assert region_kind("compute") == ("USER", "FUNCTION")
    assert collective_op("MPI_Allreduce") == 11 and collective_op("MPI_Barrier") == 0
    with pytest.raises(ValueError):
        collective_op("MPI_Send")


@needs_otf2_print
def test_explicit_region_and_communicators(tmp_path):
    with TraceWriter(tmp_path / "t", ranks=4) as w:
        w.region("solver", role="LOOP", source_file="s.c", begin_line=3, end_line=9)
        row = w.comm("row0", [0, 2])
        w.send(2, 5, dest=0, comm="row0")        # rank 0 of row0 is world rank 0
        w.recv(0, 9, source=1, comm=row)         # rank 1 of row0 is world rank 2
        w.send(3, 5, dest=0, comm="MPI_COMM_SELF")
        w.enter(1, 1, "solver"); w.leave(1, 2, "solver")
    anchor = tmp_path / "t" / "traces.otf2"
    ev = printed_events(anchor)
    assert 'Receiver: 0 ("Master thread" <0>), Communicator: "row0"' in ev[1][3] or \
        'Receiver: 0 ("Master thread" <0>), Communicator: "row0"' in ev[2][3]
    recv = [e for e in ev if e[0] == "MPI_RECV"][0]
    assert 'Sender: 1 ("Master thread" <2>), Communicator: "row0"' in recv[3]
    comms = printed_definitions(anchor, "COMM")
    assert any('"row0"' in c and 'Parent: "MPI_COMM_WORLD"' in c for c in comms), comms
    assert any('"MPI_COMM_SELF"' in c for c in comms)
    regions = printed_definitions(anchor, "REGION")
    assert any('"solver"' in r and "Role: LOOP" in r and '"s.c"' in r for r in regions), regions


def write_everything(path):
    """Every event kind through the readable API; returns the log of what was written."""
    log = []
    w = TraceWriter(path, ranks=2, threads_per_rank=2)
    gpu = w.accelerator(0, streams=1)[0]

    def rec(kind, where, t, **fields):
        log.append((kind, w.loc(where), t, fields))

    t = 100
    w.program_begin(0, t, "./app", ["-n", "4"]); rec("PROGRAM_BEGIN", 0, t, name="./app"); t += 10
    w.enter(0, t, "main"); rec("ENTER", 0, t, region="main"); t += 10
    w.send(0, t, dest=1, tag=3, bytes=100); rec("MPI_SEND", 0, t, peer=1, tag=3, bytes=100); t += 10
    w.isend(0, t, dest=1, request=42, tag=4, bytes=200)
    rec("MPI_ISEND", 0, t, peer=1, tag=4, bytes=200, request=42); t += 10
    w.request_test(0, t, 42); rec("MPI_REQUEST_TEST", 0, t, request=42); t += 10
    w.isend_complete(0, t, 42); rec("MPI_ISEND_COMPLETE", 0, t, request=42); t += 10
    w.irecv_request(0, t, 43); rec("MPI_IRECV_REQUEST", 0, t, request=43); t += 10
    w.irecv(0, t, source=1, request=43, tag=5, bytes=300)
    rec("MPI_IRECV", 0, t, peer=1, tag=5, bytes=300, request=43); t += 10
    w.irecv_request(0, t, 44); rec("MPI_IRECV_REQUEST", 0, t, request=44); t += 10
    w.request_cancelled(0, t, 44); rec("MPI_REQUEST_CANCELLED", 0, t, request=44); t += 10
    w.recv(0, t, source=1, tag=6, bytes=400); rec("MPI_RECV", 0, t, peer=1, tag=6, bytes=400); t += 10
    w.collective(0, t, t + 10, "MPI_Bcast", root=1, sent=0, received=64)
    rec("ENTER", 0, t, region="MPI_Bcast"); rec("MPI_COLLECTIVE_BEGIN", 0, t + 1)
    rec("MPI_COLLECTIVE_END", 0, t + 9, op=1, root=1, sent=0, received=64)
    rec("LEAVE", 0, t + 10, region="MPI_Bcast"); t += 20
    w.omp_fork(0, t, 2); rec("OMP_FORK", 0, t, count=2); t += 10
    w.omp_acquire_lock(0, t, 7, 1); rec("OMP_ACQUIRE_LOCK", 0, t, id=7, count=1); t += 10
    w.omp_release_lock(0, t, 7, 1); rec("OMP_RELEASE_LOCK", 0, t, id=7, count=1); t += 10
    w.omp_task_create(0, t, 9); rec("OMP_TASK_CREATE", 0, t, id=9); t += 10
    w.omp_task_switch(0, t, 9); rec("OMP_TASK_SWITCH", 0, t, id=9); t += 10
    w.omp_task_complete(0, t, 9); rec("OMP_TASK_COMPLETE", 0, t, id=9); t += 10
    w.omp_join(0, t); rec("OMP_JOIN", 0, t); t += 10
    w.fork(0, t, 2); rec("THREAD_FORK", 0, t, count=2); t += 10
    team = w.team([(0, 0), (0, 1)], name="team0")
    for where in (0, (0, 1)):
        w.team_begin(where, t, team); rec("THREAD_TEAM_BEGIN", where, t, comm=team)
    t += 10
    w.acquire_lock((0, 1), t, 3, 1); rec("THREAD_ACQUIRE_LOCK", (0, 1), t, id=3, count=1); t += 10
    w.release_lock((0, 1), t, 3, 1); rec("THREAD_RELEASE_LOCK", (0, 1), t, id=3, count=1); t += 10
    w.task_create((0, 1), t, 1, 1, team); rec("THREAD_TASK_CREATE", (0, 1), t, comm=team, id=1, count=1); t += 10
    w.task_switch((0, 1), t, 1, 1, team); rec("THREAD_TASK_SWITCH", (0, 1), t, comm=team, id=1, count=1); t += 10
    w.task_complete((0, 1), t, 1, 1, team); rec("THREAD_TASK_COMPLETE", (0, 1), t, comm=team, id=1, count=1); t += 10
    for where in (0, (0, 1)):
        w.team_end(where, t, team); rec("THREAD_TEAM_END", where, t, comm=team)
    t += 10
    w.join(0, t); rec("THREAD_JOIN", 0, t); t += 10
    # rank 1: the partner side
    w.recv(1, 130, source=0, tag=3, bytes=100); rec("MPI_RECV", 1, 130, peer=0, tag=3, bytes=100)
    w.collective(1, 200, 260, "MPI_Bcast", root=1, sent=64 * 2, received=64)
    rec("ENTER", 1, 200, region="MPI_Bcast"); rec("MPI_COLLECTIVE_BEGIN", 1, 201)
    rec("MPI_COLLECTIVE_END", 1, 259, op=1, root=1, sent=128, received=64)
    rec("LEAVE", 1, 260, region="MPI_Bcast")
    cont = w.team([(1, 0), (1, 1)], name="pthreads", paradigm="PTHREAD")
    w.thread_create(1, t, cont, 1); rec("THREAD_CREATE", 1, t, comm=cont, id=1)
    w.thread_begin((1, 1), t + 1, cont, 1); rec("THREAD_BEGIN", (1, 1), t + 1, comm=cont, id=1)
    w.thread_end((1, 1), t + 5, cont, 1); rec("THREAD_END", (1, 1), t + 5, comm=cont, id=1)
    w.thread_wait(1, t + 6, cont, 1); rec("THREAD_WAIT", 1, t + 6, comm=cont, id=1); t += 10
    cyc = w.metric_member("PAPI_TOT_CYC")
    temp = w.metric_member("temperature", "double", unit="C", mode="absolute_point")
    cls = w.metric_class([cyc, temp])
    w.metric(0, t, cls, [123456, 36.6]); rec("METRIC", 0, t, values=[123456, 36.6]); t += 10
    win = w.rma_win("win")
    w.rma_win_create(0, t, win); rec("RMA_WIN_CREATE", 0, t, win=win); t += 10
    w.rma_collective_begin(0, t); rec("RMA_COLLECTIVE_BEGIN", 0, t); t += 10
    w.rma_collective_end(0, t, win, root=0, sent=1, received=2); rec("RMA_COLLECTIVE_END", 0, t, win=win, remote=0); t += 10
    grp = w.group("sync", [0, 1])
    w.rma_group_sync(0, t, win, grp); rec("RMA_GROUP_SYNC", 0, t, win=win, remote=grp); t += 10
    w.rma_request_lock(0, t, win, 1, 5); rec("RMA_REQUEST_LOCK", 0, t, win=win, remote=1, matching=5); t += 10
    w.rma_acquire_lock(0, t, win, 1, 5); rec("RMA_ACQUIRE_LOCK", 0, t, win=win, remote=1, matching=5); t += 10
    w.rma_try_lock(0, t, win, 1, 6, "shared"); rec("RMA_TRY_LOCK", 0, t, win=win, remote=1, matching=6); t += 10
    w.rma_put(0, t, win, 1, 4096, 77); rec("RMA_PUT", 0, t, win=win, remote=1, bytes=4096, matching=77); t += 10
    w.rma_get(0, t, win, 1, 2048, 78); rec("RMA_GET", 0, t, win=win, remote=1, bytes=2048, matching=78); t += 10
    w.rma_atomic(0, t, win, 1, "swap", 8, 8, 79); rec("RMA_ATOMIC", 0, t, win=win, remote=1, matching=79); t += 10
    w.rma_op_test(0, t, win, 77); rec("RMA_OP_TEST", 0, t, win=win, matching=77); t += 10
    w.rma_op_complete_blocking(0, t, win, 77); rec("RMA_OP_COMPLETE_BLOCKING", 0, t, win=win, matching=77); t += 10
    w.rma_op_complete_non_blocking(0, t, win, 78); rec("RMA_OP_COMPLETE_NON_BLOCKING", 0, t, win=win, matching=78); t += 10
    w.rma_op_complete_remote(0, t, win, 79); rec("RMA_OP_COMPLETE_REMOTE", 0, t, win=win, matching=79); t += 10
    w.rma_sync(0, t, win, 1, "notify_out"); rec("RMA_SYNC", 0, t, win=win, remote=1); t += 10
    w.rma_wait_change(0, t, win); rec("RMA_WAIT_CHANGE", 0, t, win=win); t += 10
    w.rma_release_lock(0, t, win, 1, 5); rec("RMA_RELEASE_LOCK", 0, t, win=win, remote=1, matching=5); t += 10
    w.rma_win_destroy(0, t, win); rec("RMA_WIN_DESTROY", 0, t, win=win); t += 10
    w.leave(0, t, "main"); rec("LEAVE", 0, t, region="main"); t += 10
    w.program_end(0, t, 3); rec("PROGRAM_END", 0, t, exit_status=3)
    w.enter(("loc", gpu), 300, "kernel"); rec("ENTER", ("loc", gpu), 300, region="kernel")
    w.leave(("loc", gpu), 310, "kernel"); rec("LEAVE", ("loc", gpu), 310, region="kernel")
    w.close()
    return log


@needs_otf2_print
def test_every_kind_is_written(tmp_path):
    log = write_everything(tmp_path / "t")
    written = {k for k, *_ in log}
    assert written == set(earlc.KIND_NAMES), set(earlc.KIND_NAMES) - written
    printed = printed_events(tmp_path / "t" / "traces.otf2")
    assert len(printed) == len(log)
    assert sorted(k for k, *_ in printed) == sorted(k for k, *_ in log)
    text = "\n".join(e[3] for e in printed)
    assert 'Name: "./app"' in text and '"-n"' in text
    assert '("PAPI_TOT_CYC" <' in text and "36.6" in text
    assert "Operation: BCAST" in text and "Root: 1" in text
    # events name groups by the refs the file gives them: the group of ranks "sync"
    assert re.search(r'Group: "sync" <\d+>', text)


def test_roundtrip_through_earlc_open(tmp_path):
    """Write with TraceWriter, read with earlc.open, compare every field."""
    log = write_everything(tmp_path / "t")
    trace = earlc.open(tmp_path / "t")
    ev = trace.events
    assert len(ev) == len(log)
    assert not trace.warnings, trace.warnings
    by_loc = {}
    for entry in log:
        by_loc.setdefault(entry[1], []).append(entry)
    regions = {r.id: r.name for r in trace.regions}
    strings = trace.strings
    rows = {}
    for attr in ("messages", "collectives", "threading", "programs", "metrics", "rma"):
        table = getattr(ev, attr)
        rows.update({int(e): (attr, i) for i, e in enumerate(table.event)})
    for loc, entries in by_loc.items():
        ids = ev.of_location(loc)
        assert len(ids) == len(entries)
        for eid, (kind, _, t, f) in zip(ids, entries):
            eid = int(eid)
            assert earlc.KIND_NAMES[ev.kind[eid]] == kind
            assert int(ev.time[eid]) == t
            assert int(ev.location[eid]) == loc
            if "region" in f:
                assert regions[int(ev.region_of(eid))] == f["region"]
            attr, i = rows.get(eid, (None, None))
            if attr == "messages":
                m = ev.messages
                for key, col in (("peer", "peer_rank"), ("tag", "tag"), ("bytes", "bytes"),
                                 ("request", "request")):
                    if key in f:
                        assert int(getattr(m, col)[i]) == f[key], (kind, key)
                if "peer" in f:  # resolved to the partner's location (all in MPI_COMM_WORLD)
                    assert trace.locations[int(m.peer[i])].rank == f["peer"]
            elif attr == "collectives":
                c = ev.collectives
                if "op" in f:
                    assert (int(c.op[i]), int(c.root_rank[i]), int(c.sent[i]), int(c.received[i])) \
                        == (f["op"], f["root"], f["sent"], f["received"])
            elif attr == "threading":
                s = ev.threading
                for key in ("id", "count"):
                    if key in f:
                        assert int(getattr(s, key)[i]) == f[key], (kind, key)
                if "comm" in f:
                    assert int(s.comm[i]) == f["comm"], kind
            elif attr == "programs":
                p = ev.programs
                if "name" in f:
                    assert strings[int(p.name[i])] == f["name"]
                if "exit_status" in f:
                    assert int(p.exit_status[i]) == f["exit_status"]
            elif attr == "metrics":
                mt = ev.metrics
                first, n = int(mt.first[i]), int(mt.n[i])
                raw = ev.metric_values[first:first + n]
                assert int(raw[0]) == f["values"][0]
                assert raw[1:2].view("f8")[0] == pytest.approx(f["values"][1])
            elif attr == "rma":
                r = ev.rma
                for key, col in (("win", "win"), ("remote", "remote"), ("bytes", "bytes"),
                                 ("matching", "matching")):
                    if key in f:
                        assert int(getattr(r, col)[i]) == f[key], (kind, key)
    # definitions
    assert trace.timer_resolution == 1_000_000_000
    assert [loc.declared_events for loc in trace.locations] == \
        [len(by_loc.get(loc.index, [])) for loc in trace.locations]
    world = trace.communicators.by_name("MPI_COMM_WORLD")[0]
    assert world.size == 2
    assert [trace.locations[i].rank for i in world.locations] == [0, 1]
    assert trace.communicators.by_name("team0")[0].size == 2
    assert {r.name: r.role for r in trace.regions}["MPI_Bcast"] == "COLL_ONE2ALL"


def test_bad_input_raises_and_leaves_nothing(tmp_path):
    path = tmp_path / "bad"
    with pytest.raises(earlc.TraceError, match="time goes backwards"):
        with TraceWriter(path, ranks=2) as w:
            w.enter(0, 10, "f")
            w.leave(0, 5, "f")
    assert not path.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith("bad")]

    with TraceWriter(path, ranks=2) as w:
        with pytest.raises(earlc.TraceError, match="outside communicator"):
            w.send(0, 1, dest=2)
        with pytest.raises(earlc.TraceError, match="location 99 is not defined") as e:
            w.enter(("loc", 99), 1, "f")
        assert e.value.status == "invalid argument" or e.value.args
        with pytest.raises(earlc.TraceError, match="region 999 is not defined"):
            w.enter(0, 1, 999)
        with pytest.raises(earlc.TraceError, match="communicator 77 is not defined"):
            w.recv(0, 1, source=0, comm=77)
        with pytest.raises(ValueError, match="no location for rank 5"):
            w.enter(5, 1, "f")
        with pytest.raises(ValueError, match="no communicator named"):
            w.send(0, 1, dest=0, comm="nope")
        with pytest.raises(earlc.TraceError, match="world rank 3"):
            w.comm("c", [0, 3])
        w.enter(0, 2, "f")  # still usable
    assert (path / "traces.otf2").exists()


def test_existing_folder_is_not_overwritten_unless_asked(tmp_path):
    ring(tmp_path / "t")
    with pytest.raises(earlc.TraceError, match="not empty"):
        ring(tmp_path / "t")
    ring(tmp_path / "t", overwrite=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("x")
    with pytest.raises(earlc.TraceError, match="holds no archive"):
        ring(tmp_path / "data", overwrite=True)
    assert (tmp_path / "data" / "keep.txt").read_text() == "x"
    (tmp_path / "file").write_text("x")
    with pytest.raises(earlc.TraceError, match="cannot create the parent folder"):
        TraceWriter(tmp_path / "file" / "t")
    with pytest.raises(earlc.TraceError, match="not a folder"):
        TraceWriter(tmp_path / "file")


def test_writer_after_close_and_unclosed_writer(tmp_path):
    w = TraceWriter(tmp_path / "t")
    w.enter(0, 1, "f")
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.enter(0, 2, "f")
    w2 = TraceWriter(tmp_path / "u")
    w2.enter(0, 1, "f")
    del w2  # never closed: discarded
    assert not (tmp_path / "u").exists()
    assert sorted(os.listdir(tmp_path)) == ["t"]


@needs_otf2_print
@pytest.mark.parametrize("kind", earlc.synth.KINDS)
def test_synth_archives_print_without_warnings(tmp_path, kind):
    earlc.synth(kind, tmp_path / "t", ranks=4 if kind != "omp" else 1, iterations=2)
    for args in ((), ("-G",)):
        otf2_print(tmp_path / "t" / "traces.otf2", *args)


@needs_otf2_print
@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "traces").iterdir()
                                        if (p / "traces.otf2").exists()))
def test_bundled_traces_print_without_warnings(name):
    for args in ((), ("-G",)):
        otf2_print(ROOT / "traces" / name / "traces.otf2", *args)
