"""`earlc annotate` and earlc.markers: OTF2 markers for pattern matches and wait states,
written through libotf2's marker writer, read back by earlc (trace.markers) and by
`otf2-marker`, with the event and definition files left byte for byte as they were."""
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, reference_trace

import earlc
from earlc.markers import GROUP_PREFIX, AnnotateError, annotate, read_markers
from earlc.timeline import Window

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
LAST_SEND = """Send := ["", "MPI_*SEND", ""];
Send $s, *all;
Last := $s !--> *all;
"""


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "earlc", *map(str, args)], capture_output=True,
                          text=True, env=ENV)


def otf2_marker(anchor, *args):
    if not shutil.which("otf2-marker"):
        pytest.skip("otf2-marker (Debian otf2-tools) is not installed")
    return subprocess.run(["otf2-marker", *args, str(anchor)], capture_output=True, text=True,
                          check=True).stdout


def listed(anchor):
    """(group, category, severity) definitions and (time, duration, scope, text) markers
    as otf2-marker prints them."""
    defs, marks = [], []
    for line in otf2_marker(anchor).splitlines():
        m = re.match(r'MARKER_DEF\s+Group: "(.*)", Category: "(.*)", Severity: (\w+)', line)
        if m:
            defs.append(m.groups())
            continue
        m = re.match(r'MARKER\s+Time: (\d+), Duration (\d+), Scope: (\S+), Text: "(.*)"$', line)
        if m:
            marks.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    return defs, marks


def archive_files(folder):
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, folder)] = p
    return out


@pytest.fixture
def ring(tmp_path):
    out = tmp_path / "ring"
    earlc.synth("ring", out, ranks=4, iterations=6, delay=400, delay_rank=2)
    return out


def test_copy_leaves_events_and_definitions_byte_for_byte(ring, tmp_path):
    out = tmp_path / "annotated"
    trace = earlc.open(ring)
    result = annotate(trace, out=out)
    original, copy = archive_files(ring), archive_files(out)
    # the archive's own files: the anchor, definitions, event and local definition files
    own = {k for k in original if k == "traces.otf2" or k == "traces.def" or
           k.startswith("traces" + os.sep)}
    assert own and own <= set(copy)
    for k in own:
        assert filecmp.cmp(original[k], copy[k], shallow=False), k
    assert set(copy) - own == {"traces.marker"}
    assert "traces.marker" not in original  # the original was not touched
    assert result.path == str(out / "traces.otf2") and result.written > 0
    # the copy opens to the same events
    again = earlc.open(out)
    assert np.array_equal(again.events.time, trace.events.time)


def test_property_markers_read_back_in_earlc_and_otf2_marker(ring, tmp_path):
    out = tmp_path / "annotated"
    trace = earlc.open(ring)
    report = earlc.analyze(trace, top=5)
    annotate(trace, out=out, properties=["late_sender"], top=5, report=report)
    marks = earlc.open(out).markers
    assert marks.groups() == {GROUP_PREFIX + "Late Sender": 5}
    inst = report.worst["late_sender"]
    window = Window(trace, trace.start_time, trace.start_time + trace.duration_ticks)
    for k, m in enumerate(marks):
        span = window.waiting_spans("late_sender", inst.where[k:k + 1], inst.severity[k:k + 1])
        assert (m.time, m.time + m.duration) == (int(span[2][0]), int(span[3][0]))
        assert m.duration == int(inst.severity[k])  # a late sender waits from its call's start
        assert m.scope == "location"
        assert m.location == int(trace.events.location[inst.where[k]])
        assert m.scope_ref == trace.locations[m.location].id
        send = int(inst.columns["send"][k])
        assert "partner #%d MPI_SEND on rank %d" % (
            send, trace.locations[int(trace.events.location[send])].rank) in m.text
        assert m.category == report.callpath_of(int(inst.where[k]))
    assert marks[0].severity == "high"
    defs, listed_marks = listed(out / "traces.otf2")
    assert {d[0] for d in defs} == {GROUP_PREFIX + "Late Sender"}
    assert [(t, d, txt) for t, d, _, txt in listed_marks] == \
        [(m.time, m.duration, m.text) for m in marks]
    assert all(s == "LOCATION:%d" % m.scope_ref for (_, _, s, _), m in zip(listed_marks, marks))


