"""The analysis of a trace in parts over MPI (earlc.parts, docs/parallel.md):
`mpiexec -n P` with P = 1 to 4 on 2 cores gives, value for value, the report of
the single-process analysis (JSON, text and CUBE), with and without the root
causes (`--properties all`), on every generated program shape, the bundled
traces and the real traces; so does one part holding the whole trace (without
MPI); every process ends with the same one-line verdict on bad input; and
without a usable MPI binding earlc says so in one line.  The tests that start
MPI processes skip where mpiexec or mpi4py are missing."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import earlc
import earlc.parts
from earlc.synth import synth
from conftest import needs_mpi, trace_folders

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("parts_driver.py")



# program shapes with what makes each interesting for parts: messages across
# parts in both directions, wrong order, sub-communicators, threads and locks
PROGRAMS = {
    "ping-pong": dict(ranks=2, iterations=20, wrong_order=True),
    "ping-pong-any": dict(ranks=4, iterations=12, any_source=True),
    "ring": dict(ranks=5, iterations=10, eager_limit=0, delay=300, delay_rank=2),
    "halo": dict(ranks=6, iterations=8, delay=3000, delay_rank=2, delay_every=3),
    "master-worker": dict(ranks=5, iterations=12),
    "collectives": dict(ranks=5, iterations=6, split=2, delay=300, delay_rank=3),
    "omp": dict(threads=4, iterations=6, lock_rounds=3),
    "hybrid": dict(ranks=3, threads=3, iterations=5, delay=300, delay_rank=1),
}
BUNDLED = ["demo-ring", "ring-late-sender", "pingpong-wrong-order", "collectives", "omp-locks",
           "hybrid"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + e["PYTHONPATH"]
                                              if e.get("PYTHONPATH") else "")
    return e


def mpiexec(n, *args, timeout=300, environ=None):
    return subprocess.run(["mpiexec", "-n", str(n), *map(str, args)], capture_output=True,
                          text=True, env=environ or env(), timeout=timeout)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """name -> archive folder: generated programs, bundled and real traces."""
    return trace_folders(tmp_path_factory.mktemp("parts"), PROGRAMS, BUNDLED)


def locations(path) -> int:
    return len(earlc.open(path).locations)


#: the reports each trace is analysed for: the default catalog, and with the
#: root causes and the critical path
PROPERTIES = {"": None, "-all": "all"}


@pytest.fixture(scope="module")
def single(traces, tmp_path_factory):
    """The single-process reports per NAME and NAME-all (JSON text, the text
    report, the CUBE file's bytes)."""
    out = {}
    cubes = tmp_path_factory.mktemp("cubes")
    for name, path in traces.items():
        trace = earlc.open(path)
        for suffix, props in PROPERTIES.items():
            r = earlc.analyze(trace, properties=props)
            r.to_cube(cubes / (name + suffix + ".cubex"))
            out[name + suffix] = (r.to_json(), r.to_text(),
                                  (cubes / (name + suffix + ".cubex")).read_bytes())
    return out


def _differences(want: str, got: str) -> str:
    """Which parts of two JSON reports differ, and in which metrics."""
    a, b = json.loads(want), json.loads(got)
    keys = [k for k in a if a[k] != b.get(k)]
    metrics = sorted({s["metric"] for s in a.get("severities", [])} ^
                     {s["metric"] for s in b.get("severities", [])} |
                     {m["name"] for m, n in zip(a.get("metrics", []), b.get("metrics", []))
                      if m != n})
    return "%s%s" % (keys, " (metrics %s)" % metrics if metrics else "")


@needs_mpi
@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_reports_equal_the_single_process_analysis(processes, traces, single, tmp_path):
    """One mpiexec per number of processes analyses every trace twice: with the
    default catalog and with --properties all (the root causes exchange costs
    between the parts: properties/rootcause/parts.py)."""
    names = [n for n, p in traces.items() if locations(p) >= processes]
    entries = ["%s%s=%s%s" % (n, suffix, traces[n], ":" + props if props else "")
               for n in names for suffix, props in PROPERTIES.items()]
    r = mpiexec(processes, sys.executable, DRIVER, tmp_path, *entries, timeout=900)
    assert r.returncode == 0, r.stderr
    for name in [n + suffix for n in names for suffix in PROPERTIES]:
        got = (tmp_path / (name + ".json")).read_text()
        want, text, cube = single[name]
        if got != want:  # say where
            pytest.fail("%s in %d parts: the report differs in %s"
                        % (name, processes, _differences(want, got)))
        assert (tmp_path / (name + ".txt")).read_text() == text, name
        assert (tmp_path / (name + ".cubex")).read_bytes() == cube, name


def test_one_part_equals_the_whole_trace(traces, single, tmp_path):
    """earlc.open(path, parts="mpi") without mpiexec: one part holding the whole
    trace, analysed with every step of the analysis in parts (the root causes'
    exchanges with itself), gives the single-process report."""
    for name, path in traces.items():
        trace = earlc.open(path, parts="mpi")
        for suffix, props in PROPERTIES.items():
            got = earlc.analyze(trace, properties=props).to_json()
            want = single[name + suffix][0]
            assert got == want, "%s%s in one part: %s" % (name, suffix,
                                                         _differences(want, got))


@needs_mpi
def test_the_merged_replay_equals_the_replay_in_parts(traces, single, tmp_path):
    """The long-term replay's other way (the parts' inputs merged on part 0, as a
    trace against the clock condition needs; properties/rootcause/replay_parts.py)
    gives the same reports."""
    names = [n for n in ("halo", "collectives", "hybrid", "generated-3r-longterm",
                         "casita-jacobi-hybrid", "sstmacro-mpi-coverage") if n in traces]
    r = mpiexec(3, sys.executable, DRIVER, tmp_path, "--merged",
                *["%s-all=%s:all" % (n, traces[n]) for n in names])
    assert r.returncode == 0, r.stderr
    for name in names:
        got, want = (tmp_path / (name + "-all.json")).read_text(), single[name + "-all"][0]
        assert got == want, "%s: %s" % (name, _differences(want, got))


def _root_cause_values(report: dict) -> dict:
    """The root causes' severities of a JSON report, by metric."""
    names = {m["name"] for m in report["metrics"] if m["name"].startswith(("delay_",
             "critical_")) or m["name"].endswith(("_indirect", "_propagating"))}
    out = {}
    for s in report["severities"]:
        if s["metric"] in names:
            out.setdefault(s["metric"], []).append((s["callpath"], s["location"], s["value"]))
    return out


@needs_mpi
def test_wait_states_in_a_circle(tmp_path):
    """Messages received before they were sent (a violated clock condition): the
    replay on one process takes a wait state out of order; the parts see it
    coming and replay together on part 0, with the same costs and warning."""
    path = tmp_path / "circle"
    with earlc.TraceWriter(path, ranks=2) as w:
        for rank in (0, 1):
            w.enter(rank, 0, "main")
            w.enter(rank, 10, "MPI_Recv"); w.recv(rank, 30, source=1 - rank, tag=1, bytes=8)
            w.leave(rank, 31, "MPI_Recv")
            w.enter(rank, 40, "MPI_Send"); w.send(rank, 41, dest=1 - rank, tag=1, bytes=8)
            w.leave(rank, 42, "MPI_Send")
            w.leave(rank, 50, "main")
    want = json.loads(earlc.analyze(earlc.open(path), properties="all").to_json())
    r = mpiexec(2, sys.executable, DRIVER, tmp_path, "circle=%s:all" % path)
    assert r.returncode == 0, r.stderr
    got = json.loads((tmp_path / "circle.json").read_text())
    assert got["warnings"]["rootcause_cycle"] == want["warnings"]["rootcause_cycle"] == 1
    assert _root_cause_values(got) == _root_cause_values(want)


@needs_mpi
def test_a_root_cause_failing_on_one_part(traces, tmp_path):
    """The delay costs raise on part 1 only: every part switches them off (and
    what reads them), with part 1's message, and none waits for another."""
    path = traces["halo"]
    r = mpiexec(3, sys.executable, DRIVER, tmp_path, "--fail-rootcause-on=1",
                "halo=%s:all" % path, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "halo.json").read_text())
    off = {d["property"]: d for d in report["warning_details"]
           if d["code"] == "property_switched_off"}
    assert "delay_latesender" in off and "delay_latesender_longterm" in off
    assert "the delays of part 1 failed" in off["delay_latesender"]["detail"]
    # the critical path, computed apart, is there
    assert any(s["metric"] == "critical_path_trace" for s in report["severities"])


