"""The HTML page of a trace analysed in parts one after another
(earlc.parts.page_inturn, docs/memory.md): byte for byte the page of the analysis in
one piece, on generated program shapes (halo, collectives, hybrid, omp, ping-pong in
the wrong order), a bundled trace, a run that was stopped and the real trace with
PAPI counters, in 2 and 3 parts and one part per process, with the page's budgets as
they are and cut so far that small traces take the branches of big ones; from Python
(InTurn, and earlc.analyze(path, memory=) whose analysis has ended); on the command
line within the budget, with the scratch folder emptied; what is not supported in
turn refused in one line; and the page opens in a browser."""
import os
import re
import sys
from pathlib import Path

import pytest

import earlc
import earlc.parts
from earlc.parts import page_inturn
from earlc.parts.inturn import InTurn, needs_parts
from earlc.parts.plan import process_of_locations
from conftest import SHARED_TRACES, stopped_run

sys.path.insert(0, str(Path(__file__).parent))
import parts_page_driver  # noqa: E402
from test_inturn import earlc_cli, peak_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

PROGRAMS = {
    "ping-pong": dict(ranks=2, iterations=20, wrong_order=True),
    "halo": dict(ranks=6, iterations=8, delay=3000, delay_rank=2, delay_every=3),
    "collectives": dict(ranks=5, iterations=6, split=2, delay=300, delay_rank=3),
    "omp": dict(threads=4, iterations=6, lock_rounds=3),
    "hybrid": dict(ranks=3, threads=3, iterations=5, delay=300, delay_rank=1),
}
#: those whose pages are also compared with the budgets of big traces
SMALL = ["halo", "hybrid", "stopped"]


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    out = {}
    gen = tmp_path_factory.mktemp("page-inturn")
    for name, options in PROGRAMS.items():
        earlc.synth(name, gen / name, **options)
        out[name] = gen / name
    out["bundled-hybrid"] = ROOT / "traces" / "hybrid"
    stopped_run(gen / "stopped")
    out["stopped"] = gen / "stopped"
    papi = SHARED_TRACES / "pipit-ping-pong-papi"
    if (papi / "traces.otf2").exists():  # counters: the page's series
        out["papi"] = papi
    return out


def processes(path) -> int:
    defs = earlc._core.Reading(str(path)).definitions()
    return len(set(process_of_locations(defs).tolist()))


def page_in_one_piece(path) -> str:
    return earlc.analyze(earlc.open(path), top=5).to_html()


def page_in_turn(path, parts, scratch) -> str:
    with InTurn(path, 1 << 50, scratch=scratch, parts=parts) as it:
        page = it.analyze(top=5).to_html()
        assert it.pp.parts == parts
    return page


def test_the_page_in_turn_is_the_page_in_one_piece(traces, tmp_path):
    """2 and 3 parts and one part per process (one part for a single process):
    the same page, byte for byte; nothing left in the scratch folder."""
    checked = 0
    for name, path in traces.items():
        want = page_in_one_piece(path)
        n = processes(path)
        for parts in sorted({min(n, 2), min(n, 3), n}):
            got = page_in_turn(path, parts, tmp_path)
            assert got == want, "%s in %d parts: the page differs" % (name, parts)
            assert os.listdir(tmp_path) == [], "scratch files left behind"
            checked += 1
    assert checked >= 12


def test_the_page_in_turn_with_the_budgets_of_big_traces(traces, tmp_path, monkeypatch):
    """Exact instances in windows around the listed occurrences (the times at
    whole-trace ids, from the spilled timestamps), bundled messages, chosen wait
    states and fewer levels: the same page as in one piece."""
    for name, value in (("EXACT_ALL", 50), ("WINDOW_EVENTS", 40), ("MESSAGES_ALL", 10),
                        ("WAITS_ALL", 5), ("WAIT_BUDGET", 3), ("LEVEL_BUDGET", 20000)):
        monkeypatch.setattr(parts_page_driver.timeline_page, name, value)
    for name in SMALL:
        path = traces[name]
        want = page_in_one_piece(path)
        if name != "stopped":  # a few events: no window of exact instances
            assert re.search(r'"all": ?false', want), name  # the branches of a big trace
        got = page_in_turn(path, min(processes(path), 3), tmp_path)
        assert got == want, "%s: the page differs with the budgets of big traces" % name


def test_the_page_after_the_analysis_in_turn_has_ended(traces, tmp_path):
    """earlc.analyze(path, memory=) ends its analysis in turn (its scratch folder
    removed), in parts planned without room for the page: report.to_html reads
    the trace in parts again, planned with that room, and removes its scratch
    folder."""
    path = traces["hybrid"]
    budget = 177 << 20
    assert needs_parts(path, budget) is not None  # in parts at this budget
    report = earlc.analyze(path, memory=budget, scratch=tmp_path, top=5)
    assert report.part.partition.parts > 1 and os.listdir(tmp_path) == []
    page = tmp_path / "r.html"
    assert report.to_html(page) == str(page)
    assert page.read_text() == page_in_one_piece(path)
    assert os.listdir(tmp_path) == ["r.html"]


