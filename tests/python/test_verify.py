"""`earlc verify`: the MPI programs of tests/mpi/ written for it, each with its set
of match orders and outcomes known by construction (see each program's head
comment), run with mpiexec -n 3; replays of the failing schedules; alternatives
that cannot be forced; bad input; and schedules without MPI.

The deadlocks need a timeout: the runs that must deadlock get a short one, the
others a long one that only a hang would reach.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

import earlc
from earlc import verify_schedule as vs

MPI_SOURCES = ROOT / "tests" / "mpi"
HAVE_MPI = bool(shutil.which("mpicc") and shutil.which("mpiexec"))
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpicc/mpiexec (Debian mpich, libmpich-dev) "
                                                    "are not installed")
PROGRAMS = ("master_worker", "crooked_barrier", "benign", "chain", "diverge", "late_sender")
LONG = "60"      # seconds: reached only by a hang
DEADLOCK = "6"   # seconds: the runs that deadlock end here


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"]
                                                if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    if not HAVE_MPI:
        pytest.skip("mpicc/mpiexec are not installed")
    if not (ROOT / "python" / "earlc" / "libearlc_record.so").exists():
        subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "recorder"], check=True,
                       env=_env(), capture_output=True)
    out = tmp_path_factory.mktemp("verify-mpi")
    progs = {}
    for name in PROGRAMS:
        exe = out / name
        subprocess.run(["mpicc", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
                        str(MPI_SOURCES / (name + ".c")), "-o", str(exe)], check=True)
        progs[name] = str(exe)
    return progs


def verify(out, command, *options, fmt="json"):
    """`earlc verify -o OUT --format FMT OPTIONS -- COMMAND`: (status, report, stderr),
    the report parsed when JSON."""
    p = subprocess.run([sys.executable, "-m", "earlc", "verify", "-o", str(out), "--format", fmt,
                        *options, "--", *command], capture_output=True, text=True, env=_env(),
                       timeout=600)
    report = p.stdout
    if fmt == "json" and p.returncode in (0, 1):
        report = json.loads(p.stdout)
    return p.returncode, report, p.stderr


def mpiexec(program, *args, n=3):
    return ["mpiexec", "-n", str(n), program, *args]


def line_of(source, text, nth=1):
    """'prog.c:N', the line of tests/mpi/SOURCE holding the nth `text`."""
    lines = [i + 1 for i, t in enumerate((MPI_SOURCES / source).read_text().splitlines())
             if text in t]
    return "%s:%d" % (source, lines[nth - 1])


def outcomes(report):
    return sorted(r["outcome"] for r in report["runs"])


def failing(report):
    return [r for r in report["runs"] if r["failed"]]


def flips(run):
    return [(f["rank"], f["wildcard"], f["call"], f["source"], f.get("took")) for f in run["flipped"]]


def left_behind(program):
    """Processes still running the program (none may survive a run)."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if program in line and "earlc" not in line]


def replay_twice(tmp_path, schedule, command, *options):
    """Replay a schedule twice: the two reports."""
    reports = []
    for k in range(2):
        status, report, stderr = verify(tmp_path / ("replay%d" % k), command, "--replay",
                                        schedule, *options)
        assert status == 1, stderr
        reports.append(report)
    return reports


# -- the test programs ---------------------------------------------------------------------