@needs_mpi
def test_the_command_line_writes_once(traces, tmp_path):
    path = traces["hybrid"]
    one, out = tmp_path / "1.json", tmp_path / "3.json"
    r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(path), "--format", "json",
                        "-o", str(one)], env=env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = mpiexec(3, sys.executable, "-m", "earlc", "analyze", path, "--format", "json", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == one.read_text()
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", path)
    assert r.returncode == 0 and r.stdout.count("earlc analysis of") == 1
    cube1, cube2 = tmp_path / "1.cubex", tmp_path / "2.cubex"
    earlc.analyze(earlc.open(path)).to_cube(cube1)
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", path, "--format", "cube", "-o",
                cube2)
    assert r.returncode == 0, r.stderr
    assert cube1.read_bytes() == cube2.read_bytes()


@needs_mpi
def test_the_command_line_with_the_root_causes(traces, tmp_path):
    """`mpiexec -n 3 earlc analyze --properties all` writes the single-process
    report (JSON and text)."""
    path = traces["hybrid"]
    for fmt in ("json", "text"):
        one, three = tmp_path / ("1." + fmt), tmp_path / ("3." + fmt)
        r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(path), "--properties",
                            "all", "--format", fmt, "-o", str(one)], env=env(),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = mpiexec(3, sys.executable, "-m", "earlc", "analyze", path, "--properties", "all",
                    "--format", fmt, "-o", three)
        assert r.returncode == 0, r.stderr
        assert three.read_text() == one.read_text(), fmt
    report = json.loads((tmp_path / "1.json").read_text())
    assert {"delay_latesender", "critical_path"} <= {m["name"] for m in report["metrics"]}


