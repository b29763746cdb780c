"""`earlc record`: MPI programs of tests/mpi/ recorded with mpiexec -n 2, 3, 4 and
their traces compared with what each program prints about itself; traces
of runs that hang, abort or lose a rank; bad input; and the model columns
the recorder fills (requested source and tag), written without MPI too.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from conftest import ROOT, reference_trace

import earlc
from earlc import record_files as rec
from earlc.otf2names import COLLECTIVE_OPS

MPI_SOURCES = ROOT / "tests" / "mpi"
HAVE_MPI = bool(shutil.which("mpicc") and shutil.which("mpiexec"))
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpicc/mpiexec (Debian mpich, libmpich-dev) "
                                                    "are not installed")
UNDEFINED = 0xFFFFFFFF


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"]
                                                if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    """The test programs compiled with mpicc, and the recorder built."""
    if not HAVE_MPI:
        pytest.skip("mpicc/mpiexec are not installed")
    if not (ROOT / "python" / "earlc" / "libearlc_record.so").exists():
        subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "recorder"], check=True,
                       env=_env(), capture_output=True)
    out = tmp_path_factory.mktemp("mpi")
    progs = {}
    for src in sorted(MPI_SOURCES.glob("*.c")):
        exe = out / src.stem
        subprocess.run(["mpicc", "-g", "-O1", "-Wall", "-Wextra", "-Werror", str(src), "-o",
                        str(exe)], check=True)
        progs[src.stem] = str(exe)
    return progs


def run_record(out, command, *options):
    """`earlc record -o OUT OPTIONS -- COMMAND` as a user runs it: (status, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "earlc", "record", "-o", str(out), *options, "--",
                        *command], capture_output=True, text=True, env=_env(), timeout=120)
    return p.returncode, p.stdout, p.stderr


def otf2_print(anchor):
    p = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr  # not even a warning
    return p.stdout


def comm_members(trace, comm):
    c = trace.communicators[int(comm)]
    return ",".join(str(trace.locations[int(l)].rank) for l in c.locations)


# -- every call, compared with the program's account -------------------------------------

@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_every_call_matches_what_the_program_did(programs, tmp_path, ranks):
    status, stdout, stderr = run_record(tmp_path / "t", ["mpiexec", "-n", str(ranks),
                                                         programs["calls"]])
    assert status == 0, stderr
    trace = earlc.open(tmp_path / "t")
    assert not trace.warnings, trace.warnings
    assert len(trace.locations) == ranks

    said_msgs, said_colls = Counter(), Counter()
    for line in stdout.splitlines():
        f = line.split()
        if f[0] == "msg":
            said_msgs[(int(f[1]), f[2], f[3], int(f[4]), int(f[5]), int(f[6]))] += 1
        elif f[0] == "coll":
            said_colls[(int(f[1]), f[2], f[3], int(f[4]))] += 1

    ev, m = trace.events, trace.events.messages
    direction = {"MPI_SEND": "send", "MPI_ISEND": "send", "MPI_RECV": "recv", "MPI_IRECV": "recv"}
    seen_msgs = Counter()
    for row in range(len(m.event)):
        kind = earlc.KIND_NAMES[int(ev.kind[int(m.event[row])])]
        if kind in direction:
            rank = trace.locations[int(ev.location[int(m.event[row])])].rank
            seen_msgs[(rank, direction[kind], comm_members(trace, m.comm[row]),
                       int(m.peer_rank[row]), int(m.tag[row]), int(m.bytes[row]))] += 1
    assert seen_msgs == said_msgs

    c = trace.events.collectives
    seen_colls = Counter()
    for row in range(len(c.event)):
        rank = trace.locations[int(ev.location[int(c.event[row])])].rank
        root = int(c.root_rank[row])
        seen_colls[(rank, COLLECTIVE_OPS[int(c.op[row])], comm_members(trace, c.comm[row]),
                    -1 if root == UNDEFINED else root)] += 1
    assert seen_colls == said_colls
    # bytes as Score-P counts them (the programs reduce and broadcast one int)
    for row in range(len(c.event)):
        op, size = COLLECTIVE_OPS[int(c.op[row])], trace.communicators[int(c.comm[row])].size
        is_root = int(c.root[row]) == int(ev.location[int(c.event[row])])
        if op == "ALLREDUCE":
            assert int(c.sent[row]) == int(c.received[row]) == 4 * size
        elif op == "BCAST":
            assert (int(c.sent[row]), int(c.received[row])) == (4 * size if is_root else 0, 4)
        elif op == "REDUCE":
            assert (int(c.sent[row]), int(c.received[row])) == (4, 4 * size if is_root else 0)

    # every non-blocking request is paired with its completion
    kinds = [earlc.KIND_NAMES[int(ev.kind[int(e)])] for e in m.event]
    for row, kind in enumerate(kinds):
        if kind in ("MPI_ISEND", "MPI_IRECV_REQUEST", "MPI_ISEND_COMPLETE", "MPI_IRECV"):
            assert m.partner[row] >= 0, kind
    # Score-P's layout: each MPI record inside its call's ENTER/LEAVE
    for loc in range(ranks):
        depth = 0
        for e in ev.of_location(loc):
            kind = earlc.KIND_NAMES[int(ev.kind[e])]
            depth += {"ENTER": 1, "LEAVE": -1}.get(kind, 0)
            if kind.startswith("MPI_"):
                assert depth == 1, (loc, e, kind)
        assert depth == 0
    names = {r.name for r in trace.regions}
    for call in ("MPI_Init", "MPI_Finalize", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Issend",
                 "MPI_Ibsend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Probe", "MPI_Iprobe",
                 "MPI_Test", "MPI_Testall", "MPI_Waitall", "MPI_Comm_split", "MPI_Comm_dup",
                 "MPI_Comm_create", "MPI_Comm_free", "MPI_Exscan", "MPI_Reduce_scatter_block"):
        assert call in names
    otf2_print(trace.path)