@needs_mpi
def test_master_worker_deadlocks_when_the_last_worker_is_first(programs, tmp_path):
    prog = programs["master_worker"]
    status, report, stderr = verify(tmp_path / "v", mpiexec(prog), "--timeout", DEADLOCK)
    assert status == 1, stderr
    assert outcomes(report) == ["completed", "deadlock"]
    assert report["summary"]["wildcard_operations"] == 2 and report["summary"]["alternatives"] == 1
    bad = failing(report)
    assert len(bad) == 1 and report["runs"][0] is bad[0]  # failing runs first
    run = bad[0]
    assert flips(run) == [(0, 0, "MPI_Recv", 2, 1)]
    assert run["flipped"][0]["site"] == "main (%s)" % line_of("master_worker.c", "MPI_INT, MPI_ANY_SOURCE")
    groups = {tuple(g["ranks"]): g for g in run["stopped"]["groups"]}
    assert groups[(0,)]["call"] == "MPI_Recv"
    assert groups[(0,)]["call_site"] == "main (%s)" % line_of("master_worker.c", "READY, MPI_COMM")
    assert groups[(1, 2)]["call_site"] == "main (%s)" % line_of("master_worker.c", "STOP, MPI_COMM", 2)
    assert os.path.exists(run["archive"]) and os.path.exists(run["schedule"])
    assert not left_behind(prog)
    assert json.load(open(tmp_path / "v" / "verify.json"))["status"] == 1
    # the schedule fails the same way every time
    for again in replay_twice(tmp_path, run["schedule"], mpiexec(prog), "--timeout", "3"):
        assert outcomes(again) == ["deadlock"]
        stopped = {tuple(g["ranks"]): g["call_site"] for g in again["runs"][0]["stopped"]["groups"]}
        assert stopped == {k: g["call_site"] for k, g in groups.items()}
        assert not again["runs"][0]["not_applied"]
    assert not left_behind(prog)


@needs_mpi
def test_crooked_barrier_aborts_in_the_order_no_plain_run_shows(programs, tmp_path):
    """Vo's crooked barrier: MPI_Irecv(ANY) posted before a barrier may take the
    message sent after it; the plain run never does.  Through the Python API."""
    prog = programs["crooked_barrier"]
    v = earlc.verify(mpiexec(prog), out=tmp_path / "v", timeout=float(LONG))
    assert v.status == 1 and [r.outcome for r in v.runs] == ["completed", "abort"]
    report = v.to_dict()
    assert report == json.load(open(tmp_path / "v" / "verify.json"))
    run = failing(report)[0]
    assert flips(run) == [(1, 0, "MPI_Irecv", 2, 0)]
    assert run["exit_status"] != 0 and run["parent"] == 0
    groups = {tuple(g["ranks"]): g for g in run["stopped"]["groups"]}
    assert groups[(1,)]["call"] == "MPI_Abort"
    assert groups[(1,)]["reasons"] == ["rank 1 called MPI_Abort (error code 3)"]
    text = v.to_text()
    irecv = line_of("crooked_barrier.c", "MPI_Irecv(&x")
    for expected in ["1 failed", "FAILED run 1: abort: rank 1 called MPI_Abort (error code 3)",
                     "* rank 1 wildcard #0 (MPI_Irecv at main (%s)) from 2, took 0 in run 0" % irecv,
                     "rank 1         in MPI_Abort from main (%s)"
                     % line_of("crooked_barrier.c", "MPI_Abort(MPI_COMM"),
                     "replay:   earlc verify --replay %s -- mpiexec -n 3 %s" % (run["schedule"], prog),
                     "archive:  %s" % run["archive"]]:
        assert expected in text, (expected, text)
    assert text.index("FAILED") < text.index("Runs (failing first)")
    # the schedule names both of rank 1's decisions; replayed, it aborts again
    schedule = json.load(open(run["schedule"]))
    assert [(d["rank"], d["wildcard"], d["call"], d["source"]) for d in schedule["decisions"]] == \
        [(1, 0, "MPI_Irecv", 2), (1, 1, "MPI_Recv", 0)]
    for again in replay_twice(tmp_path, run["schedule"], mpiexec(prog)):
        assert outcomes(again) == ["abort"]


