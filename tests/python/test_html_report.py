"""The HTML report: self-contained (nothing fetched from anywhere), every number
equal to the JSON report; and in a real headless Chromium driven by Selenium the
metric tree unfolds on clicks and the numbers people read equal the JSON's."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

import earlc
from conftest import stopped_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HYBRID = ROOT / "traces" / "hybrid"
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


class Numbers(HTMLParser):
    """data-metric / data-value pairs of the metric tree, links and sources."""

    def __init__(self):
        super().__init__()
        self.metric_stack = []
        self.values = {}
        self.refs = []
        self.tables = defaultdict(list)  # (metric, table class) -> [data-value]
        self.section = None
        self.table = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a:
                self.refs.append(a[key])
        if tag == "section":
            self.section = a.get("data-metric")
        if tag == "table":
            self.table = a.get("class", "")
        if "data-metric" in a and tag in ("details", "div"):
            self.metric_stack.append(a["data-metric"])
        if a.get("class") == "value" and self.metric_stack:
            self.values[self.metric_stack[-1]] = int(a["data-value"])
        if tag == "td" and "data-value" in a and self.section:
            self.tables[(self.section, self.table)].append(int(a["data-value"]))


PATTERN = """Msg := ["", "MPI_*SEND", ""].["", "MPI_*RECV", ""];
Coll := ["", "ENTER", "MPI_Allreduce"];
Msg $m;
Coll $c;
Early := $m --> $c;
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    trace = earlc.open(HYBRID)
    report = earlc.analyze(trace)
    path = tmp_path_factory.mktemp("html") / "report.html"
    report.to_html(path, matches=trace.search(PATTERN))
    return trace, json.loads(report.to_json()), path


