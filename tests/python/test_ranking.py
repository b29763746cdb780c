"""One ranking of inefficiencies for every output: each property declares what it
measures (an inefficiency, a plain time, a cause, a quantity); the text report,
the JSON report, the HTML page and the report picture list the same
inefficiencies in the same order, and only those are red."""
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

import earlc
from earlc.analysis import Instances, Property, PropertyError
from earlc.analysis.catalog import builtin_properties
from earlc.analysis.property import MEASURES
from earlc.analysis.ranking import measures_of
from conftest import ROOT, reference_trace

HYBRID = ROOT / "traces" / "hybrid"


def test_every_builtin_declares_what_it_measures():
    for p in builtin_properties():
        declared = [c for c in type(p).__mro__ if c is not Property and "measures" in vars(c)]
        assert declared and p.measures in MEASURES, p.name
        assert (p.measures == "quantity") == (p.unit != "sec"), p.name
    by_name = {p.name: measures_of(p) for p in builtin_properties()}
    for plain_time in ("time", "execution", "comp", "mpi", "omp", "mpi_point2point", "overhead"):
        assert by_name[plain_time] == "time", plain_time
    for waste in ("late_sender", "wait_at_barrier", "idle_threads", "omp_management",
                  "omp_barrier_wait_implicit", "lock_contention"):
        assert by_name[waste] == "inefficiency", waste
    assert by_name["delay_latesender"] == "cause"


class _Mine(Property):
    name, title, parent = "mine", "Mine", "mpi_point2point"

    def detect(self, ctx, subscribed):
        return Instances.empty()


def test_plugins_default_and_bad_declarations(tmp_path):
    assert measures_of(_Mine()) == "inefficiency"  # occurrences of a time: lost time

    class Totals(_Mine):
        def totals(self, ctx):
            return None
    assert measures_of(Totals()) == "time"

    class Bad(_Mine):
        measures = "waste"
    with pytest.raises(PropertyError, match="measures must be one of"):
        earlc.analyze(earlc.open(HYBRID), plugins=[Bad()], packages=False)

    class Unfit(_Mine):
        unit, measures = "occ", "inefficiency"
    with pytest.raises(PropertyError, match="does not fit unit"):
        earlc.analyze(earlc.open(HYBRID), plugins=[Unfit()], packages=False)

    plugin = tmp_path / "bad.py"
    plugin.write_text("from earlc.analysis import Property, Instances\n"
                      "class Bad(Property):\n"
                      "    name, title, measures = 'bad', 'Bad', 'waste'\n"
                      "    def detect(self, ctx, s):\n"
                      "        return Instances.empty()\n")
    r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(HYBRID), "--plugin",
                        str(plugin)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "measures must be one of" in r.stderr


class _Sections(HTMLParser):
    """The HTML page's ranking (its property sections, in order) and the metrics the
    tree marks red."""

    def __init__(self):
        super().__init__()
        self.sections, self.red = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "property" in a.get("class", "").split():
            self.sections.append(a["data-metric"])
        if "detected" in a.get("class", "").split() and "data-metric" in a:
            self.red.append(a["data-metric"])


def outputs(trace, top):
    """The ranking as each output shows it."""
    from earlc.plot import plot_report

    report = earlc.analyze(trace)
    title_of = {p.title: p.name for p in report.properties}
    text = report.to_text(top=top)
    block = text.split("Most severe inefficiencies", 1)[1].split("\n\n", 1)[0]
    listed = [title_of[m.group(1).strip()] for m in
              re.finditer(r"^\s+\d+\. (.+?)\s{2,}\S+ \S+\s+[\d.]+%$", block, re.M)]
    headers = [title_of[line.split(":")[0]] for line in text.splitlines()
               if re.match(r"^[A-Z][^ ].*: [\d.]+ [mu]?s \([\d.]+% of time\)$", line)]
    doc = report.to_dict()
    page = _Sections()
    page.feed(report.to_html(top=top, pictures=False))
    fig = plot_report(report, top=top)
    heat = [title_of[a.get_title().split(". ", 1)[1].rsplit(" (", 1)[0]]
            for a in fig.axes[1:] if a.get_title()]
    bars = fig.axes[0].patches
    shown = [p for p in report.properties if p.unit == "sec"
             and (report.total(p.name) > 0 or p.parent is None)]
    red = [p.name for p, b in zip(shown, bars) if b.get_facecolor()[0] > 0.8]
    return report, {"text list": listed, "text sections": headers,
                    "json": doc["ranking"][:top], "html": page.sections, "picture": heat,
                    "html red": page.red, "picture red": red}


@pytest.mark.parametrize("source", ["hybrid", "casita-jacobi-hybrid", "sstmacro-mpi-coverage"])
def test_the_same_top_list_in_every_output(source):
    path = HYBRID if source == "hybrid" else reference_trace(source)
    trace = earlc.open(path)
    top = 4
    report, got = outputs(trace, top)
    want = [p.name for p in report.ranking()][:top]
    assert want
    for what in ("text list", "text sections", "json", "html", "picture"):
        assert got[what] == want, (what, got[what], want)
    inefficient = {p.name for p in report.properties if measures_of(p) == "inefficiency"}
    assert set(got["html red"]) == inefficient
    assert set(got["picture red"]) <= inefficient and got["picture red"]
    # the JSON says what each metric measures
    doc = json.loads(report.to_json())
    assert {m["name"] for m in doc["metrics"] if m["measures"] == "inefficiency"} == inefficient


def test_idle_threads_lead_the_jacobi_ranking():
    """The largest inefficiency of casita-jacobi-hybrid (49.7%: worker threads idle
    while the master runs serial code) leads every list; Time, Execution and
    Computation are in none."""
    trace = earlc.open(reference_trace("casita-jacobi-hybrid"))
    report, got = outputs(trace, 5)
    assert got["json"][0] == "idle_threads"
    assert report.percent("idle_threads") == pytest.approx(49.66, abs=0.01)
    for lst in got.values():
        assert not {"time", "execution", "comp"} & set(lst)