@needs_mpi
def test_more_processes_than_locations_is_refused(traces):
    path = traces["ping-pong"]
    r = mpiexec(3, sys.executable, "-m", "earlc", "analyze", path)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "earlc: error: 3 parts for a trace of 2 locations: at most one part per location"]


@needs_mpi
def test_a_damaged_archive_ends_every_process(traces, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(traces["ring"], bad)
    files = sorted((bad / "traces").glob("*.evt"))
    with open(files[-1], "r+b") as f:  # the last rank's: one process reads it
        f.truncate(f.seek(0, 2) - 20)
    r = mpiexec(3, sys.executable, "-m", "earlc", "analyze", bad, timeout=120)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "truncated" in lines[0] and str(files[-1]) in lines[0]
    files[-1].unlink()
    r = mpiexec(3, sys.executable, "-m", "earlc", "analyze", bad, timeout=120)
    assert r.returncode == 2
    assert "is missing" in r.stderr and r.stderr.count("\n") == 1


#: one part fails while it adds the ghosts of the second round (its second
#: buffer received); the others must not wait for it in the rounds left
FAILING_ROUND = r"""
import sys
import earlc
import earlc.parts.part as pp
from earlc.parts import mpi_exchange
ex = mpi_exchange()
seen = []
positions = pp._ghost_positions
def failing(table, out):
    seen.append(len(table))
    if ex.rank == 1 and len(seen) == 2:
        raise ValueError("part 1 failed at its second buffer of ghosts")
    positions(table, out)
pp._ghost_positions = failing
try:
    earlc.open(sys.argv[1], parts="mpi", collectives=sys.argv[2])
except Exception as exc:  # part 1's own error, the others' PartsFailed with its words
    print("rank %d: %s" % (ex.rank, exc))
"""


@needs_mpi
@pytest.mark.parametrize("collectives", ["all", "representatives"])
def test_a_part_failing_in_the_rounds_ends_every_part(collectives, tmp_path):
    """Each round's ghosts are added as they arrive (part._ghosts_in_rounds):
    a part that fails adding them still takes part in the rounds left, and
    every part ends with its error, none waits for it."""
    path = synth("halo", tmp_path / "h", ranks=4, iterations=3).path
    script = tmp_path / "failing.py"
    script.write_text(FAILING_ROUND)
    r = mpiexec(4, sys.executable, script, path, collectives, timeout=120)
    assert r.returncode == 0, r.stderr
    # mpiexec forwards the processes' output in pieces that may interleave
    # within a line: take the messages out of the text, not its lines
    lines = sorted(re.findall(r"rank \d+: [^\n]*?ghosts", r.stdout))
    assert lines == ["rank %d: part 1 failed at its second buffer of ghosts" % k
                     for k in range(4)], r.stdout


@needs_mpi
def test_without_an_mpi_binding_one_line(traces, tmp_path):
    fake = tmp_path / "fake" / "mpi4py"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('libmpi.so.12: cannot open')\n")
    e = env()
    e["PYTHONPATH"] = str(tmp_path / "fake") + os.pathsep + e["PYTHONPATH"]
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", traces["ring"], environ=e)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "mpi4py" in lines[0] and "pip install" in lines[0]


WHOLE_TRACE_PLUGIN = '''
import numpy as np
from earlc.analysis import Instances, Property

class LastEvents(Property):
    name, title, parent = "last_events", "Last events", "time"
    description = "reads the trace's events directly"

    def detect(self, ctx, subscribed):
        ev = ctx.trace.events          # the whole trace? not under parts
        last = np.array([len(ev) - 1])
        return Instances(last, np.ones(1, np.int64))
'''


@needs_mpi
def test_documented_plugins_run_in_parts_unchanged(traces, tmp_path):
    """The worked examples of docs/plugins.md (they use the documented context)
    give under mpiexec what they give in one process."""
    from test_plugin_docs import examples

    plugins = []
    for name, source in examples().items():
        (tmp_path / name).write_text(source)
        plugins += ["--plugin", tmp_path / name]
    path = traces["ring"]
    one = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(path), "--format", "json",
                          *map(str, plugins)], capture_output=True, text=True, env=env())
    assert one.returncode == 0, one.stderr
    parts = mpiexec(3, sys.executable, "-m", "earlc", "analyze", path, "--format", "json",
                    *plugins)
    assert parts.returncode == 0, parts.stderr
    assert json.loads(parts.stdout) == json.loads(one.stdout)
    assert not json.loads(one.stdout)["switched_off"]