# -- a late sender -----------------------------------------------------------------------

@needs_mpi
def test_late_sender_severity_is_the_sleep(programs, tmp_path):
    sleep, iterations = 0.3, 2
    trace = earlc.record(["mpiexec", "-n", "2", programs["late_sender"], str(sleep),
                          str(iterations)], out=tmp_path / "late")
    assert isinstance(trace, earlc.Trace) and trace.record_status == 0
    report = earlc.analyze(trace)
    late = report.total("late_sender") / trace.timer_resolution
    expected = sleep * iterations
    assert abs(late - expected) <= 0.1 * expected, late
    otf2_print(trace.path)


# -- what Score-P leaves out ---------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("ranks", [3, 4])
def test_wildcard_receives_carry_what_they_asked_for(programs, tmp_path, ranks):
    status, stdout, stderr = run_record(tmp_path / "w", ["mpiexec", "-n", str(ranks),
                                                         programs["wildcards"]])
    assert status == 0, stderr
    trace = earlc.open(tmp_path / "w")
    ev, m = trace.events, trace.events.messages
    said = Counter(tuple(int(x) for x in line.split()[1:]) for line in stdout.splitlines()
                   if line.startswith("recv "))
    seen = Counter()
    for row in range(len(m.event)):
        e = int(m.event[row])
        kind = earlc.KIND_NAMES[int(ev.kind[e])]
        if kind in ("MPI_RECV", "MPI_IRECV") and int(m.tag[row]) < 400:
            seen[(int(m.requested_source[row]), int(m.requested_tag[row]), int(m.peer_rank[row]),
                  int(m.tag[row]))] += 1
        if kind == "MPI_IRECV_REQUEST":
            assert m.requested_source[row] != earlc.writer.REQUESTED_UNKNOWN
        if kind in ("MPI_SEND", "MPI_ISEND"):
            assert m.requested_source[row] == m.requested_tag[row] == -2
    assert seen == said
    assert said[(-1, -1, 1, 101)] == 1 and sum(v for k, v in said.items() if k[:2] == (-1, 7)) == ranks - 1

    # a probe has no OTF2 record of its own: what it asked for is on its LEAVE
    text = otf2_print(trace.path)
    probes = re.findall(r'LEAVE\s+0\s+\d+\s+Region: "MPI_Probe".*\n\s+ADDITIONAL ATTRIBUTES: '
                        r'\("earlc::requested_source" <\d+>; INT32; (-?\d+)\), '
                        r'\("earlc::requested_tag" <\d+>; INT32; (-?\d+)\)', text)
    assert probes == [("-1", "300")] * (ranks - 1)

    # which request each Waitany / Waitsome / Testany completed
    completions = re.findall(r'MPI_IRECV\s+0\s+\d+\s+Sender: (\d+) .*Tag: (40\d),.*\n\s+'
                             r'ADDITIONAL ATTRIBUTES: \("earlc::request_index" <\d+>; INT32; (\d+)\)',
                             text)
    said_any = [(int(f[3]), int(f[4]), int(f[2])) for f in
                (line.split() for line in stdout.splitlines() if line.startswith("any "))]
    assert [(int(s), int(t), int(i)) for s, t, i in completions] == said_any
    assert len(said_any) == 3 * (ranks - 1)
    for source, tag, index in said_any:
        assert index == ranks - 1 - source  # request i-1 was posted for rank n-i