@needs_mpi
@pytest.mark.parametrize("how", ["signal", "exit"])
def test_a_process_killed_or_exiting_in_one_order(programs, tmp_path, how):
    status, report, stderr = verify(tmp_path / "v", mpiexec(programs["crooked_barrier"], how),
                                    "--timeout", LONG)
    assert status == 1, stderr
    assert outcomes(report) == ["completed", how]
    run = failing(report)[0]
    reasons = {r for g in run["stopped"]["groups"] for r in g["reasons"]}
    if how == "signal":
        assert run["signal"] == 11
    else:
        # MPICH's mpiexec then kills the others, and may exit with the signal's number
        assert run["signal"] is None
        assert "rank 1 exited with status 3 without calling MPI_Finalize" in reasons, reasons
    assert flips(run) == [(1, 0, "MPI_Irecv", 2, 0)]


@needs_mpi
def test_benign_race_through_the_python_api(programs, tmp_path):
    v = earlc.verify(mpiexec(programs["benign"]), out=tmp_path / "v", timeout=float(LONG))
    assert isinstance(v, earlc.Verification) and v.status == 0
    df = v.to_dataframe()
    assert list(df["outcome"]) == ["completed", "completed"] and list(df["flips"]) == [0, 1]
    assert df.loc[1, "explored"] == "rank 0 wildcard #0 from 2 (took 1)"
    # the probes are the decisions; their alternatives come from the receives after them
    assert [d.call for d in v.runs[0].decisions] == ["MPI_Probe", "MPI_Probe"]
    assert [d.alternatives for d in v.runs[0].decisions] == [[2], []]
    assert [d.source for d in v.runs[1].decisions] == [2, 1]
    text = v.to_text()
    assert "every run completed" in text and "FAILED" not in text
    # completed runs keep their schedule and output, not their archive (but the first)
    assert v.runs[1].archive is None and os.path.exists(v.runs[1].schedule)
    assert v.runs[0].archive and os.path.exists(v.runs[0].archive)
    assert open(v.runs[1].output).read().split() == ["sum", "30"]


@needs_mpi
def test_polling_iprobe_and_compare_output(programs, tmp_path):
    # an MPI_Iprobe that finds nothing is a poll, not a decision
    status, report, stderr = verify(tmp_path / "i", mpiexec(programs["benign"], "iprobe"),
                                    "--timeout", LONG)
    assert status == 0, stderr
    assert outcomes(report) == ["completed", "completed"]
    schedule = json.load(open(report["runs"][1]["schedule"]))
    assert [(d["wildcard"], d["call"], d["source"]) for d in schedule["decisions"]] == \
        [(0, "MPI_Iprobe", 2), (1, "MPI_Iprobe", 1)]
    # the output tells the order of arrival: another order is a failure with --compare-output
    status, report, stderr = verify(tmp_path / "o", mpiexec(programs["benign"], "order"),
                                    "--timeout", LONG, "--compare-output")
    assert status == 1, stderr
    assert outcomes(report) == ["completed", "output"]
    assert failing(report)[0]["output_differs"] == ["+from 2", " from 1", "-from 2", " sum 30"]


@needs_mpi
def test_chain_of_two_needs_two_flips(programs, tmp_path):
    # the wildcard receive made by MPI_Sendrecv here
    status, report, stderr = verify(tmp_path / "b1", mpiexec(programs["chain"], "2", "0.1",
                                                            "sendrecv"),
                                    "--timeout", LONG, "--bound", "1")
    assert status == 0, stderr
    assert outcomes(report) == ["completed"] * 3
    assert report["summary"]["cut_by_bound"] == 1 and report["options"]["bound"] == 1
    assert {f["call"] for r in report["runs"] for f in r["forced"]} == {"MPI_Sendrecv"}
    cmd = mpiexec(programs["chain"], "2")
    status, report, stderr = verify(tmp_path / "b2", cmd, "--timeout", LONG, "--bound", "2")
    assert status == 1, stderr
    assert outcomes(report) == ["abort"] + ["completed"] * 3
    assert report["summary"]["cut_by_bound"] == 0
    run = failing(report)[0]
    assert sorted(flips(run)) == [(0, 0, "MPI_Recv", 2, 1), (0, 1, "MPI_Recv", 2, 1)]
    for again in replay_twice(tmp_path, run["schedule"], cmd):
        assert outcomes(again) == ["abort"]


