"""Pictures: what each figure holds (bars, wait states, message lines, matrix
cells) equals the window / report / matrix it draws, files come out as PNG, SVG or
PDF, and the command line answers bad options and a missing matplotlib with one
line and exit status 2."""
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc.timeline import Window, window_ticks

pytest.importorskip("matplotlib")
from matplotlib.collections import LineCollection, PolyCollection  # noqa: E402

from earlc import overview as ov  # noqa: E402
from earlc.plot import plot_comm, plot_report, plot_timeline  # noqa: E402
from earlc.plot.timeline import BUNDLE_PX  # noqa: E402

from conftest import reference_trace, stopped_run  # noqa: E402
from picture_checks import check_picture, rgb, row_boxes  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HYBRID = ROOT / "traces" / "hybrid"


@pytest.fixture(scope="module")
def hybrid():
    trace = earlc.open(HYBRID)
    return trace, earlc.analyze(trace)


def test_timeline_draws_the_window(hybrid, tmp_path):
    trace, report = hybrid
    out = tmp_path / "t.png"
    fig = plot_timeline(trace, out, start=1e-6, end=4e-6, locations=[0, 2, 3], report=report)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    first, last = window_ticks(trace, 1e-6, 4e-6)
    win = Window(trace, first, last, [0, 2, 3])
    ax = fig.axes[0]
    pixels = ax.images[0].get_array().shape[1]
    assert pixels == round(ax.bbox.width)  # one image pixel per picture pixel
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    waits = win.wait_states(report)
    wide = (waits.end - waits.start) * pixels >= last - first
    assert len(polys[0].get_paths()) == int(wide.sum()) > 0
    msgs = win.messages()
    bundles = ov.message_bundles(msgs.send_time, msgs.recv_time,
                                 np.searchsorted(win.locations, msgs.src),
                                 np.searchsorted(win.locations, msgs.dst), first, last, pixels,
                                 BUNDLE_PX)
    assert len(lines[0].get_segments()) == len(bundles["count"]) > 0
    assert int(bundles["count"].sum()) == len(msgs)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0.0", "rank 1.0", "rank 1.1"]


def test_wait_marks_only_where_at_least_a_pixel(hybrid):
    """Zooming in shows more wait states: each one at least a pixel wide."""
    trace, report = hybrid
    whole = plot_timeline(trace, None, report=report, width=3.0, metrics=False)
    zoomed = plot_timeline(trace, None, start=1e-6, end=2e-6, report=report, metrics=False)
    count = [len(c.get_paths()) for f in (whole, zoomed) for c in f.axes[0].collections
             if isinstance(c, PolyCollection)]
    for fig in (whole, zoomed):
        ax = fig.axes[0]
        px_per_unit = ax.bbox.width / (ax.get_xlim()[1] - ax.get_xlim()[0])
        for c in ax.collections:
            if isinstance(c, PolyCollection):
                widths = [(p.vertices[:, 0].max() - p.vertices[:, 0].min()) * px_per_unit
                          for p in c.get_paths()]
                assert min(widths) >= 1 - 1e-6