def test_score_p_traces_did_not_record_what_receives_asked_for():
    m = earlc.open(reference_trace("pipit-ping-pong")).events.messages
    assert len(m.event) and (m.requested_source == -2).all() and (m.requested_tag == -2).all()


def test_requested_columns_without_mpi(tmp_path):
    """Traces without the attributes (Score-P's) say -2; the writer writes them."""
    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        w.enter(0, 1, "MPI_Send"); w.send(0, 2, dest=1, tag=5, bytes=4); w.leave(0, 3, "MPI_Send")
        w.enter(0, 4, "MPI_Send"); w.send(0, 5, dest=1, tag=6, bytes=4); w.leave(0, 6, "MPI_Send")
        w.enter(1, 1, "MPI_Recv"); w.recv(1, 7, source=0, tag=5, bytes=4); w.leave(1, 8, "MPI_Recv")
        w.enter(1, 9, "MPI_Irecv"); w.irecv_request(1, 10, request=1, requested_source=-1,
                                                    requested_tag=6)
        w.leave(1, 11, "MPI_Irecv")
        w.enter(1, 12, "MPI_Waitany")
        w.irecv(1, 13, source=0, request=1, tag=6, bytes=4, request_index=0)
        w.leave(1, 14, "MPI_Waitany")
    t = earlc.open(tmp_path / "t")
    m = t.events.messages
    kinds = [earlc.KIND_NAMES[int(t.events.kind[int(e)])] for e in m.event]
    got = {k: (int(s), int(g)) for k, s, g in zip(kinds, m.requested_source, m.requested_tag)}
    assert got == {"MPI_SEND": (-2, -2), "MPI_RECV": (-2, -2), "MPI_IRECV_REQUEST": (-1, 6),
                   "MPI_IRECV": (-1, 6)}
    assert "requested_source" in m.to_dataframe().columns
    assert not t.warnings


# -- runs that do not end well ---------------------------------------------------------------

def _groups(report):
    return {g["callpath"]: sorted(g["ranks"]) for g in report.stopped["groups"]}


def _line_of(call, nth=1):
    """'stop.c:N', the line of tests/mpi/stop.c holding the nth call of `call`."""
    lines = [i + 1 for i, text in enumerate((MPI_SOURCES / "stop.c").read_text().splitlines())
             if call + "(" in text]
    return "stop.c:%d" % lines[nth - 1]


@needs_mpi
def test_deadlock_with_timeout_names_the_blocked_calls(programs, tmp_path):
    status, _, stderr = run_record(tmp_path / "d", ["mpiexec", "-n", "4", programs["stop"],
                                                    "deadlock"], "--timeout", "10")
    assert status == 124
    assert "timeout" in stderr and "Traceback" not in stderr
    trace = earlc.open(tmp_path / "d")
    assert trace.warnings.counts["location_incomplete"] == 4
    report = earlc.analyze(trace)
    assert _groups(report) == {"MPI_Recv": [0, 1, 2], "MPI_Barrier": [3]}
    text = report.to_text()
    assert re.search(r"ranks 0-2\s+in MPI_Recv from main \(%s\) since" % _line_of("MPI_Recv"), text)
    assert re.search(r"rank 3\s+in MPI_Barrier from main \(%s\) since" % _line_of("MPI_Barrier", 2),
                     text)
    assert "did not finish within the timeout" in text
    assert re.search(r"since [\d.-]+ s until the run was ended at (\d+\.\d+) s", text)
    data = json.loads(report.to_json())
    assert data["stopped"]["incomplete"] == 4
    assert {s["call"] for s in data["stopped"]["locations"]} == {"MPI_Recv", "MPI_Barrier"}
    otf2_print(trace.path)
    # the same through the command line, in JSON
    p = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(tmp_path / "d"),
                        "--format", "json"], capture_output=True, text=True, env=_env())
    assert p.returncode == 0 and json.loads(p.stdout)["stopped"]["groups"][0]["call"] == "MPI_Recv"
    # its receives never completed: no wildcard receive, and no advice to record it
    p = subprocess.run([sys.executable, "-m", "earlc", "races", str(tmp_path / "d")],
                       capture_output=True, text=True, env=_env())
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert "No wildcard receive" in p.stdout and "earlc record" not in p.stdout


