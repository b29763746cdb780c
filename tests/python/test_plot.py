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

from earlc.plot import plot_comm, plot_report, plot_timeline  # noqa: E402

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
    win = Window(trace, *window_ticks(trace, 1e-6, 4e-6), [0, 2, 3])
    ax = fig.axes[0]
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(polys[0].get_paths()) == len(win.slices())
    assert len(polys[1].get_paths()) == len(win.wait_states(report)) > 0
    assert len(lines[0].get_segments()) == len(win.messages()) > 0
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0.0", "rank 1.0", "rank 1.1"]


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
    assert [t.split(" (")[0] for t in titles] == [p.title for p in worst]
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


def test_big_windows_paint_the_dominant_kind(hybrid, monkeypatch):
    """Past RASTER_ABOVE instances the bars become an image; each pixel has the colour
    of the kind that took most of the location's own time in it (computed here from
    each location's ENTER/LEAVE walk)."""
    import earlc.plot.timeline as drawing
    from matplotlib.colors import to_rgba

    from earlc.plot.style import KIND_COLOURS
    from earlc.timeline import DISPLAY_KINDS, display_kinds

    trace, report = hybrid
    monkeypatch.setattr(drawing, "RASTER_ABOVE", 10)
    fig = plot_timeline(trace, None, report=report)
    image = fig.axes[0].images[0].get_array()
    n_rows, pixels = len(trace.locations), image.shape[1]
    assert image.shape[0] == 5 * n_rows
    assert "no messages at this zoom" in fig.axes[0].get_title()
    kinds = display_kinds(trace)
    first, span = trace.start_time, trace.duration_ticks
    ev = trace.events
    checked = 0
    for loc in range(n_rows):
        per_pixel = np.zeros((pixels, len(DISPLAY_KINDS)))
        stack, prev = [], None
        for i in ev.of_location(loc).tolist():
            t = int(ev.time[i])
            if stack and prev is not None and t > prev:  # [prev, t) belongs to the top
                a, b = (prev - first) * pixels / span, (t - first) * pixels / span
                for p in range(int(a), min(int(np.ceil(b)), pixels)):
                    per_pixel[p, kinds[stack[-1]]] += min(b, p + 1) - max(a, p)
            if int(ev.kind[i]) == earlc.KINDS["ENTER"]:
                stack.append(int(ev.region[i]))
            elif int(ev.kind[i]) == earlc.KINDS["LEAVE"] and stack:
                stack.pop()
            prev = t
        for p in range(pixels):
            ranked = np.sort(per_pixel[p])
            if ranked[-1] < 1e-9 or ranked[-1] - ranked[-2] < 0.01:
                continue  # empty, or too close a call between two kinds
            want = to_rgba(KIND_COLOURS[DISPLAY_KINDS[int(np.argmax(per_pixel[p]))]])
            assert np.allclose(image[5 * loc + 2, p], want), (loc, p)
            assert image[5 * loc, p][3] == 0  # the gap between rows
            checked += 1
    assert checked > pixels * n_rows // 2