@needs_mpi
def test_chain_of_three(programs, tmp_path):
    cmd = mpiexec(programs["chain"], "3")
    status, report, stderr = verify(tmp_path / "b1", cmd, "--timeout", LONG, "--bound", "1")
    assert status == 0, stderr
    assert outcomes(report) == ["completed"] * 4
    status, report, stderr = verify(tmp_path / "b2", cmd, "--timeout", LONG, "--bound", "2")
    assert status == 1, stderr
    assert outcomes(report) == ["abort"] * 3 + ["completed"] * 4
    assert all(len(r["flipped"]) == 2 for r in failing(report))
    assert report["summary"]["cut_by_bound"] == 1
    for k, run in enumerate(failing(report)):  # each failing schedule fails again
        status, again, stderr = verify(tmp_path / ("r%d" % k), cmd, "--replay", run["schedule"])
        assert status == 1 and outcomes(again) == ["abort"], stderr
    # each run a match order of its own
    orders = {tuple((d["wildcard"], d["source"]) for d in json.load(open(r["schedule"]))["decisions"])
              for r in report["runs"]}
    assert len(orders) == 7
    # --max-runs caps the search and says so
    status, report, stderr = verify(tmp_path / "m", cmd, "--timeout", LONG, "--max-runs", "2",
                                    fmt="text")
    assert status == 0, stderr
    assert "2 runs of" in report and "--max-runs 2 stopped the search with 2 alternatives" in report


@needs_mpi
def test_alternative_that_cannot_be_forced_is_reported(programs, tmp_path):
    prog = programs["diverge"]
    status, report, stderr = verify(tmp_path / "v", mpiexec(prog, str(tmp_path / "marker")),
                                    "--timeout", "4")
    assert status == 0, stderr
    assert outcomes(report) == ["completed", "unforceable"]
    (entry,) = report["unforceable"]
    assert (entry["decision"]["rank"], entry["decision"]["wildcard"], entry["decision"]["source"]) \
        == (0, 0, 2)
    assert "never came" in entry["why"]
    assert not left_behind(prog)


# -- bad input: one line, status 2 ----------------------------------------------------------

def _one_line_error(status, stderr, *fragments):
    assert status == 2, stderr
    lines = [l for l in stderr.splitlines() if l.startswith("earlc")]
    assert len(lines) == 1 and lines[0].startswith("earlc"), stderr
    assert "error" in lines[0] and "Traceback" not in stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@needs_mpi
def test_not_an_mpi_program_and_no_wildcard(programs, tmp_path):
    status, _, stderr = verify(tmp_path / "x", ["true"])
    _one_line_error(status, stderr, "not an MPI program")
    assert not (tmp_path / "x").exists()
    status, _, stderr = verify(tmp_path / "y", mpiexec(programs["late_sender"], "0", "1", n=2),
                               "--timeout", LONG)
    _one_line_error(status, stderr, "no wildcard receive", "one run suffices")


@needs_mpi
def test_schedule_that_does_not_fit(programs, tmp_path):
    # a schedule of another program: rank 1 makes no wildcard operation here
    other = tmp_path / "other.json"
    other.write_text(vs.schedule_json([vs.Forced(1, 0, "MPI_Irecv", 2, True, 0)],
                                      ["mpiexec", "-n", "3", "./crooked_barrier"], 3))
    status, _, stderr = verify(tmp_path / "a", mpiexec(programs["master_worker"]), "--replay",
                               str(other), "--timeout", LONG)
    _one_line_error(status, stderr, "does not fit the program", "decision 1",
                    "rank 1 wildcard #0", "never reached")
    # the operation is another call
    probe = tmp_path / "probe.json"
    probe.write_text(vs.schedule_json([vs.Forced(0, 0, "MPI_Recv", 1),
                                       vs.Forced(0, 1, "MPI_Probe", 2)], [], 3))
    status, _, stderr = verify(tmp_path / "b", mpiexec(programs["master_worker"]), "--replay",
                               str(probe), "--timeout", LONG)
    _one_line_error(status, stderr, "decision 2", "wildcard operation #1 is MPI_Recv, not "
                                                  "MPI_Probe")
    # a rank the command does not start: said before running
    far = tmp_path / "far.json"
    far.write_text(vs.schedule_json([vs.Forced(5, 0, "MPI_Recv", 1)], [], 6))
    status, _, stderr = verify(tmp_path / "c", mpiexec(programs["master_worker"]), "--replay",
                               str(far))
    _one_line_error(status, stderr, "decision 1", "starts 3 processes")
    assert not (tmp_path / "c" / "run-0").exists()


