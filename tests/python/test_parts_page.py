"""The HTML page of an analysis in parts over MPI (earlc.parts.page,
docs/parallel.md): `mpiexec -n P` with P = 1 to 4 writes, byte for byte, the page
of the single-process analysis (timeline data, ranking, pictures) on generated
program shapes, a bundled trace, a run that was stopped and a real trace with
counters, with the page's budgets as they are and cut so far that small traces
take the branches of big ones; the command line writes it once, from rank 0;
and it opens in a browser.  Skips where mpiexec or mpi4py are missing."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import earlc
from earlc.synth import synth
from conftest import SHARED_TRACES, needs_mpi, stopped_run

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("parts_page_driver.py")
sys.path.insert(0, str(Path(__file__).parent))
import parts_page_driver  # noqa: E402



PROGRAMS = {
    "ping-pong": dict(ranks=2, iterations=20, wrong_order=True),
    "ring": dict(ranks=5, iterations=10, eager_limit=0, delay=300, delay_rank=2),
    "halo": dict(ranks=6, iterations=8, delay=3000, delay_rank=2, delay_every=3),
    "master-worker": dict(ranks=5, iterations=12, any_source=True),
    "collectives": dict(ranks=5, iterations=6, split=2, delay=300, delay_rank=3),
    "omp": dict(threads=4, iterations=6, lock_rounds=3),
    "hybrid": dict(ranks=3, threads=3, iterations=5, delay=300, delay_rank=1),
}
#: those whose pages are also compared with the budgets of big traces
SMALL = ["halo", "hybrid", "omp", "master-worker", "stopped"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + e["PYTHONPATH"]
                                              if e.get("PYTHONPATH") else "")
    return e


def mpiexec(n, *args, timeout=600):
    return subprocess.run(["mpiexec", "-n", str(n), *map(str, args)], capture_output=True,
                          text=True, env=env(), timeout=timeout)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    out = {}
    gen = tmp_path_factory.mktemp("page-traces")
    for name, options in PROGRAMS.items():
        synth(name, gen / name, **options)
        out[name] = gen / name
    out["bundled-hybrid"] = ROOT / "traces" / "hybrid"
    stopped_run(gen / "stopped")
    out["stopped"] = gen / "stopped"
    papi = SHARED_TRACES / "pipit-ping-pong-papi"
    if (papi / "traces.otf2").exists():  # counters: the page's series
        out["papi"] = papi
    return out


@pytest.fixture(scope="module")
def single(traces, tmp_path_factory):
    """The single-process pages per NAME, and per NAME-small with the budgets of
    big traces."""
    out = {}
    folder = tmp_path_factory.mktemp("pages")
    for name, path in traces.items():
        report = earlc.analyze(earlc.open(path), top=5)
        out[name] = report.to_html(folder / (name + ".html"))
    saved = {k: getattr(parts_page_driver.timeline_page, k) for k in (
        "EXACT_ALL", "WINDOW_EVENTS", "MESSAGES_ALL", "WAITS_ALL", "WAIT_BUDGET", "LEVEL_BUDGET")}
    parts_page_driver.small_budgets()
    try:
        for name in SMALL:
            report = earlc.analyze(earlc.open(traces[name]), top=5)
            out[name + "-small"] = report.to_html(folder / (name + "-small.html"))
    finally:
        for k, v in saved.items():
            setattr(parts_page_driver.timeline_page, k, v)
    return {k: Path(v).read_bytes() for k, v in out.items()}


def locations(path) -> int:
    return len(earlc.open(path).locations)


@needs_mpi
@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_the_page_from_parts_is_the_single_process_page(processes, traces, single, tmp_path):
    """Every trace with at least P locations: the page written from P parts is the
    single-process page, byte for byte; with the budgets of big traces too."""
    names = [n for n, p in traces.items() if locations(p) >= processes]
    for small in (False, True):
        chosen = [n for n in names if not small or n in SMALL]
        out = tmp_path / ("small" if small else "plain")
        out.mkdir()
        entries = ["%s=%s" % (n, traces[n]) for n in chosen]
        r = mpiexec(processes, sys.executable, DRIVER, out, *(["--small"] if small else []),
                    *entries)
        assert r.returncode == 0, r.stderr[-3000:]
        for name in chosen:
            got = (out / (name + ".html")).read_bytes()
            want = single[name + ("-small" if small else "")]
            assert got == want, "%s (%d parts%s): the page differs" % (
                name, processes, ", small budgets" if small else "")


@needs_mpi
def test_the_command_line_writes_the_page_once(traces, tmp_path):
    """`mpiexec -n 3 earlc report` and `earlc analyze --format html` write, from rank 0
    only, the page `earlc report` writes in one process; a search's matches under
    mpiexec are refused in one line."""
    path = traces["halo"]
    one = tmp_path / "one.html"
    r = subprocess.run([sys.executable, "-m", "earlc", "report", path, "-o", one],
                       capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    page = tmp_path / "parts.html"
    r = mpiexec(3, sys.executable, "-m", "earlc", "report", path, "-o", page)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("earlc report ->") == 1
    assert page.read_bytes() == one.read_bytes()
    page2 = tmp_path / "analyze.html"
    r = mpiexec(2, sys.executable, "-m", "earlc", "analyze", path, "--format", "html", "-o",
                page2)
    assert r.returncode == 0, r.stderr
    assert page2.read_bytes() == one.read_bytes()
    r = mpiexec(2, sys.executable, "-m", "earlc", "report", path, "-o", tmp_path / "m.html",
                "--pattern", "x")
    assert r.returncode == 2 and "--pattern runs in one process" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "m.html").exists()


@needs_mpi
def test_the_page_from_parts_in_a_browser(traces, tmp_path):
    """The page written by 3 parts opens in Chromium: its timeline draws, and its
    metric tree unfolds."""
    from test_html_report import browser, opened, painted_pixels

    path = traces["hybrid"]
    page = tmp_path / "parts.html"
    r = mpiexec(3, sys.executable, "-m", "earlc", "report", path, "-o", page)
    assert r.returncode == 0, r.stderr
    driver = browser()
    try:
        opened(driver, page)
        assert painted_pixels(driver) > 1000
        driver.execute_script("earlcFold(true)")
        assert driver.execute_script(
            "return [...document.querySelectorAll('.tree details')].every(d => d.open)")
        driver.save_screenshot(str(tmp_path / "parts.png"))
    finally:
        driver.quit()