def test_pattern_markers(ring, tmp_path):
    out = tmp_path / "annotated"
    trace = earlc.open(ring)
    matches = trace.search(LAST_SEND)
    result = annotate(trace, out=out, pattern=LAST_SEND)
    assert result.groups == {GROUP_PREFIX + "pattern Last": len(matches)}
    marks = read_markers(out)
    assert len(marks) == len(matches)
    for m, row in zip(marks, matches.events):
        assert m.time == int(trace.events.time[row].min())
        assert "#%d" % row[0] in m.text


def test_annotating_twice_replaces_only_earlcs_groups(ring):
    anchor = ring / "traces.otf2"
    otf2_marker(anchor, "--add-def", "mine", "hot spot", "LOW")
    otf2_marker(anchor, "--add", "mine", "hot spot", str(earlc.open(ring).start_time + 10),
                "GLOBAL", "written by hand")
    trace = earlc.open(ring)
    first = annotate(trace, in_place=True)
    assert first.kept == 1 and first.replaced == 0
    n = first.written
    second = annotate(trace, in_place=True)
    assert second.kept == 1 and second.replaced == n and second.written == n
    groups = trace.markers.groups()
    assert groups["mine"] == 1 and sum(groups.values()) == n + 1
    mine = [m for m in trace.markers if m.group == "mine"]
    assert mine[0].text == "written by hand" and mine[0].category == "hot spot"
    # a pattern alone replaces earlc's earlier groups; with keep they stay
    third = annotate(trace, in_place=True, pattern=LAST_SEND)
    assert set(trace.markers.groups()) == {"mine", GROUP_PREFIX + "pattern Last"}
    annotate(trace, in_place=True, keep=True)
    assert set(trace.markers.groups()) == {"mine", GROUP_PREFIX + "pattern Last",
                                           GROUP_PREFIX + "Late Sender"}
    assert third.kept == 1
    defs, _ = listed(anchor)
    assert sum(1 for d in defs if d[0] == "mine") == 1


def test_in_place_leaves_events_and_definitions(ring, tmp_path):
    before = tmp_path / "before"
    shutil.copytree(ring, before)
    annotate(earlc.open(ring), in_place=True)
    for k, p in archive_files(before).items():
        assert filecmp.cmp(p, ring / k, shallow=False), k
    assert (ring / "traces.marker").exists()


def test_reference_trace_markers_use_its_timestamps(tmp_path):
    path = reference_trace("pipit-ping-pong")
    trace = earlc.open(path)
    annotate(trace, out=tmp_path / "pp")
    marks = read_markers(tmp_path / "pp")
    assert len(marks)
    for m in marks:  # inside the trace's span, as otf2-marker requires
        assert trace.start_time <= m.time <= m.time + m.duration <= \
            trace.start_time + trace.duration_ticks
    listed(tmp_path / "pp" / "traces.otf2")  # otf2-marker reads it


def test_bad_requests(ring, tmp_path):
    trace = earlc.open(ring)
    with pytest.raises(AnnotateError, match="exists already"):
        annotate(trace, out=ring)
    with pytest.raises(AnnotateError, match="not both"):
        annotate(trace, out=tmp_path / "x", in_place=True)
    with pytest.raises(AnnotateError, match="neither"):
        annotate(trace)
    with pytest.raises(AnnotateError, match="does not exist"):
        annotate(trace, out=tmp_path / "no" / "x")
    with pytest.raises(earlc.PatternError):
        annotate(trace, out=tmp_path / "y", pattern="X := nonsense")
    assert not (tmp_path / "y").exists()  # nothing written before the pattern was checked
    assert read_markers(ring) == []  # nothing written into the original


def test_cli(ring, tmp_path):
    (tmp_path / "last.pat").write_text(LAST_SEND)
    r = run_cli("annotate", ring, "-o", tmp_path / "a", "--pattern", tmp_path / "last.pat",
                "--properties", "late_sender", "--top", "2")
    assert r.returncode == 0, r.stderr
    assert "-> %s" % (tmp_path / "a" / "traces.otf2") in r.stdout
    groups = read_markers(tmp_path / "a").groups()
    assert groups[GROUP_PREFIX + "Late Sender"] == 2 and GROUP_PREFIX + "pattern Last" in groups
    for args, message in ((["-o", tmp_path / "a"], "exists already"),
                          (["--in-place", "-o", tmp_path / "b"], "not both"),
                          ([], "-o OUT"),
                          (["-o", tmp_path / "c", "--properties", "late_sendr"], "late_sendr"),
                          (["-o", tmp_path / "d", "--pattern", "X := nonsense"], "pattern")):
        r = run_cli("annotate", ring, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()
