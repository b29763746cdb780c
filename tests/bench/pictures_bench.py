"""Pictures and the HTML report of a 10-million-event trace (issue 26): writing the
page against the analysis (target: at most 2x), the page's size (target: at most
30 MB), the time a browser takes to draw its timeline first and to redraw it after
a zoom (headless Chromium through selenium, when installed), and the pixel checks
of tests/python/picture_checks.py on the timeline picture of the whole run and of
a zoomed window.

    python3 tests/bench/pictures_bench.py TRACE [REPEATS]

Prints "key value" lines for tests/bench/run.py (and "skip_browser 1" when no
browser is installed).  The analysis and the page are timed in the same process,
the best of the repetitions each, after the one-time imports of matplotlib and
pandas.
"""
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))
import earlc  # noqa: E402


def browser_times(page: Path):
    """(seconds to load the page, ms of the first draw, ms of the redraw after a
    4x zoom, ms of a redraw after a pan) in headless Chromium, or None."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900"):
        options.add_argument(arg)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    driver = webdriver.Chrome(service=Service(driver_path, env=env), options=options)
    try:
        t0 = time.perf_counter()
        driver.get(page.resolve().as_uri())
        loaded = time.perf_counter() - t0
        first = driver.execute_script("return window.earlcTimeline.stats.ms")
        zoom = driver.execute_script(
            "var t = window.earlcTimeline, s = performance.now(); t.zoom(4);"
            "return performance.now() - s")
        pan = driver.execute_script(
            "var t = window.earlcTimeline, v = t.view(), s = performance.now();"
            "t.setView(v.start + (v.end - v.start) / 3, v.end + (v.end - v.start) / 3);"
            "return performance.now() - s")
        return loaded, first, zoom, pan
    finally:
        driver.quit()


def main() -> int:
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    # the one-time imports (matplotlib, pandas: about a second) are no part of writing
    # a page, as the analysis' own imports are no part of the analysis
    import matplotlib.backends.backend_agg  # noqa: F401
    import pandas  # noqa: F401

    import earlc.export.html  # noqa: F401
    import earlc.plot.report  # noqa: F401
    out = Path(tempfile.mkdtemp(prefix="earlc-pictures-bench-"))
    page = out / "report.html"
    best = {"open": float("inf"), "analysis": float("inf"), "page": float("inf"),
            "timeline_data": float("inf")}
    for _ in range(repeats):
        t0 = time.perf_counter()
        trace = earlc.open(path)
        t1 = time.perf_counter()
        report = earlc.analyze(trace)
        t2 = time.perf_counter()
        report.to_html(page)
        t3 = time.perf_counter()
        best["open"] = min(best["open"], t1 - t0)
        best["analysis"] = min(best["analysis"], t2 - t1)
        best["page"] = min(best["page"], t3 - t2)
        from earlc.export.timeline_page import timeline_data

        t4 = time.perf_counter()
        timeline_data(report)
        best["timeline_data"] = min(best["timeline_data"], time.perf_counter() - t4)
        n = len(trace)
        del report, trace
        gc.collect()
    print("events %d" % n)
    for k, v in best.items():
        print("%s_seconds %.4f" % (k, v))
    print("page_bytes %d" % page.stat().st_size)
    times = browser_times(page)
    if times is None:
        print("skip_browser 1")
    else:
        for key, value in zip(("browser_load_seconds", "first_draw_ms", "zoom_redraw_ms",
                               "pan_redraw_ms"), times):
            print("%s %.4f" % (key, value))

    # the pixels of the timeline picture: the whole run, then a zoomed window
    from picture_checks import check_picture

    trace = earlc.open(path)
    report = earlc.analyze(trace)
    d = trace.duration
    for name, window in (("whole", (None, None)), ("zoomed", (0.5 * d, 0.5005 * d))):
        t0 = time.perf_counter()
        found = check_picture(trace, report, start=window[0], end=window[1])
        print("picture_%s_seconds %.4f" % (name, (time.perf_counter() - t0) / 2))
        print("picture_%s_message_share %.4f" % (name, max(found["message_shares"])))
        print("picture_%s_activities %d" % (name, len(set().union(*found["activities"].values()))))
    page.unlink()
    out.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
