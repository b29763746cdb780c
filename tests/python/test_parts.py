"""The analysis of a trace in parts over MPI (earlc.parts, docs/parallel.md):
`mpiexec -n P` with P = 1 to 4 on 2 cores gives, value for value, the report of
the single-process analysis (JSON and text), on every generated program shape,
the bundled traces and the real traces; every process ends with the same
one-line verdict on bad input; and without a usable MPI binding earlc says so in
one line.  The tests skip where mpiexec or mpi4py are missing."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc.synth import synth
from conftest import REFERENCE_NAMES, SHARED_TRACES

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("parts_driver.py")


def _have_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


needs_mpi = pytest.mark.skipif(not shutil.which("mpiexec") or not _have_mpi4py(),
                               reason="mpiexec (Debian mpich) and mpi4py are needed")

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
    out = {}
    gen = tmp_path_factory.mktemp("parts")
    for name, options in PROGRAMS.items():
        kind = name.split("-any")[0]
        synth(kind, gen / name, **options)
        out[name] = gen / name
    for name in BUNDLED:
        out[name] = ROOT / "traces" / name
    for name in REFERENCE_NAMES + ["generated-3r-longterm", "generated-4r-longterm"]:
        path = SHARED_TRACES / name
        if (path / "traces.otf2").exists():
            out[name] = path
    return out


def locations(path) -> int:
    return len(earlc.open(path).locations)


@pytest.fixture(scope="module")
def single(traces):
    """The single-process reports (JSON text and the text report)."""
    out = {}
    for name, path in traces.items():
        r = earlc.analyze(earlc.open(path))
        out[name] = (r.to_json(), r.to_text())
    return out


@needs_mpi
@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_reports_equal_the_single_process_analysis(processes, traces, single, tmp_path):
    names = [n for n, p in traces.items() if locations(p) >= processes]
    r = mpiexec(processes, sys.executable, DRIVER, tmp_path,
                *["%s=%s" % (n, traces[n]) for n in names])
    assert r.returncode == 0, r.stderr
    for name in names:
        got = (tmp_path / (name + ".json")).read_text()
        want = single[name][0]
        if got != want:  # say where
            a, b = json.loads(want), json.loads(got)
            diff = [k for k in a if a[k] != b.get(k)]
            pytest.fail("%s in %d parts: the report differs in %s" % (name, processes, diff))
        assert (tmp_path / (name + ".txt")).read_text() == single[name][1], name


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