@needs_mpi
def test_a_plugin_reading_the_whole_trace_is_told_what_to_use(traces, tmp_path):
    plugin = tmp_path / "last_events.py"
    plugin.write_text(WHOLE_TRACE_PLUGIN)
    path = traces["ring"]
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", path, "--plugin", plugin,
                "--strict")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "ctx.trace.events" in lines[0] and "ctx.events" in lines[0]
    assert "2 parts" in lines[0]
    # without --strict the property is switched off, with the same words
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", path, "--plugin", plugin,
                "--format", "json")
    assert r.returncode == 0, r.stderr
    off = json.loads(r.stdout)["warning_details"]
    assert any(d["code"] == "property_switched_off" and "ctx.events" in d["detail"] for d in off)
    # in one process the trace is whole: the plugin reads it
    r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(path), "--plugin",
                        str(plugin), "--strict"], capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr


@needs_mpi
def test_commands_of_one_process_refuse_an_mpi_job(tmp_path):
    """A command an MPI job does not divide (pictures, exports, checks) is refused in
    one line under mpiexec -n 2, instead of P copies each writing the same file (the
    HTML report runs in parts: test_parts_page.py)."""
    picture = tmp_path / "r.png"
    r = mpiexec(2, sys.executable, "-m", "earlc", "plot", "report", ROOT / "traces" / "hybrid",
                "-o", picture)
    assert r.returncode == 2 and not picture.exists()
    assert r.stderr.count("\n") == 1 and "earlc plot runs in one process" in r.stderr
    r = mpiexec(1, sys.executable, "-m", "earlc", "info", ROOT / "traces" / "hybrid")
    assert r.returncode == 0, r.stderr