@needs_mpi
def test_sigterm_ends_the_run_and_keeps_what_it_recorded(programs, tmp_path):
    """`kill` (SIGTERM) to earlc record does what Ctrl-C does: ends the run's process
    group, writes the archive of what was recorded, exits with 143."""
    import signal
    import time

    p = subprocess.Popen([sys.executable, "-m", "earlc", "record", "-o", str(tmp_path / "d"), "--",
                          "mpiexec", "-n", "3", programs["stop"], "deadlock"],
                         env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not [f for f in os.listdir(tmp_path) if f.startswith(".earlc-record-")]:
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.05)
    time.sleep(2)  # the ranks reach their deadlock
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    trace = earlc.open(tmp_path / "d")
    assert trace.warnings.counts["location_incomplete"] == 3
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".earlc-record-")]


@needs_mpi
def test_abort_leaves_a_readable_trace(programs, tmp_path):
    status, _, stderr = run_record(tmp_path / "a", ["mpiexec", "-n", "3", programs["stop"], "abort"])
    assert status != 0 and "Traceback" not in stderr
    trace = earlc.open(tmp_path / "a")
    report = earlc.analyze(trace)
    assert _groups(report) == {"MPI_Abort": [1], "MPI_Recv": [0], "MPI_Barrier": [2]}
    text = report.to_text()
    assert "rank 1 called MPI_Abort (error code 3)" in text
    # where in the program each rank stopped: rank 0 in its second MPI_Recv
    assert "rank 0         in MPI_Recv from main (%s)" % _line_of("MPI_Recv", 3) in text
    assert "rank 1         in MPI_Abort from main (%s)" % _line_of("MPI_Abort") in text
    assert trace.locations[1].properties["earlc::call_sites"] == \
        "MPI_Abort from main (%s)" % _line_of("MPI_Abort")
    # what happened before the abort is there: rank 1's first message
    assert earlc.KINDS["MPI_SEND"] in set(trace.events.kind[trace.events.of_location(1)].tolist())
    otf2_print(trace.path)


@needs_mpi
def test_killed_rank_keeps_its_events(programs, tmp_path):
    status, _, stderr = run_record(tmp_path / "k", ["mpiexec", "-n", "3", programs["stop"], "kill"])
    assert status != 0 and "Traceback" not in stderr
    trace = earlc.open(tmp_path / "k")
    report = earlc.analyze(trace)
    groups = _groups(report)
    assert groups["MPI_Recv"] == [0] and groups["MPI_Barrier"] == [2]
    assert groups["(outside recorded calls)"] == [1]
    sends = trace.events.kind[trace.events.of_location(1)] == earlc.KINDS["MPI_SEND"]
    assert sends.sum() == 1
    otf2_print(trace.path)


# -- bad input: one line, status 2 ---------------------------------------------------------

def _one_line_error(status, stderr, *fragments):
    assert status == 2, stderr
    lines = [l for l in stderr.splitlines() if l.startswith("earlc")]
    assert len(lines) == 1 and lines[0].startswith("earlc: error: "), stderr
    assert "Traceback" not in stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_command_not_found(tmp_path):
    status, _, stderr = run_record(tmp_path / "x", ["earlc-no-such-command"])
    _one_line_error(status, stderr, "earlc-no-such-command: command not found")
    assert not (tmp_path / "x").exists()


def test_no_command_and_bad_timeout(tmp_path):
    p = subprocess.run([sys.executable, "-m", "earlc", "record", "-o", str(tmp_path / "x")],
                       capture_output=True, text=True, env=_env())
    _one_line_error(p.returncode, p.stderr, "no command")
    status, _, stderr = run_record(tmp_path / "x", ["true"], "--timeout", "0")
    _one_line_error(status, stderr, "--timeout")


def test_scratch_folder_that_does_not_exist(tmp_path):
    env = _env()
    env["EARLC_RECORD_TMPDIR"] = str(tmp_path / "missing")
    p = subprocess.run([sys.executable, "-m", "earlc", "record", "-o", str(tmp_path / "x"), "--",
                        "true"], capture_output=True, text=True, env=env, timeout=120)
    _one_line_error(p.returncode, p.stderr, "EARLC_RECORD_TMPDIR=%s is not a folder"
                    % (tmp_path / "missing"))
    assert not (tmp_path / "x").exists() and not (tmp_path / "missing").exists()