def test_usage_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"earlc_schedule": 1, "decisions": [{"rank": 0, "wildcard": -1,
                                                                     "source": 1,
                                                                     "call": "MPI_Recv"}]}))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    cases = [
        ([], "no command"),
        (["--timeout", "0", "--", "true"], "--timeout"),
        (["--bound", "0", "--", "true"], "--bound"),
        (["--max-runs", "0", "--", "true"], "--max-runs"),
        (["--replay", str(bad), "--", "true"], "not JSON"),
        (["--replay", str(wrong), "--", "true"], "'wildcard' must be a whole number"),
        (["--replay", str(tmp_path / "none.json"), "--", "true"], "no such file"),
        (["--replay", str(wrong), "--bound", "2", "--", "true"], "--replay runs one schedule"),
        (["-o", str(busy), "--", "true"], "not empty"),
        (["--", "earlc-no-such-command"], "command not found"),
    ]
    for args, fragment in cases:
        if args[:2] != ["-o", str(busy)]:
            args = ["-o", str(tmp_path / "out")] + args
        p = subprocess.run([sys.executable, "-m", "earlc", "verify", *args], capture_output=True,
                           text=True, env=_env())
        _one_line_error(p.returncode, p.stderr, fragment)
    assert (busy / "notes.txt").read_text() == "mine"
    # --force replaces an earlier verification's files, and no other
    (busy / "run-0").mkdir()
    (busy / "verify.json").write_text("{}")
    p = subprocess.run([sys.executable, "-m", "earlc", "verify", "-o", str(busy), "--force", "--",
                        "true"], capture_output=True, text=True, env=_env())
    _one_line_error(p.returncode, p.stderr, "not an MPI program")
    assert sorted(os.listdir(busy)) == ["notes.txt"]


# -- schedules and decisions without MPI ---------------------------------------------------------

def test_schedule_files_round_trip(tmp_path):
    forced = [vs.Forced(1, 3, "MPI_Irecv", 2, True, 0, "main (p.c:9)"), vs.Forced(0, 0, "MPI_Recv", 1)]
    path = tmp_path / "s.json"
    path.write_text(vs.schedule_json(forced, ["mpiexec", "-n", "3", "./p"], 3))
    assert vs.load_schedule(str(path)) == forced
    # the recorder's file: each process's decisions by number
    assert vs.recorder_text(forced) == "earlc-schedule 1\n0 0 1 MPI_Recv\n1 3 2 MPI_Irecv\n"
    twice = tmp_path / "t.json"
    twice.write_text(vs.schedule_json(forced + [vs.Forced(1, 3, "MPI_Recv", 0)], [], 3))
    with pytest.raises(vs.VerifyError, match="rank 1 wildcard #3 is named twice"):
        vs.load_schedule(str(twice))


def test_match_order_puts_a_pending_irecv_before_later_receives():
    """A non-blocking receive completes late, but a later receive of its process
    matched after it: the order of a run's decisions says so."""
    d = lambda rank, index, time: vs.Decision(rank, index, "MPI_Recv", 0, 0, 0, (0, 1), time=time)
    irecv, recv, other = d(1, 0, 50), d(1, 1, 20), d(0, 0, 30)
    order = vs._in_match_order([other, recv, irecv])
    assert [(x.rank, x.index) for x in order] == [(1, 0), (1, 1), (0, 0)]