#: run under mpiexec by the tests below: each part's ghost collective ends and
#: collective instances, with the collectives as given, then the report (of
#: the properties given, default the default catalog)
GHOST_COUNT = r"""
import sys
import numpy as np
import earlc
import earlc.parts
from earlc.events import KINDS
from earlc.parts import mpi_exchange
path, collectives = sys.argv[1], sys.argv[2]
properties = sys.argv[3] if len(sys.argv) > 3 else None
trace = earlc.open(path, parts="mpi", collectives=collectives)
ev, part = trace.events, trace.part
ghost = ~part.own[ev.location]
ends = int(np.count_nonzero(ghost & (ev.kind == KINDS["MPI_COLLECTIVE_END"])))
instances = len(trace.states.coll_member_start) - 1
text = earlc.analyze(trace, properties=properties).to_json()
every = mpi_exchange().allgather((ends, instances, int(ghost.sum()), len(ev)))
if part.index == 0:
    print(every)
    sys.stdout.write(text)
"""


@needs_mpi
@pytest.mark.parametrize("processes", [2, 4])
def test_collectives_travel_as_representatives(processes, tmp_path):
    """With the default catalog a part gets, of each collective instance, at
    most the few members of other parts the wait states read (earl_part.h:
    first, completing, latest begins, earliest end, root, first of another
    part), not every member, and the report is the single process's.  A
    16-rank communicator in 2 or 4 parts has 8 or 12 members in other parts:
    with every member the bound fails."""
    from earlc.parts.inturn import REPRESENTATIVES

    halo = synth("halo", tmp_path / "h", ranks=16, iterations=10, delay=2000, delay_rank=5,
                 delay_every=3).path
    colls = synth("collectives", tmp_path / "c", ranks=16, iterations=6, split=2, delay=500,
                  delay_rank=5, imbalance=80).path
    for path, bounded in ((halo, True), (colls, False)):  # scans may send more members
        want = earlc.analyze(earlc.open(path)).to_json()
        script = tmp_path / "count.py"
        script.write_text(GHOST_COUNT)
        for collectives in ("representatives", "all"):
            r = mpiexec(processes, sys.executable, script, path, collectives)
            assert r.returncode == 0, r.stderr
            counts, got = r.stdout.split("\n", 1)
            assert got == want, "%s, %s: %s" % (path, collectives, _differences(want, got))
            counts = eval(counts)
            over = [(ends, REPRESENTATIVES * instances) for ends, instances, _, _ in counts
                    if ends > REPRESENTATIVES * instances]
            if collectives == "representatives" and bounded:
                assert not over, over
                assert all(i > 0 for _, i, _, _ in counts)
            elif collectives == "all" and bounded:
                assert over  # the bound can fail: every member is more


