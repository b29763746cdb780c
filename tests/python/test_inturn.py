"""Traces bigger than memory (earlc.parts.inturn, docs/memory.md): the parts of a
trace analysed one after another in one process, with what crosses parts in a
scratch folder, give the report of the analysis in one piece, value for value
(JSON, text, CUBE), on every generated program shape, the bundled traces and the
real traces, in 2 to 5 parts, with the collectives as representatives and with
every member; the command line chooses parts from --memory (or the machine's
available memory) and stays within the budget; the scratch folder's faults and
interrupted runs end with one line and leave nothing behind."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import earlc
import earlc.parts
from earlc.parts.inturn import InTurn, needs_parts
from earlc.parts.plan import process_of_locations
from conftest import PARTS_REAL, trace_folders
from test_parts import BUNDLED, PROGRAMS

ROOT = Path(__file__).resolve().parents[2]


def env(**extra):
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + e["PYTHONPATH"]
                                              if e.get("PYTHONPATH") else "")
    e.update(extra)
    return e


def earlc_cli(*args, timeout=600, environ=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "earlc", *map(str, args)], capture_output=True,
                          text=True, env=environ or env(), timeout=timeout, **kwargs)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """name -> archive folder: generated programs, bundled and real traces."""
    return trace_folders(tmp_path_factory.mktemp("inturn"), PROGRAMS, BUNDLED)


def processes(path) -> int:
    defs = earlc._core.Reading(str(path)).definitions()
    return len(set(process_of_locations(defs).tolist()))


def first_difference(want: str, got: str) -> str:
    a, b = json.loads(want), json.loads(got)
    return ", ".join(k for k in a if a[k] != b.get(k)) or "the order of keys"


def test_reports_equal_the_analysis_in_one_piece(traces, tmp_path):
    checked = 0
    for name, path in traces.items():
        whole = earlc.analyze(earlc.open(path))
        want_json, want_text = whole.to_json(), whole.to_text()
        n = processes(path)
        for parts in sorted({min(n, 2), min(n, 3), min(n, 5)}):
            for reps in ((True, False) if parts == min(n, 3) else (True,)):
                with InTurn(path, 1 << 50, scratch=tmp_path, parts=parts,
                            representatives=reps) as it:
                    got = it.analyze()
                    assert it.pp.parts == parts
                got_json = got.to_json()
                assert got_json == want_json, "%s in %d parts (representatives: %s): %s" % (
                    name, parts, reps, first_difference(want_json, got_json))
                assert got.to_text() == want_text, name
                checked += 1
        assert os.listdir(tmp_path) == [], "scratch files left behind"
    assert checked >= 3 * len(PROGRAMS)


def test_representatives_on_large_communicators(tmp_path):
    """Communicators of 16 and 8 members split in 2 and 4 parts: each part gets
    a few of the others' members per instance, and every collective wait state
    (N x N, barrier, broadcast, reduce, scan) is the whole trace's."""
    path = earlc.synth("collectives", tmp_path / "c", ranks=16, iterations=12, split=2,
                       delay=500, delay_rank=5, imbalance=80).path
    want = earlc.analyze(earlc.open(path)).to_json()
    for parts in (2, 4):
        with InTurn(path, 1 << 50, scratch=tmp_path, parts=parts) as it:
            got = it.analyze().to_json()
            members = int(it.pp.ghosts.sum())
        assert got == want, "%d parts: %s" % (parts, first_difference(want, got))
        assert members < int(it.pp.own_events.sum()) * 0.4 * parts


def test_representatives_hold_fewer_ghosts(tmp_path):
    """On a collective of every process, each part gets a few members of the
    others, not all of them; the report stays the same."""
    path = earlc.synth("halo", tmp_path / "h", ranks=16, iterations=60).path
    ghosts = {}
    for reps in (False, True):
        with InTurn(path, 1 << 50, scratch=tmp_path, parts=8, representatives=reps) as it:
            it.pass1()
            ghosts[reps] = int(it.pp.ghosts.sum())
            own = int(it.pp.own_events.sum())
    assert ghosts[True] < 0.75 * ghosts[False], ghosts
    assert ghosts[True] < own