@needs_mpi
def test_not_an_mpi_program(programs, tmp_path):
    status, _, stderr = run_record(tmp_path / "x", ["true"])
    _one_line_error(status, stderr, "recorded nothing", "not an MPI program")
    assert not (tmp_path / "x").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".earlc-record")]


@needs_mpi
def test_output_folder_in_the_way(programs, tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    status, _, stderr = run_record(busy, ["mpiexec", "-n", "2", programs["late_sender"], "0", "1"])
    _one_line_error(status, stderr, "not empty", "--force")
    status, _, stderr = run_record(busy, ["mpiexec", "-n", "2", programs["late_sender"], "0", "1"],
                                   "--force")
    _one_line_error(status, stderr, "no trace archive")
    assert (busy / "notes.txt").read_text() == "mine"
    # an archive is replaced with --force
    out = tmp_path / "again"
    cmd = ["mpiexec", "-n", "2", programs["late_sender"], "0", "1"]
    assert run_record(out, cmd)[0] == 0
    _one_line_error(*run_record(out, cmd)[::2], "not empty")
    assert run_record(out, cmd, "--force")[0] == 0
    assert len(earlc.open(out).locations) == 2


@needs_mpi
def test_program_of_another_mpi_library(programs, tmp_path):
    """A program linked against Open MPI's libmpi.so.40 (a stand-in here) is refused
    before it runs: the recorder's MPICH handles would mean other things to it."""
    (tmp_path / "fake.c").write_text("int MPI_Init(int *c, char ***v) { (void)c; (void)v; return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libmpi.so.40", str(tmp_path / "fake.c"),
                    "-o", str(tmp_path / "libmpi.so.40")], check=True)
    (tmp_path / "prog.c").write_text("int MPI_Init(int *, char ***);\n"
                                     "int main(int c, char **v) { return MPI_Init(&c, &v); }\n")
    subprocess.run(["cc", str(tmp_path / "prog.c"), str(tmp_path / "libmpi.so.40"),
                    "-Wl,-rpath," + str(tmp_path), "-o", str(tmp_path / "prog")], check=True)
    status, _, stderr = run_record(tmp_path / "x", ["mpiexec", "-n", "2", str(tmp_path / "prog")])
    _one_line_error(status, stderr, "Open MPI", "libmpi.so.40", "MPICH")


# -- an incomplete trace without MPI -------------------------------------------------------

def test_stop_report_of_a_written_trace(tmp_path):
    with earlc.TraceWriter(tmp_path / "t", ranks=3) as w:
        for r in range(3):
            w.enter(r, 10, "main")
        w.enter(0, 20, "MPI_Recv"); w.enter(1, 25, "MPI_Recv")
        w.leave(2, 30, "main")
        w.mark_incomplete(0, "ended by the test")
        w.mark_incomplete(1, "ended by the test")
    trace = earlc.open(tmp_path / "t")
    assert trace.warnings.counts["location_incomplete"] == 2
    details = [d for d in trace.warnings.details if d[0] == "location_incomplete"]
    assert [d[1] for d in details] == [0, 1] and "ended by the test" in details[0][4]
    assert [l.incomplete for l in trace.locations] == ["ended by the test"] * 2 + [None]
    report = earlc.analyze(trace)
    groups = {g["callpath"]: g for g in report.stopped["groups"]}
    assert sorted(groups["main/MPI_Recv"]["ranks"]) == [0, 1]
    assert groups["main/MPI_Recv"]["since_first_ticks"] == 20
    assert groups["(finished)"]["ranks"] == [2]
    assert "ranks 0-1      in main/MPI_Recv since" in report.to_text()
    # a complete trace has no stop report
    assert earlc.analyze(earlc.open(ROOT / "traces" / "demo-ring")).stopped is None
    assert "stopped" not in json.loads(earlc.analyze(earlc.open(ROOT / "traces" / "demo-ring")).to_json())


# -- clocks and the recorder's files, without MPI -------------------------------------------

