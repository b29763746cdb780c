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


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    trace = earlc.open(HYBRID)
    report = earlc.analyze(trace)
    path = tmp_path_factory.mktemp("html") / "report.html"
    report.to_html(path)
    return trace, json.loads(report.to_json()), path


def test_self_contained(page):
    _, _, path = page
    text = path.read_text()
    parser = Numbers()
    parser.feed(text)
    assert parser.refs and all(r.startswith("data:") for r in parser.refs)
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?(?:https?:|//)", text)
    assert text.count("data:image/png;base64,") == 3  # timeline, report, comm


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
        assert len(images) == 3
        assert all(driver.execute_script("return arguments[0].naturalWidth", i) > 100
                   for i in images)  # the inlined pictures decode
        driver.find_element(By.XPATH, '//button[text()="fold all"]').click()
        assert not metric(chain[2]).is_displayed()
    finally:
        driver.quit()