def test_ghosts_are_packed_narrow_in_the_scratch_folder(tmp_path):
    """The ghosts and the representatives go to the scratch folder packed
    (earl_ghosts_pack), a fraction of their 80-byte records, and come back
    the same: the report equals the analysis in one piece."""
    path = earlc.synth("halo", tmp_path / "h", ranks=16, iterations=60).path
    want = earlc.analyze(earlc.open(path)).to_json()
    (tmp_path / "s").mkdir()
    with InTurn(path, 1 << 50, scratch=tmp_path / "s", parts=8) as it:
        it.pass1()
        folder = it.scratch.path
        size = {kind: sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                          if f.startswith(kind) and f.endswith(".bin")) for kind in "gc"}
        records = sum(int(np.fromfile(os.path.join(folder, "g%d.idx" % q), np.int64)[8])
                      for q in range(8))
        reps = sum(c for p in it.reps.values() for where in p.values() for _, _, c in where)
        assert records and reps
        assert size["g"] < 25 * records, (size, records)
        assert size["c"] < 25 * reps, (size, reps)
        got = it.analyze().to_json()
    assert got == want, first_difference(want, got)


@pytest.mark.parametrize("how", ["cut short", "overwritten"])
def test_a_damaged_ghost_file_is_one_scratch_error(tmp_path, how):
    """Packed ghosts changed behind the analysis's back (cut short, or bytes
    overwritten) are not read as wrong records: the error names the scratch
    file."""
    path = earlc.synth("halo", tmp_path / "h", ranks=8, iterations=20).path
    (tmp_path / "s").mkdir()
    with InTurn(path, 1 << 50, scratch=tmp_path / "s", parts=4) as it:
        it.pass1()
        name = os.path.join(it.scratch.path, "g1.bin")
        size = os.path.getsize(name)
        with open(name, "r+b") as f:
            if how == "cut short":
                f.truncate(size // 2)
            else:
                f.seek(size // 2)
                f.write(b"\xff" * (size - size // 2))
        with pytest.raises(earlc.parts.ScratchError, match="damaged file g1.bin"):
            it.analyze()


def test_cube_and_properties(traces, tmp_path):
    path = traces["collectives"]
    whole = earlc.analyze(earlc.open(path), properties=["wait_at_nxn", "late_broadcast"])
    with InTurn(path, 1 << 50, scratch=tmp_path, parts=3) as it:
        got = it.analyze(properties=["wait_at_nxn", "late_broadcast"])
    assert got.to_json() == whole.to_json()
    whole.to_cube(tmp_path / "a.cubex")
    got.to_cube(tmp_path / "b.cubex")
    assert (tmp_path / "a.cubex").read_bytes() == (tmp_path / "b.cubex").read_bytes()


def test_parts_one_at_a_time(traces, tmp_path):
    path = traces["hybrid"]
    whole = earlc.open(path)
    seen = np.zeros(len(whole.locations), dtype=int)
    own_events = 0
    with earlc.parts.in_turn(path, parts=3, scratch=tmp_path) as parts:
        for part in parts:
            assert len(part.trace) >= 1
            seen += part.own
            own_events += int(part.own[part.trace.events.location].sum())
            with pytest.raises(ValueError, match="one part of an analysis in parts"):
                earlc.analyze(part.trace)
        assert os.listdir(tmp_path)  # the scratch folder while the parts are read
    assert (seen == 1).all() and own_events == len(whole)
    assert os.listdir(tmp_path) == []


# -- the command line, the budget ------------------------------------------------------------

@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A trace large enough that the bytes per event, not the fixed costs, decide
    the peak: 4 M events of a 16-rank halo."""
    return earlc.synth("halo", tmp_path_factory.mktemp("large") / "h", ranks=16,
                       events=4_000_000).path


def peak_of(args, **kwargs):
    """(completed process, its peak resident set in bytes).  The peak is the
    process's own (VmHWM): ru_maxrss would start at the resident set of the
    process that started it (Linux keeps it across fork and exec)."""
    code = ("import runpy, sys; sys.argv = ['earlc'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('earlc', run_name='__main__')\n"
            "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
            "    sys.stderr.write('\\nPEAK %d\\n' % (int(hwm[0].split()[1]) * 1024))\n")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                       text=True, env=env(**kwargs), timeout=600)
    lines = r.stderr.strip().splitlines()
    peak = int(lines[-1].split()[1])
    r.stderr = "\n".join(lines[:-1]).strip() + ("\n" if len(lines) > 1 else "")
    return r, peak


def test_memory_budget_gives_the_same_report_within_it(large, tmp_path):
    one = tmp_path / "one.json"
    r = earlc_cli("analyze", large, "--format", "json", "-o", one)
    assert r.returncode == 0, r.stderr
    need = needs_parts(large, "unlimited")
    assert need is None
    budget = 420 << 20
    assert needs_parts(large, budget) is not None  # the whole analysis needs more
    got = tmp_path / "parts.json"
    r, peak = peak_of(["analyze", large, "--memory", "420M", "--scratch", tmp_path,
                       "--format", "json", "-o", got])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # the budget was given: no note
    assert got.read_text() == one.read_text()
    assert peak <= budget, "the analysis in parts peaked at %.0f MB, above its %.0f MB budget" % (
        peak / 2 ** 20, budget / 2 ** 20)
    assert sorted(os.listdir(tmp_path)) == ["one.json", "parts.json"]


def test_many_collectives_in_many_parts_stay_within_the_budget(tmp_path):
    """What every part receives of the other parts' members of a collective is
    many times the members themselves: a trace of collectives on every process
    in many parts stays within its budget while they are chosen (the old window
    of a million members took 700 MB here)."""
    path = earlc.synth("collectives", tmp_path / "c", ranks=32, events=4_000_000).path
    one = earlc_cli("analyze", path, "--format", "json")
    assert one.returncode == 0, one.stderr
    budget = 250 << 20
    r, peak = peak_of(["analyze", path, "--memory", "250M", "--scratch", tmp_path,
                       "--format", "json"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == one.stdout
    assert peak <= budget, "peaked at %.0f MB, above its %.0f MB budget" % (
        peak / 2 ** 20, budget / 2 ** 20)


def test_without_a_budget_the_available_memory_decides(large, tmp_path):
    one = tmp_path / "one.txt"
    assert earlc_cli("analyze", large, "-o", one).returncode == 0
    got = tmp_path / "auto.txt"
    r = earlc_cli("analyze", large, "-o", got, "--scratch", tmp_path,
                  environ=env(EARLC_AVAILABLE_MEMORY="500M"))
    assert r.returncode == 0, r.stderr
    note = r.stderr.strip().splitlines()
    assert len(note) == 1 and "parts one after another" in note[0] and "--memory" in note[0]
    assert got.read_text() == one.read_text()
    # plenty: in one piece, silently
    r = earlc_cli("analyze", large, "-o", got, environ=env(EARLC_AVAILABLE_MEMORY="64G"))
    assert r.returncode == 0 and r.stderr == ""


def test_a_budget_too_small_says_the_smallest_that_works(traces, tmp_path):
    path = traces["halo"]
    r = earlc_cli("analyze", path, "--memory", "100M")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "too small" in lines[0], r.stderr
    smallest = lines[0].rsplit("the smallest budget that works is ", 1)[1]
    r = earlc_cli("analyze", path, "--memory", smallest, "--format", "json")
    assert r.returncode == 0, r.stderr
    whole = earlc_cli("analyze", path, "--memory", "unlimited", "--format", "json")
    assert r.stdout == whole.stdout


def test_bad_budgets_and_scratch_folders_are_one_line(traces, tmp_path):
    path = traces["ring"]
    for args, words in [(["--memory", "lots"], "no memory size"),
                        (["--memory", "0"], "must be positive"),
                        (["--scratch", tmp_path / "missing"], "does not exist"),
                        (["--scratch", Path(__file__)], "is a file")]:
        r = earlc_cli("analyze", path, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        r = earlc_cli("analyze", path, "--scratch", locked)
        assert r.returncode == 2 and "cannot be written" in r.stderr
    r = earlc_cli("analyze", path, environ=env(EARLC_AVAILABLE_MEMORY="plenty"))
    assert r.returncode == 2 and "EARLC_AVAILABLE_MEMORY" in r.stderr


def test_a_scratch_folder_too_small_is_refused_first(large, tmp_path):
    folder = tmp_path / "small"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs",
                                            str(folder)], capture_output=True).returncode:
        pytest.skip("needs a small file system (mount -t tmpfs, as root)")
    try:
        r = earlc_cli("analyze", large, "--memory", "420M", "--scratch", folder)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and str(folder) in lines[0] and "more room" in lines[0], r.stderr
        assert os.listdir(folder) == []
    finally:
        subprocess.run(["umount", str(folder)])


def test_a_scratch_folder_too_small_for_what_the_first_part_wrote_is_refused_then(
        tmp_path, monkeypatch):
    """The first estimate assumes few ghosts; the first part of pass 1 measures
    what the parts write per event, and a folder without room for that is
    refused then, before the disk fills."""
    from earlc.parts import inturn as inturn_module
    from earlc.parts import scratch as scratch_module

    # 2 of 32 ranks per part: most messages cross parts, about 26 bytes per event
    # are written; the first estimate takes a byte per ghost
    monkeypatch.setattr(inturn_module, "PACKED_GHOST_BYTES", 1)
    path = earlc.synth("halo", tmp_path / "h", ranks=32, events=1_000_000).path
    folder = tmp_path / "scratch"
    folder.mkdir()
    with InTurn(path, 1 << 50, scratch=folder, parts=16) as it:
        first = it._scratch_need()
    monkeypatch.setattr(scratch_module, "free_bytes", lambda folder: first + 1)
    with InTurn(path, 1 << 50, scratch=folder, parts=16) as it:  # the first estimate fits
        with pytest.raises(earlc.parts.ScratchError, match="free, and the analysis in parts "
                                                           "writes about"):
            it.pass1()
        assert it.progress.done_events[0] == it.pp.own_events[0]  # after the first part
    assert os.listdir(folder) == []


def test_a_scratch_folder_running_out_of_space_is_one_line_and_cleaned(large, tmp_path):
    """The disk fills while the analysis writes (here: a file size limit of 1 MB,
    which the system reports as a full disk would be)."""
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    r = earlc_cli("analyze", large, "--memory", "420M", "--scratch", tmp_path, preexec_fn=limit)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(tmp_path) in lines[0] and "ran out of space" in lines[0], r.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("sig,status,said", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_run_leaves_no_scratch_files(large, tmp_path, sig, status, said):
    p = subprocess.Popen([sys.executable, "-m", "earlc", "analyze", str(large), "--memory",
                          "420M", "--scratch", str(tmp_path), "-o", str(tmp_path / "r.txt")],
                         env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    # as soon as the first part's files are written in pass 1: the rest of pass 1 and pass 2
    # are still to come, so a loaded machine that is slow to send the signal cannot let the
    # run finish first (it did when the signal waited for the end of pass 1)
    while not any(f.startswith("earlc-parts-") and
                  any(g.endswith(".bin") for g in os.listdir(tmp_path / f))
                  for f in os.listdir(tmp_path)):
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.02)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == status, err
    assert err.strip().splitlines() == ["earlc: %s" % said]
    assert os.listdir(tmp_path) == []


def test_progress_names_the_pass_and_part_and_the_time_left(traces, tmp_path):
    calls = []
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=3,
                progress=lambda *a: calls.append(a)) as it:
        it.analyze()
    labels = [c[0] for c in calls]
    for p in (1, 2, 3):
        for pass_no in (1, 2):
            assert any(l.startswith("pass %d, part %d of 3" % (pass_no, p)) for l in labels)
    fractions = [d / t for _, d, t in calls]
    assert fractions == sorted(fractions) and fractions[-1] > 0.9

    class Bar:
        def __init__(self):
            self.notes = []

        def show(self, label, frac, note=""):
            self.notes.append(note)

    bar = Bar()
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=3, progress=bar) as it:
        it.analyze()
    assert any(n.startswith("about ") and n.endswith(" left") for n in bar.notes)


def test_an_open_bigger_than_memory_says_how_to_analyse_it(traces):
    path = traces["hybrid"]
    with pytest.raises(earlc.TraceTooLarge, match=r"take about .* to open, more than the "
                                                  r"1\.0 MB given: analyse it in parts"):
        earlc.open(path, memory="1M")
    assert len(earlc.open(path, memory="unlimited")) == len(earlc.open(path))
    r = earlc_cli("info", path, environ=env(EARLC_AVAILABLE_MEMORY="1M"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "earlc.parts.in_turn" in lines[0], r.stderr


def test_unlimited_analyses_in_one_piece_whatever_is_available(traces, monkeypatch):
    """--memory unlimited (memory="unlimited") opens the trace without looking
    at the available memory, on the command line as from Python."""
    path = traces["hybrid"]
    want = earlc.analyze(earlc.open(path)).to_json()
    r = earlc_cli("analyze", path, "--memory", "unlimited", "--format", "json",
                  environ=env(EARLC_AVAILABLE_MEMORY="1M"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == earlc_cli("analyze", path, "--format", "json").stdout
    monkeypatch.setenv("EARLC_AVAILABLE_MEMORY", "1M")
    # what this (test) process holds already counts as room: none here
    monkeypatch.setattr(earlc.parts.budget, "resident_now", lambda: 0)
    assert earlc.analyze(str(path), memory="unlimited").to_json() == want
    with pytest.raises(earlc.TraceTooLarge):
        earlc.open(path)


# -- the root causes in turn (--properties all) ----------------------------------------------

ALL_TRACES = list(PROGRAMS) + BUNDLED + PARTS_REAL


@pytest.mark.parametrize("k,name", list(enumerate(ALL_TRACES)))
def test_root_causes_in_turn_equal_the_analysis_in_one_piece(traces, tmp_path, k, name):
    """Every property, the root causes and the critical path with them, in 2, 3
    or 5 parts (in turn over the traces: each run of pass 2 costs a reading of
    every part): their collective steps go through the scratch folder, one more
    step each run of pass 2 (parts/steps.py), and the report is the one piece's
    (JSON, text, CUBE)."""
    if name not in traces:
        pytest.skip("%s is not in ../shared/traces" % name)
    path = traces[name]
    whole = earlc.analyze(earlc.open(path), properties="all")
    want_json = whole.to_json()
    parts = min(processes(path), (2, 3, 5)[k % 3])
    # the representatives with the delaying members (what the command line
    # takes), and on every other trace every member of each collective
    collectives = ("delayers", "all")[k % 2]
    with InTurn(path, 1 << 50, scratch=tmp_path, parts=parts, collectives=collectives) as it:
        got = it.analyze(properties="all")
        assert it.pp.parts == parts
        if parts > 1:
            assert it.steps_taken >= 10, name
    got_json = got.to_json()
    assert got_json == want_json, "%s in %d parts (collectives %s): %s" % (
        name, parts, collectives, first_difference(want_json, got_json))
    assert got.to_text() == whole.to_text(), name
    assert os.listdir(tmp_path) == [], "scratch files left behind"
    whole.to_cube(tmp_path / "want.cubex")
    got.to_cube(tmp_path / "got.cubex")
    assert (tmp_path / "got.cubex").read_bytes() == (tmp_path / "want.cubex").read_bytes()


def test_root_causes_need_the_delaying_members_of_a_collective(traces, tmp_path):
    with InTurn(traces["collectives"], 1 << 50, scratch=tmp_path, parts=2) as it:
        with pytest.raises(ValueError, match="collectives='delayers'"):
            it.analyze(properties="all")


def test_root_causes_with_the_delayers_hold_fewer_ghosts(tmp_path):
    """On a collective of every process, the root causes in turn get the
    representatives with each instance's delaying member (and every member in
    its part), not every member: fewer ghosts, the same report.  The ghosts'
    share is per instance, whatever the trace's length (0.68 at 10 iterations as at
    40; each run of pass 2 costs the 8 parts' fixed costs, not the events)."""
    path = earlc.synth("halo", tmp_path / "h", ranks=16, iterations=10, delay=300,
                       delay_rank=3, delay_every=5).path
    want = earlc.analyze(earlc.open(path), properties="all").to_json()
    ghosts = {}
    for collectives in ("all", "delayers"):
        with InTurn(path, 1 << 50, scratch=tmp_path, parts=8, collectives=collectives) as it:
            got = it.analyze(properties="all").to_json()
            ghosts[collectives] = int(it.pp.ghosts.sum())
        assert got == want, "%s: %s" % (collectives, first_difference(want, got))
    assert ghosts["delayers"] < 0.75 * ghosts["all"], ghosts


def test_a_root_cause_failing_on_one_part_in_turn(traces, tmp_path, monkeypatch):
    """The delay costs raise on part 1 only: every part switches them off (and
    what reads them), with part 1's message, as under MPI."""
    import earlc.properties.rootcause.delays as delays

    compute = delays._delay_costs

    def failing(ctx, parts):
        if parts is not None and parts.rank == 1:
            raise ValueError("the delays of part 1 failed")
        return compute(ctx, parts)
    monkeypatch.setattr(delays, "_delay_costs", failing)
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=3,
                representatives=False) as it:
        report = json.loads(it.analyze(properties="all").to_json())
    off = {d["property"]: d for d in report["warning_details"]
           if d["code"] == "property_switched_off"}
    assert "delay_latesender" in off and "delay_latesender_longterm" in off
    assert "the delays of part 1 failed" in off["delay_latesender"]["detail"]
    assert any(s["metric"] == "critical_path_trace" for s in report["severities"])
    assert os.listdir(tmp_path) == []


def test_runs_of_the_parts_that_do_not_line_up_end_the_analysis(traces, tmp_path, monkeypatch):
    """A part that sends other data at a step in a later run than in its first
    (a step of another kind, a result that is not deterministic) would be
    answered with data meant for another step: the analysis ends instead."""
    from earlc.parts import steps

    send = steps.StepExchange.alltoall_bytes

    def drifting(self, outgoing):
        if self.rank == 1 and self.step == 2 and self.steps.complete > 4:
            outgoing = [b + b"x" for b in outgoing]
        return send(self, outgoing)
    monkeypatch.setattr(steps.StepExchange, "alltoall_bytes", drifting)
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=3,
                representatives=False) as it:
        with pytest.raises(RuntimeError, match="part 1 sent other data at step 2"):
            it.analyze(properties="all")
    assert os.listdir(tmp_path) == []


def test_root_causes_in_turn_on_the_command_line_within_the_budget(tmp_path):
    """`--properties all` with a budget the analysis in one piece does not fit:
    in parts one after another (no longer refused), the same report, within
    the budget, nothing left in the scratch folder."""
    path = earlc.synth("halo", tmp_path / "h", ranks=16, events=600_000, delay=300,
                       delay_rank=3, delay_every=5).path
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    one = earlc_cli("analyze", path, "--properties", "all", "--format", "json")
    assert one.returncode == 0, one.stderr
    budget = 230 << 20
    need = needs_parts(path, budget, "all")
    assert need is not None and need.collectives == "delayers"
    r, peak = peak_of(["analyze", path, "--properties", "all", "--memory", "230M",
                       "--scratch", scratch, "--format", "json"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == one.stdout
    assert peak <= budget, "peaked at %.0f MB, above its %.0f MB budget" % (
        peak / 2 ** 20, budget / 2 ** 20)
    assert os.listdir(scratch) == []


def test_progress_counts_the_runs_of_pass_2(traces, tmp_path):
    calls = []
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=2, representatives=False,
                progress=lambda *a: calls.append(a)) as it:
        it.analyze(properties="all")
        runs = it.steps_taken + 1
    labels = [c[0] for c in calls]
    for pass_no in (1, 2, 3, runs + 1):
        assert any(l.startswith("pass %d, part 2 of 2" % pass_no) for l in labels), pass_no
    assert not any(l.startswith("pass %d," % (runs + 2)) for l in labels)
    fractions = [d / t for _, d, t in calls]
    assert fractions == sorted(fractions) and fractions[-1] > 0.9