def test_many_events_at_once(tmp_path):
    k = earlc.KINDS
    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        send, recv = w.region_ref("MPI_Send"), w.region_ref("MPI_Recv")
        source_ref, tag_ref = w.requested_attributes()
        w.events(0, [k["ENTER"], k["MPI_SEND"], k["LEAVE"]], [10, 11, 12], ref=[send, w.world, send],
                 peer=[0, 1, 0], tag=[0, 9, 0], bytes=[0, 64, 0])
        w.events(1, [k["ENTER"], k["MPI_RECV"], k["LEAVE"]], [5, 20, 21], ref=[recv, w.world, recv],
                 peer=[0, 0, 0], tag=[0, 9, 0], bytes=[0, 64, 0],
                 attributes={source_ref: [w.ABSENT, -1, w.ABSENT], tag_ref: [w.ABSENT, 9, w.ABSENT]})
        with pytest.raises(ValueError):
            w.events(1, [k["ENTER"]], [30, 31], ref=[recv])
        with pytest.raises(earlc.TraceError):  # rank 5 is outside the communicator
            w.events(1, [k["MPI_SEND"]], [40], ref=[w.world], peer=[5])
    t = earlc.open(tmp_path / "t")
    m = t.events.messages
    assert m.bytes.tolist() == [64, 64] and m.requested_source.tolist() == [-2, -1]
    assert m.requested_tag.tolist() == [-2, 9] and not t.warnings


def test_clock_offsets_are_applied_by_open(tmp_path):
    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        w.enter(0, 1000, "MPI_Send"); w.send(0, 1100, dest=1, tag=1, bytes=4); w.leave(0, 1200, "MPI_Send")
        w.enter(1, 100, "MPI_Recv"); w.recv(1, 300, source=0, tag=1, bytes=4); w.leave(1, 400, "MPI_Recv")
        w.clock_offset(1, 0, 1000)
        w.clock_offset(1, 10000, 2000)  # drifting: +0.1 tick per tick
        with pytest.raises(earlc.TraceError):
            w.clock_offset(1, 5000, 0)   # not after the previous one
    t = earlc.open(tmp_path / "t")
    rank1 = t.events.time[t.events.of_location(1)].tolist()
    assert rank1 == [1110, 1330, 1440]
    assert t.start_time == 1000 and not t.warnings


def _fake_rank(folder, rank, size, records, finalized=True, clock=()):
    """Files as the recorder writes them (csrc/include/earlc_record.h)."""
    lines = ["earlc-record 1", "rank %d %d 1 host%d" % (rank, size, rank),
             "library MPICH Version:\t4.0.2", "built-for MPICH 4.0.2", "thread-level 0",
             "call 0 MPI_Init", "call 1 MPI_Recv", "call 2 MPI_Send",
             "comm 0 0 %d %s" % (size, " ".join(str(r) for r in range(size))), "comm 1 self"]
    lines += ["clock %d %d" % c for c in clock]
    if finalized:
        lines.append("finalized 99999")
    (folder / ("rank-%d.defs" % rank)).write_text("\n".join(lines) + "\n")
    ev = np.zeros(len(records) + 5, dtype=rec.RECORD_DTYPE)  # zeros after: the end
    for i, (t, kind, comm, peer, tag, nbytes) in enumerate(records):
        ev[i] = (t, comm, peer, tag, 0, nbytes << 8 | kind)
    ev.tofile(str(folder / ("rank-%d.events" % rank)))


def test_assembly_of_recorder_files(tmp_path):
    """Rank 1 is on another machine (clock offsets) and was killed while in
    MPI_Recv; what it wrote is assembled, marked incomplete, times corrected."""
    raw = tmp_path / "raw"
    raw.mkdir()
    _fake_rank(raw, 0, 2, [(1000, rec.ENTER, 2, 0, 0, 0), (1001, rec.SEND, 0, 1, 7, 8),
                           (1002, rec.LEAVE, 2, 0, 0, 0)])
    _fake_rank(raw, 1, 2, [(10, rec.ENTER, 1, 0, 0, 0)], finalized=False, clock=[(5, 950)])
    run = rec.RunResult(status=137, timed_out=False, interrupted=False, seconds=1.0)
    rec.assemble(str(raw), str(tmp_path / "out"), run)
    t = earlc.open(tmp_path / "out")
    assert t.warnings.counts["location_incomplete"] == 1
    assert t.warnings.counts["region_not_left"] == 1
    # one offset measured (no MPI_Finalize): held constant
    assert t.events.time[t.events.of_location(1)].tolist() == [960]
    stop = earlc.analyze(t).stopped
    assert stop["groups"][0]["callpath"] == "MPI_Recv" and stop["groups"][0]["ranks"] == [1]
    assert "exit status 137" in stop["locations"][1]["reason"]