def test_self_contained(page):
    _, _, path = page
    text = path.read_text()
    parser = Numbers()
    parser.feed(text)
    assert parser.refs and all(r.startswith("data:") for r in parser.refs)
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?(?:https?:|//)", text)
    # the timeline's script asks nobody for anything
    assert not re.search(r"https?://|fetch\(|XMLHttpRequest|import\(|<link", text)
    # report and comm: the timeline is the interactive one
    assert text.count("data:image/png;base64,") == 2


def test_numbers_equal_the_json_report(page):
    _, rep, path = page
    parser = Numbers()
    parser.feed(path.read_text())
    assert parser.values == {m["name"]: m["value"] for m in rep["metrics"]}
    per_path = defaultdict(lambda: defaultdict(int))
    for s in rep["severities"]:
        per_path[s["metric"]][s["callpath"]] += s["value"]
    for (metric, table), values in parser.tables.items():
        if table == "rows callpaths":
            assert values == sorted(per_path[metric].values(), reverse=True)[:5]


def test_values_read_as_in_the_text_report(page):
    """Sizes, times and counts are written as the text report writes them (1.50 KiB,
    not 1536 B): one formatter for both."""
    trace, rep, path = page
    page_text = path.read_text()
    text = earlc.analyze(trace).to_text(top=0)
    res = rep["trace"]["timer_resolution"]
    units = set()
    for m in rep["metrics"]:
        if not m["value"]:
            continue
        shown = earlc.display.format_value(m["unit"], m["value"], res)
        assert 'data-value="%d">%s<' % (m["value"], html.escape(shown)) in page_text, m["name"]
        assert re.search(r"  %s\s+%s\s" % (re.escape(m["title"]), re.escape(shown)), text), \
            (m["name"], shown)
        units.add(m["unit"])
    assert {"sec", "bytes", "occ"} <= units
    assert "KiB" in page_text


def test_without_matplotlib(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; import earlc; "
            "t = earlc.open(sys.argv[1]); earlc.analyze(t).to_html(sys.argv[2])")
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-c", code, str(HYBRID), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "No pictures: drawing pictures needs matplotlib" in html.unescape(out.read_text())


def test_cli_report_with_a_pattern(tmp_path):
    pattern = tmp_path / "early.pattern"
    pattern.write_text(PATTERN)
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "earlc", "report", str(HYBRID), "-o", str(out),
                        "--no-pictures", "--pattern", str(pattern)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    n = len(earlc.open(HYBRID).search(PATTERN))
    assert out.read_text().count('class="match" data-match=') == min(n, 50)
    # a class that matches no event: a warning (as earlc search says it), a page
    # with no match
    none = tmp_path / "none.pattern"
    none.write_text('B := ["", "ENTER", "MPI_Nowhere"];\nB $b, $c;\nP := $b --> $c;\n')
    r = subprocess.run([sys.executable, "-m", "earlc", "report", str(HYBRID), "-o",
                        str(tmp_path / "n.html"), "--pattern", str(none)], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stderr.startswith("earlc: warning:"), r.stderr
    assert "MPI_Nowhere" in r.stderr and r.stderr.count("\n") == 1
    assert "<p>0 matches" in (tmp_path / "n.html").read_text()
    # a pattern that does not parse: one line, status 2, no page
    bad = tmp_path / "bad.pattern"
    bad.write_text('B := ["", "ENTER", "MPI_Send"];\nB $b;\nP := $b --> ;\n')
    r = subprocess.run([sys.executable, "-m", "earlc", "report", str(HYBRID), "-o",
                        str(tmp_path / "x.html"), "--pattern", str(bad)], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "pattern" in r.stderr, r.stderr
    assert not (tmp_path / "x.html").exists()


def test_cli_report(tmp_path):
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "earlc", "report", str(HYBRID), "-o", str(out),
                        "--no-pictures"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "metric-tree" in out.read_text()
    r = subprocess.run([sys.executable, "-m", "earlc", "report", str(HYBRID), "-o",
                        str(tmp_path / "r.txt")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and ".html" in r.stderr


# -- a real browser ---------------------------------------------------------------------
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("Chromium and its driver are not installed (Debian: chromium "
                    "chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900"):
        options.add_argument(arg)
    # the browser is no code under test: not under a sanitizer that `make test-asan`
    # preloads into this process
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return webdriver.Chrome(service=Service(driver, env=env), options=options)


def seconds_of(text):
    number, unit = text.split()
    return float(number) * UNITS[unit]


def test_in_a_browser_the_tree_unfolds_and_numbers_match(page):
    from selenium.webdriver.common.by import By

    trace, rep, path = page
    driver = browser()
    try:
        driver.get(path.resolve().as_uri())
        assert driver.title.startswith("earlc")

        def metric(name):
            return driver.find_element(By.CSS_SELECTOR, '[data-metric="%s"]' % name)

        def value_text(name):
            return metric(name).find_element(By.CSS_SELECTOR, ".value").text

        # folded below the roots: the late sender is hidden; clicking its ancestors
        # from the top opens one level at a time
        parent = {m["name"]: m["parent"] for m in rep["metrics"]}
        chain = []
        p = parent["late_sender"]
        while p is not None:
            chain.insert(0, p)
            p = parent[p]
        assert len(chain) >= 3
        assert metric(chain[0]).is_displayed() and metric(chain[1]).is_displayed()
        assert not metric(chain[2]).is_displayed()
        assert not metric("late_sender").is_displayed()
        for k, name in enumerate(chain[1:]):
            metric(name).find_element(By.TAG_NAME, "summary").click()
            nxt = chain[k + 2] if k + 2 < len(chain) else "late_sender"
            assert metric(nxt).is_displayed(), nxt
        others = [m["name"] for m in rep["metrics"] if m["parent"] == chain[1]
                  and m["name"] != chain[2]]
        hidden = [m["name"] for m in rep["metrics"] if m["parent"] in others]
        assert hidden and not any(metric(h).is_displayed() for h in hidden)  # still folded

        # unfold everything; every number read off the page equals the JSON report
        driver.find_element(By.XPATH, '//button[text()="unfold all"]').click()
        res = rep["trace"]["timer_resolution"]
        for m in rep["metrics"]:
            el = metric(m["name"])
            assert el.is_displayed(), m["name"]
            text = value_text(m["name"])
            if m["unit"] == "sec":
                assert seconds_of(text) == pytest.approx(m["value"] / res, rel=1e-3, abs=1e-12)
                pct = el.find_element(By.CSS_SELECTOR, ".percent").text
                assert float(pct.rstrip("%")) == pytest.approx(m["percent_of_time"], abs=0.006)
            elif m["unit"] == "bytes":
                assert text == earlc.display.format_value("bytes", m["value"], res), m["name"]
            else:
                assert int(text.split()[0]) == m["value"], m["name"]
        images = driver.find_elements(By.TAG_NAME, "img")
        assert len(images) == 2
        assert all(driver.execute_script("return arguments[0].naturalWidth", i) > 100
                   for i in images)  # the inlined pictures decode
        driver.find_element(By.XPATH, '//button[text()="fold all"]').click()
        assert not metric(chain[2]).is_displayed()
    finally:
        driver.quit()


# -- the interactive timeline in a real browser --------------------------------------------
def painted_pixels(driver) -> int:
    """The timeline canvas's pixels that are not (near) white."""
    return driver.execute_script(
        "var c = document.querySelector('.tl-canvas'); var d = c.getContext('2d')"
        ".getImageData(0, 0, c.width, c.height).data; var n = 0;"
        "for (var i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i+1] < 250) n++;"
        "return n;")


def opened(driver, path):
    driver.get(path.resolve().as_uri())
    canvas = driver.find_element("css selector", "#earlc-timeline .tl-canvas")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    return canvas


def view(driver):
    return driver.execute_script("return window.earlcTimeline.view()")


def click_at(driver, canvas, x, y):
    """A real click at client coordinates (x, y) on the canvas."""
    from selenium.webdriver.common.action_chains import ActionChains

    box = driver.execute_script("var b = arguments[0].getBoundingClientRect();"
                                "return [b.left, b.top, b.width, b.height]", canvas)
    ActionChains(driver).move_to_element_with_offset(
        canvas, int(round(x - box[0] - box[2] / 2)), int(round(y - box[1] - box[3] / 2))) \
        .click().perform()


def test_in_a_browser_the_timeline_zooms_pans_and_explains(page):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    trace, rep, path = page
    driver = browser()
    try:
        canvas = opened(driver, path)
        tl = "window.earlcTimeline"
        span = driver.execute_script("return %s.span" % tl)
        assert span == rep["trace"]["duration_ticks"]
        whole = view(driver)
        assert whole == {"start": 0, "end": span}
        # keys: + zooms in around the middle, - out again, arrows pan
        canvas.click()
        canvas.send_keys("+")
        zoomed = view(driver)
        assert zoomed["end"] - zoomed["start"] < 0.75 * span
        canvas.send_keys(Keys.ARROW_RIGHT)
        panned = view(driver)
        assert panned["start"] > zoomed["start"]
        assert panned["end"] - panned["start"] == pytest.approx(zoomed["end"] - zoomed["start"])
        canvas.send_keys(Keys.HOME)
        assert view(driver) == whole
        # the mouse wheel zooms around the pointer
        from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

        ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(canvas, 200, 0),
                                                0, -100).perform()
        wheel = view(driver)
        assert wheel["end"] - wheel["start"] < span
        # around the pointer: the time under it stays where it was
        box = driver.execute_script("var b = arguments[0].getBoundingClientRect();"
                                    "return [b.left, b.width]", canvas)
        pointer_x = box[0] + box[1] / 2 + 200
        gutter, width = 150, box[1] - 150 - 8
        t_before = (pointer_x - box[0] - gutter) / width * span
        t_after = wheel["start"] + (pointer_x - box[0] - gutter) / width * (wheel["end"] -
                                                                           wheel["start"])
        assert t_after == pytest.approx(t_before, abs=span / width * 2)
        # the visible span is written on the page
        shown = driver.find_element("css selector", "#earlc-timeline .tl-span")
        assert int(shown.get_attribute("data-end")) - int(shown.get_attribute("data-start")) \
            == pytest.approx(wheel["end"] - wheel["start"], abs=1)

        # a click on a wait state: its details, equal to the JSON report, and its partner
        name = "late_sender"
        want = rep["instances"][name][0]
        i = driver.execute_script(
            "var n = %s.selected; for (var i = 0; ; i++) { var w = %s.wait(i);"
            " if (w.where === undefined || (w.prop === arguments[0] && w.where === arguments[1]))"
            " return w.where === undefined ? -1 : i; }" % (tl, tl), name, want["event"])
        assert i >= 0
        w = driver.execute_script("return %s.wait(arguments[0])" % tl, i)
        driver.execute_script("%s.setView(arguments[0], arguments[1])" % tl,
                              w["start"] - 50, w["end"] + 50)
        x, y = driver.execute_script("var p = %s.locateWait(arguments[0]); return [p.x, p.y]"
                                     % tl, i).__iter__()
        click_at(driver, canvas, x, y)
        details = driver.find_element("css selector", "#earlc-timeline .tl-details")
        assert details.get_attribute("data-kind") == "wait"
        assert "Late Sender" in details.text
        sev = details.find_element("css selector", ".tl-severity")
        assert int(float(sev.get_attribute("data-value"))) == want["severity"]
        ev = trace.events
        send_call = want["send_call"]
        partner = details.find_element("css selector", ".tl-partner-time")
        assert int(float(partner.get_attribute("data-value"))) == \
            int(ev.time[send_call]) - trace.start_time
        assert str(trace.locations[int(ev.location[send_call])]) in details.text
        assert driver.execute_script("return %s.selected().prow" % tl) == \
            int(ev.location[send_call])  # the arrow starts on the sender's row

        # a click on a region instance: its region, call path and duration
        k = driver.execute_script("var r = %s.instances(0); return Math.floor((r[0] + r[1]) / 2)"
                                  % tl)
        inst = driver.execute_script("return %s.instance(arguments[0])" % tl, k)
        driver.execute_script("%s.setView(arguments[0], arguments[1])" % tl,
                              inst["start"] - 20, inst["end"] + 20)
        # the innermost instance at its middle (a deeper one may sit there)
        t = (inst["start"] + inst["end"]) / 2
        x, y = driver.execute_script("var p = %s.locate(arguments[0], arguments[1]);"
                                     "return [p.x, p.y]" % tl, inst["row"], t)
        click_at(driver, canvas, x, y)
        assert details.get_attribute("data-kind") == "interval"
        chosen = driver.execute_script("return %s.selected()" % tl)
        assert chosen["start"] <= t <= chosen["end"]
        duration = details.find_element("css selector", ".tl-duration")
        assert int(float(duration.get_attribute("data-value"))) == chosen["end"] - chosen["start"]
        path_text = details.find_element("css selector", ".tl-path").text
        assert path_text in {c["path"] for c in rep["callpaths"]}
    finally:
        driver.quit()


def test_in_a_browser_occurrences_zoom_and_rows_fold(page):
    trace, rep, path = page
    driver = browser()
    try:
        canvas = opened(driver, path)
        tl = "window.earlcTimeline"
        before = view(driver)
        rows = driver.find_elements("css selector", "tr.occurrence")
        assert rows
        target = rows[0]
        metric = driver.execute_script("return arguments[0].closest('section').dataset.metric",
                                       target)
        severity = int(target.find_elements("css selector", "td")[-1].get_attribute("data-value"))
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
        target.click()
        after = view(driver)
        assert after["end"] - after["start"] < (before["end"] - before["start"]) / 2
        chosen = driver.execute_script("return %s.selected()" % tl)
        assert chosen["kind"] == "wait"
        assert after["start"] <= chosen["start"] and chosen["end"] <= after["end"]
        details = driver.find_element("css selector", "#earlc-timeline .tl-details")
        assert int(float(details.find_element("css selector", ".tl-severity")
                         .get_attribute("data-value"))) == severity
        assert severity == rep["instances"][metric][0]["severity"]
        # the matches of the pattern: listed, and a click zooms to one
        matches = driver.find_elements("css selector", "tr.match")
        assert len(matches) == min(50, len(trace.search(PATTERN)))
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", matches[3])
        matches[3].click()
        assert driver.execute_script("return %s.selectedMatch()" % tl) == 3
        m = trace.search(PATTERN).events[3]
        t = [int(trace.events.time[e]) - trace.start_time for e in m]
        v = view(driver)
        assert v["start"] <= min(t) and max(t) <= v["end"]
        # a click on a process's triangle folds its threads
        canvas = opened(driver, path)
        n = len(driver.execute_script("return %s.shownRows()" % tl))
        box = driver.execute_script("var b = arguments[0].getBoundingClientRect();"
                                    "return [b.left, b.top]", canvas)
        click_at(driver, canvas, box[0] + 20, box[1] + 2 + 6)
        assert len(driver.execute_script("return %s.shownRows()" % tl)) == n - 1
    finally:
        driver.quit()


def test_a_stopped_run_in_the_page(tmp_path):
    """Where each location of a run that was ended stopped: listed as the text report
    groups them, and hatched in the timeline up to the end of the run."""
    path = tmp_path / "stopped"
    stopped_run(path)
    trace = earlc.open(path)
    report = earlc.analyze(trace)
    out = tmp_path / "r.html"
    report.to_html(out, pictures=False)
    text = out.read_text()
    assert 'id="stopped"' in text
    items = re.findall(r"<li>(.*?)</li>", text.split('id="stopped"')[1].split("</ul>")[0])
    assert items[0].startswith("ranks 0-1") and "in main/MPI_Recv" in items[0]
    assert items[1].startswith("rank 2") and "MPI_Barrier" in items[1]
    assert "until the run was ended at" in items[0]
    data = json.loads(re.search(r'id="earlc-timeline-data">(.*?)</script>', text, re.S)
                      .group(1).replace("<\\/", "</"))
    assert data["span"] == 1000 - trace.start_time
    assert sorted((s["row"], s["text"]) for s in data["stopped"]) == [
        (0, "stopped in MPI_Recv"), (1, "stopped in MPI_Recv"), (2, "stopped in MPI_Barrier")]
    driver = browser()
    try:
        opened(driver, out)
        assert driver.execute_script("return window.earlcTimeline.span") == data["span"]
    finally:
        driver.quit()


def test_counters_in_the_page(tmp_path):
    path = tmp_path / "counters"
    with earlc.TraceWriter(path, ranks=2, resolution=1000) as w:
        w.metric_member("PAPI_TOT_INS")
        for r in range(2):
            for k in range(10):
                w.enter(r, 100 * k, "work")
                w.metric(r, 100 * k, "PAPI_TOT_INS", 1000 * k * (r + 1))
                w.leave(r, 100 * k + 90, "work")
                w.metric(r, 100 * k + 90, "PAPI_TOT_INS", 1000 * k * (r + 1) + 10)
    trace = earlc.open(path)
    out = tmp_path / "r.html"
    earlc.analyze(trace).to_html(out, pictures=False)
    driver = browser()
    try:
        opened(driver, out)
        panels = driver.find_elements("css selector", "#earlc-timeline .tl-series-canvas")
        assert [p.get_attribute("title") for p in panels] == ["PAPI_TOT_INS /s"]
    finally:
        driver.quit()


def test_the_note_counts_occurrences_not_spans(monkeypatch):
    from conftest import reference_trace

    """Where the page keeps only the most severe wait states, its note says how many
    occurrences of how many it holds (an occurrence may take several spans: a wait
    state of many members draws one per member); where it keeps all, no note."""
    from earlc.export import timeline_page

    report = earlc.analyze(earlc.open(reference_trace("casita-jacobi-hybrid")))
    assert "most severe of the" not in report.to_html(pictures=False)
    monkeypatch.setattr(timeline_page, "WAITS_ALL", 1000)
    monkeypatch.setattr(timeline_page, "WAIT_BUDGET", 1000)
    monkeypatch.setattr(timeline_page, "EXACT_ALL", 1000)  # windows, not the whole run
    waits = timeline_page.timeline_data(report, occurrences=1)["waits"]
    assert waits["occurrences"] < waits["total"]
    page = report.to_html(pictures=False, rows=1)
    held, total = map(int, re.search(r"holds the (\d+) most severe of the (\d+) wait states",
                                     page).groups())
    assert (held, total) == (waits["occurrences"], waits["total"])