def test_the_root_causes_page_in_turn(traces, tmp_path):
    """With the root causes, whose steps come before the page's (the
    collectives as the command line sends them for the root causes, and every
    member)."""
    path = traces["halo"]
    want = earlc.analyze(earlc.open(path), properties="all", top=5).to_html()
    for collectives in ("delayers", "all"):
        with InTurn(path, 1 << 50, scratch=tmp_path, parts=2, collectives=collectives) as it:
            got = it.analyze(properties="all", top=5).to_html()
        assert got == want, collectives


def test_a_page_bigger_than_the_budget_is_refused_before_it_is_gathered(traces, tmp_path,
                                                                        monkeypatch):
    """The first part with the page's holdings (the messages counted) over the
    budget: one line naming the budget that fits; the scratch folder emptied."""
    monkeypatch.setattr(page_inturn, "MESSAGE_BYTES", 1 << 20)
    with pytest.raises(earlc.parts.BudgetError, match="too small for the HTML page of this "
                                                      "trace.*give at least"):
        with earlc.parts.in_turn(traces["halo"], memory="300M", parts=2, scratch=tmp_path) as it:
            it.analyze(top=5).to_html(tmp_path / "r.html")
    assert os.listdir(tmp_path) == []


# -- the command line ----------------------------------------------------------------------

def test_the_command_line_writes_the_page_in_turn_within_the_budget(traces, tmp_path):
    """`earlc report --memory` and `earlc analyze --format html --memory` with a
    budget the analysis in one piece does not fit: the page of `earlc report`,
    byte for byte, the peak within the budget, the scratch folder emptied."""
    path = traces["hybrid"]
    one = tmp_path / "one.html"
    r = earlc_cli("report", path, "-o", one)
    assert r.returncode == 0, r.stderr
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    budget = 177 << 20
    assert needs_parts(path, budget) is not None
    for command in (["report", path, "-o", tmp_path / "r.html"],
                    ["analyze", path, "--format", "html", "-o", tmp_path / "a.html"]):
        r, peak = peak_of(command + ["--memory", "177M", "--scratch", scratch])
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        assert Path(command[-1]).read_bytes() == one.read_bytes(), command[0]
        assert peak <= budget, "%s peaked at %.0f MB, above its %.0f MB budget" % (
            command[0], peak / 2 ** 20, budget / 2 ** 20)
        assert os.listdir(scratch) == []


def test_what_the_page_in_turn_does_not_do_is_one_line(traces, tmp_path):
    """--pattern in turn, and a budget too small for a process with the page's
    room: one line, status 2, no page, nothing in the scratch folder."""
    path = traces["hybrid"]
    page = tmp_path / "r.html"
    r = earlc_cli("report", path, "-o", page, "--memory", "177M", "--scratch", tmp_path,
                  "--pattern", "x")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--pattern needs the whole trace in memory" in r.stderr
    r = earlc_cli("analyze", path, "--format", "html", "-o", page, "--memory", "172M",
                  "--scratch", tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "the smallest budget that works is" in r.stderr
    assert os.listdir(tmp_path) == []
    report = earlc.analyze(path, memory="177M", scratch=tmp_path)
    with pytest.raises(ValueError, match="does not mark a search's matches"):
        report.to_html(page, matches=object())
    with pytest.raises(ValueError, match="interactive timeline"):
        report.to_html(page, timeline=False)
    assert os.listdir(tmp_path) == []


def test_the_page_in_turn_in_a_browser(traces, tmp_path):
    """The page written in 3 parts in turn opens in Chromium: its timeline draws."""
    from test_html_report import browser, opened, painted_pixels

    page = tmp_path / "turn.html"
    with InTurn(traces["hybrid"], 1 << 50, scratch=tmp_path, parts=3) as it:
        it.analyze(top=5).to_html(page)
    driver = browser()
    try:
        opened(driver, page)
        assert painted_pixels(driver) > 1000
        driver.save_screenshot(str(tmp_path / "turn.png"))
        if os.environ.get("EARLC_KEEP_SCREENSHOT"):
            driver.save_screenshot(os.environ["EARLC_KEEP_SCREENSHOT"])
    finally:
        driver.quit()


def test_progress_counts_the_runs_of_the_page(traces, tmp_path):
    """The progress names the page's runs and their parts."""
    seen = []
    with InTurn(traces["halo"], 1 << 50, scratch=tmp_path, parts=2,
                progress=lambda phase, done, total: seen.append(phase)) as it:
        it.analyze(top=5).to_html()
    runs = [s for s in seen if s.startswith("page run ")]
    assert any(s.startswith("page run 1, part 2 of 2") for s in runs), seen[-5:]
    last = max(int(s.split()[2].rstrip(",")) for s in runs)
    assert last == page_inturn.PAGE_STEPS + 1, last  # the steps, and the run that writes