@needs_mpi
def test_collectives_travel_as_representatives_with_the_root_causes(tmp_path):
    """With the root causes (--properties all) the collectives travel as
    representatives too (collectives="delayers", earl_part_represent): each
    part gets the default catalog's representatives and the member that
    delays the others, and only the delayer's part gets every member; the
    reports are the single process's, and equal begins (a program without
    imbalance) are ordered by rank as there.  In 4 parts of a 16-rank
    communicator each instance then brings at most 12 + 3 x (REPRESENTATIVES
    + 2) ghost members in all, against 4 x 12 with every member."""
    from earlc.parts.inturn import REPRESENTATIVES

    assert earlc.parts.collectives_for("all") == "delayers"
    halo = synth("halo", tmp_path / "h", ranks=16, iterations=10, delay=2000, delay_rank=5,
                 delay_every=3).path
    colls = synth("collectives", tmp_path / "c", ranks=16, iterations=4, split=2, delay=500,
                  delay_rank=5, imbalance=80).path
    even = synth("collectives", tmp_path / "e", ranks=8, iterations=3, split=2).path
    script = tmp_path / "count.py"
    script.write_text(GHOST_COUNT)
    for path, bounded in ((halo, True), (colls, False), (even, False)):
        want = earlc.analyze(earlc.open(path), properties="all").to_json()
        ends = {}
        for collectives in ("delayers", "all"):
            r = mpiexec(4, sys.executable, script, path, collectives, "all")
            assert r.returncode == 0, r.stderr
            counts, got = r.stdout.split("\n", 1)
            assert got == want, "%s, %s: %s" % (path, collectives, _differences(want, got))
            counts = eval(counts)
            ends[collectives] = (sum(e for e, _, _, _ in counts),
                                 max(i for _, i, _, _ in counts))
        if bounded:
            total, instances = ends["delayers"]
            assert total <= (12 + 3 * (REPRESENTATIVES + 2)) * instances, ends
            total, instances = ends["all"]
            assert total > (12 + 3 * (REPRESENTATIVES + 2)) * instances  # the bound can fail


def test_a_part_of_representatives_refuses_what_needs_every_member(traces):
    """A part opened with the collectives as representatives analyses the
    default catalog as the whole trace does, and refuses the root causes (they
    read each instance's delayer) in one line naming the option to change, on
    every process alike; one opened for the root causes refuses a plugin so."""
    path = traces["collectives"]
    assert earlc.parts.collectives_for(None) == "representatives"
    assert earlc.parts.collectives_for("all") == "delayers"
    trace = earlc.open(path, parts="mpi", collectives="representatives")
    assert trace.part.collectives == "representatives"
    assert earlc.analyze(trace).to_json() == earlc.analyze(earlc.open(path)).to_json()
    with pytest.raises(ValueError, match="open it with collectives='delayers'"):
        earlc.analyze(trace, properties="all")
    # opened for the root causes: they are the single process's, a plugin is refused
    from test_plugins import LateSenderPaper

    trace = earlc.open(path, parts="mpi", collectives="delayers")
    assert earlc.analyze(trace, properties="all").to_json() == \
        earlc.analyze(earlc.open(path), properties="all").to_json()
    with pytest.raises(ValueError, match="open it with collectives='all'"):
        earlc.analyze(trace, plugins=[LateSenderPaper()], packages=False)
    with pytest.raises(ValueError, match="collectives must be"):
        earlc.open(path, parts="mpi", collectives="some")


def test_merged_ghosts_keep_the_representatives_record():
    """merge_ghosts and by_location (both drivers merge so): sorted by
    (location, position), each event once, the representative's record kept
    where a message's ghost is the same event (it carries the member count)."""
    from earlc.parts.part import GHOST_RECORD, by_location, merge_ghosts

    def records(*rows):
        out = np.zeros(len(rows), dtype=GHOST_RECORD)
        for k, (loc, pos, members) in enumerate(rows):
            out[k]["location"], out[k]["position"], out[k]["members"] = loc, pos, members
        return out

    ghosts = records((1, 2, 0), (1, 5, 0), (3, 1, 0))
    reps = records((1, 5, 4), (1, 7, 1), (2, 0, 1))
    got = merge_ghosts([reps[:2]], ghosts[:2])
    assert got["position"].tolist() == [2, 5, 7] and got["members"].tolist() == [0, 4, 1]
    chunks = list(by_location(iter([ghosts.tobytes()]), reps))
    assert [c["location"].tolist() for c in chunks] == [[1, 1, 1], [3], [2]]
    assert chunks[0]["members"].tolist() == [0, 4, 1]