def test_timeline_svg_and_pdf(hybrid, tmp_path):
    trace, report = hybrid
    plot_timeline(trace, tmp_path / "t.svg", report=report)
    root = ET.parse(tmp_path / "t.svg").getroot()
    assert root.tag.endswith("svg")
    plot_timeline(trace, tmp_path / "t.pdf", wait_states=False)
    assert (tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"


def test_report_picture(hybrid, tmp_path):
    trace, report = hybrid
    from earlc.plot.report import detected_properties, heatmap

    fig = plot_report(report, tmp_path / "r.png")
    bars = fig.axes[0].patches
    shown = [p for p in report.properties if p.unit == "sec"
             and (report.total(p.name) > 0 or p.parent is None)]
    assert [round(b.get_width(), 9) for b in bars] == [round(report.percent(p.name), 9)
                                                       for p in shown]
    worst = detected_properties(report, 4)
    titles = [ax.get_title() for ax in fig.axes[1:] if ax.get_title()]
    assert titles == ["%d. %s (%.2f%% of time)" % (k + 1, p.title, report.percent(p.name))
                      for k, p in enumerate(worst)]
    assert worst == report.ranking()[:4]
    # each heat map holds the metric's cells of its worst call paths
    for p in worst:
        paths, matrix = heatmap(report, p.name)
        want = dict(report.by_callpath(p.name))
        assert [int(v) for v in matrix.sum(axis=1)] == [want[cp] for cp in paths]


def test_comm_picture(hybrid, tmp_path):
    trace, _ = hybrid
    fig = plot_comm(trace, tmp_path / "c.png", output="count", by="rank")
    image = fig.axes[0].images[0].get_array()
    assert (np.ma.filled(image, 0) == trace.comm_matrix(output="count", by="rank")).all()


def run_cli(*args, python_prefix=None):
    code = "import sys; from earlc.cli import main; sys.exit(main(sys.argv[1:]))"
    if python_prefix:
        code = python_prefix + "; " + code
    return subprocess.run([sys.executable, "-c", code] + [str(a) for a in args],
                          capture_output=True, text=True)


@pytest.mark.parametrize("what", ["timeline", "report", "comm"])
def test_cli_plot(tmp_path, what):
    out = tmp_path / ("p.svg" if what == "comm" else "p.png")
    r = run_cli("plot", what, HYBRID, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000


@pytest.mark.parametrize("args,words", [
    (["timeline", HYBRID, "-o", "x.gif"], "picture format"),
    (["report", HYBRID, "-o", "x.png", "--from", "1us"], "timeline only"),
    (["timeline", HYBRID, "-o", "x.png", "--from", "later"], "no time"),
    (["timeline", HYBRID, "-o", "x.png", "--locations", "0-99"], "does not exist"),
])
def test_cli_plot_bad_values(tmp_path, capsys, monkeypatch, args, words):
    from earlc.cli import main

    monkeypatch.chdir(tmp_path)
    try:
        code = main(["plot"] + [str(a) for a in args])
    except SystemExit as exc:  # refused while the arguments are parsed
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and words in err, err
    assert not list(tmp_path.iterdir())


def test_cli_plot_without_matplotlib(tmp_path):
    """sys.modules[name] = None makes `import name` fail as if it were absent."""
    r = run_cli("plot", "timeline", HYBRID, "-o", tmp_path / "t.png",
                python_prefix="import sys; sys.modules['matplotlib'] = None")
    assert r.returncode == 2
    assert r.stderr == ("earlc: error: drawing pictures needs matplotlib, which is not "
                        "installed: pip install matplotlib\n")


def test_each_pixel_shows_the_dominant_activity(hybrid):
    """Each pixel of a row's band has the colour of the activity that took most of
    the location's own time in it (computed here from each location's ENTER/LEAVE
    walk), idle grey where it had nothing of its own open, white outside its
    record."""
    from matplotlib.colors import to_rgba

    from earlc.plot.style import ACTIVITY_COLOURS, IDLE_COLOUR

    trace, report = hybrid
    fig = plot_timeline(trace, None, report=report, width=6.0, metrics=False)
    image = fig.axes[0].images[0].get_array()
    n_rows, pixels = len(trace.locations), image.shape[1]
    row_px = image.shape[0] // n_rows
    table = ov.activity_table(trace)
    first, span = trace.start_time, trace.duration_ticks + 1
    edge = [p * span // pixels for p in range(pixels + 1)]  # pixel p: [edge[p], edge[p + 1])
    ev = trace.events
    checked = 0
    for loc in range(n_rows):
        per_pixel = np.zeros((pixels, len(ov.ACTIVITIES) + 1), dtype=np.int64)  # last: idle
        stack, prev = [], None
        for i in ev.of_location(loc).tolist():
            t = int(ev.time[i])
            if prev is not None and t > prev:  # [prev, t) belongs to the top, or is idle
                a, b = prev - first, t - first
                what = table[stack[-1]] if stack else len(ov.ACTIVITIES)
                for p in range(a * pixels // span, min((b - 1) * pixels // span + 2, pixels)):
                    per_pixel[p, what] += max(min(b, edge[p + 1]) - max(a, edge[p]), 0)
            if int(ev.kind[i]) == earlc.KINDS["ENTER"]:
                stack.append(int(ev.region[i]))
            elif int(ev.kind[i]) == earlc.KINDS["LEAVE"] and stack:
                stack.pop()
            prev = t
        band = image[loc * row_px + row_px // 3]
        for p in range(pixels):
            ranked = np.sort(per_pixel[p])
            if ranked[-1] == 0 or ranked[-1] == ranked[-2]:
                continue  # outside the record, or a tie
            k = int(np.argmax(per_pixel[p]))
            colour = IDLE_COLOUR if k == len(ov.ACTIVITIES) else ACTIVITY_COLOURS[ov.ACTIVITIES[k]]
            assert np.allclose(band[p] / 255.0, to_rgba(colour), atol=1 / 255), (loc, p)
            checked += 1
    assert checked > pixels * n_rows // 2


# -- pixels of the real traces and of generated ones ----------------------------------
@pytest.mark.parametrize("name", ["casita-jacobi-hybrid", "sstmacro-mpi-coverage",
                                  "pipit-ping-pong", "casita-cuda-simple"])
def test_real_traces_are_readable(name):
    trace = earlc.open(reference_trace(name))
    found = check_picture(trace, earlc.analyze(trace))
    assert len(found["rows"]) == len(trace.locations)


def test_threads_show_what_they_did():
    """The full view of casita-jacobi-hybrid: the worker threads idle until the
    jacobi loop starts at 0.78 s, then compute in its parallel loops; no wait
    state of their master paints them, and the 2,000 messages between the two
    masters leave every row readable (the old picture was a black block)."""
    trace = earlc.open(reference_trace("casita-jacobi-hybrid"))
    found = check_picture(trace, earlc.analyze(trace))
    image = found["plain_image"]
    fig = found["figure"]
    from earlc.plot.style import ACTIVITY_COLOURS
    from earlc.plot.timeline import BAND

    bands = row_boxes(fig, len(found["rows"]), BAND)
    ax = fig.axes[0]
    x_of = lambda seconds: int(round(ax.transData.transform((seconds, 0))[0]))  # noqa: E731
    work, idle = rgb(ACTIVITY_COLOURS["omp_work"]), found["idle"]
    for row, loc in enumerate(found["rows"]):
        l = trace.locations[loc]
        if l.type != "CPU_THREAD" or l.thread < 1:
            continue
        t, b, _, _ = bands[row]
        before = image[(t + b) // 2, x_of(0.1):x_of(0.7)]
        after = image[(t + b) // 2, x_of(0.85):x_of(2.6)]
        assert np.mean(np.all(before == idle, axis=1)) > 0.95, l
        assert np.mean(np.all(after == work, axis=1)) > 0.95, l
    assert max(found["message_shares"]) < 0.2


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A halo exchange of 16 ranks and a hybrid program of 4 x 4 threads, about
    400,000 events each (make bench checks a 10-million-event one)."""
    from earlc.synth import synth

    out = {}
    for kind, opts in (("halo", dict(ranks=16)), ("hybrid", dict(ranks=4, threads=4))):
        path = tmp_path_factory.mktemp(kind) / "trace"
        synth(kind, path, events=400000, **opts)
        out[kind] = path
    return out


@pytest.mark.parametrize("kind", ["halo", "hybrid"])
def test_generated_traces_are_readable(generated, kind):
    trace = earlc.open(generated[kind])
    report = earlc.analyze(trace)
    check_picture(trace, report)
    d = trace.duration
    check_picture(trace, report, start=0.4 * d, end=0.401 * d)  # zoomed in


def test_legend_is_never_cut(hybrid):
    """Narrow pictures lay the legend out in fewer columns, never past the edge."""
    trace, report = hybrid
    for width in (3.0, 6.0, 12.0):
        fig = plot_timeline(trace, None, report=report, width=width)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for legend in fig.legends:
            for text in legend.get_texts():
                box = text.get_window_extent(renderer)
                assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (width, text.get_text())
                assert box.y0 >= 0, (width, text.get_text())


def test_counters_are_drawn_under_the_timeline(tmp_path):
    """A counter recorded beside ENTER/LEAVE (PAPI style, a running total) is drawn
    as its rate, one line per location, in a panel under the timeline; series of
    any source in the (location, metric, time, value) shape are drawn alike."""
    import pandas as pd

    from earlc.series import counter_series

    path = tmp_path / "counters"
    with earlc.TraceWriter(path, ranks=2, resolution=1000) as w:
        w.metric_member("PAPI_TOT_INS")
        for r in range(2):
            total = 0
            for k in range(10):
                w.enter(r, 100 * k, "work")
                w.metric(r, 100 * k, "PAPI_TOT_INS", total)
                total += 1000 * (r + 1)
                w.leave(r, 100 * k + 90, "work")
                w.metric(r, 100 * k + 90, "PAPI_TOT_INS", total)
    trace = earlc.open(path)
    series = counter_series(trace)
    assert set(series["metric"]) == {"PAPI_TOT_INS /s"}
    rates = series[series["location"] == 1]["value"].to_numpy()
    assert rates.max() == pytest.approx(2000 / 90 * 1000)  # per second, at 1000 ticks/s
    fig = plot_timeline(trace, tmp_path / "c.png")
    panel = fig.axes[1]
    assert panel.get_ylabel() == "PAPI_TOT_INS /s"
    assert len(panel.get_lines()) == 2
    assert max(panel.get_lines()[1].get_ydata()) == pytest.approx(rates.max())
    # a series of another source: one function draws it
    ticks = trace.start_time + np.array([0, 500, 900])
    other = pd.DataFrame({"location": [0, 0, 1], "metric": "power", "unit": "W",
                          "time": (ticks - trace.start_time) / trace.timer_resolution,
                          "time_ticks": ticks, "value": [10.0, 12.0, 11.0]})
    fig = plot_timeline(trace, None, metrics=other)
    assert [a.get_ylabel() for a in fig.axes[1:]] == ["power\n(W)"]
    assert not plot_timeline(trace, None, metrics=False).axes[1:]


def test_a_stopped_run_shows_where_each_process_stopped(tmp_path):
    """Ranks 0-1 stopped in MPI_Recv, rank 2 in MPI_Barrier, the run ended at
    t=1000: each stopped row is hatched from the call it stopped in to the end of
    the run, and the window reaches that end."""
    path = tmp_path / "stopped"
    stopped_run(path)
    trace = earlc.open(path)
    fig = plot_timeline(trace, None, metrics=False)
    ax = fig.axes[0]
    first = trace.start_time
    assert ax.get_xlim()[1] == pytest.approx((1000 - first) / trace.timer_resolution * 1e0, rel=1e-9) \
        or ax.get_xlim()[1] > 0.9
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 3
    texts = sorted(t.get_text().strip() for t in ax.texts)
    assert texts == ["stopped in MPI_Barrier", "stopped in MPI_Recv", "stopped in MPI_Recv"]
    assert any("stopped" in t.get_text() for t in fig.legends[0].get_texts())
