"""`earlc check` and earlc.checks: rules files, their results on generated traces whose
severities are known by construction, the exit statuses and the JUnit report."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT

import earlc
from earlc.checks import RulesError, check, load_rules

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
LATE_PATTERN = """Send := ["", "MPI_*SEND", ""];
Send $s, *all;
Last := $s !--> *all;
"""


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "earlc", *map(str, args)], capture_output=True,
                          text=True, env=ENV, cwd=cwd)


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    """A ring whose rank 2 computes 400 ticks longer every iteration: late senders
    of known total (expected.json)."""
    out = tmp_path_factory.mktemp("check") / "ring"
    r = earlc.synth("ring", out, ranks=4, iterations=6, delay=400, delay_rank=2)
    return out, r.expected()


@pytest.fixture(scope="module")
def master_worker(tmp_path_factory):
    """The master receives from MPI_ANY_SOURCE: message races (OTF2 does not record
    the wildcard: the rules name the receives to take as wildcards)."""
    out = tmp_path_factory.mktemp("check") / "mw"
    earlc.synth("master-worker", out, ranks=4, iterations=3, any_source=1)
    return out


def write(tmp_path, text, name="rules.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def late_sender_percent(expected):
    props = expected["properties"]
    return 100.0 * props["late_sender"]["total"] / props["time"]["total"]


# -- results ----------------------------------------------------------------------------

def test_property_limits_follow_the_known_severity(ring, tmp_path):
    path, expected = ring
    pct = late_sender_percent(expected)
    seconds = expected["properties"]["late_sender"]["total"] / 1e9
    assert pct > 1
    rules = write(tmp_path, """
[[rule]]
name = "just above"
property = "late_sender"
max_percent = %r

[[rule]]
name = "just below"
property = "late_sender"
max_percent = %r

[[rule]]
name = "seconds below"
property = "late_sender"
max_seconds = %r
""" % (pct * 1.001, pct * 0.999, seconds * 0.999))
    result = check(earlc.open(path), rules)
    by = {r.rule.name: r for r in result.results}
    assert by["just above"].passed and not by["just below"].passed
    assert not by["seconds below"].passed
    assert by["just below"].values["percent"] == pytest.approx(pct, rel=1e-12)
    assert by["seconds below"].values["seconds"] == pytest.approx(seconds, rel=1e-12)
    assert by["just below"].values["occurrences"] > 0
    # the first occurrences of a failing rule, worst first
    assert len(by["just below"].first) == 3 and "MPI_Recv" in by["just below"].first[0]
    assert not result.passed and [r.rule.name for r in result.failures] == ["just below",
                                                                             "seconds below"]


def test_callpath_and_count_limits(ring, tmp_path):
    path, expected = ring
    n = expected["properties"]["late_sender"]["instances"] \
        if "instances" in expected["properties"]["late_sender"] else None
    rules = write(tmp_path, """
[[rule]]
name = "occurrences"
property = "late_sender"
max_occurrences = 0

[[rule]]
name = "elsewhere"
property = "late_sender"
callpath = "*/compute"
max_seconds = 0

[[rule]]
name = "messages"
property = "messages_sent"
max_value = 1000000
""")
    result = check(earlc.open(path), rules)
    by = {r.rule.name: r for r in result.results}
    assert not by["occurrences"].passed
    if n is not None:
        assert by["occurrences"].values["occurrences"] == n
    assert by["elsewhere"].passed and by["elsewhere"].values["seconds"] == 0
    assert by["messages"].passed and by["messages"].values["value"] == 24  # 4 ranks x 6


def test_pattern_rule_counts_the_search(ring, tmp_path):
    path, _ = ring
    (tmp_path / "late.pat").write_text(LATE_PATTERN)
    trace = earlc.open(path)
    n = len(trace.search(LATE_PATTERN))
    rules = write(tmp_path, """
[[rule]]
pattern = "late.pat"
max_matches = %d

[[rule]]
name = "none allowed"
pattern_text = '''%s'''
""" % (n, LATE_PATTERN))
    result = check(trace, rules)
    assert result.results[0].passed and result.results[0].values["matches"] == n
    bad = result.results[1]
    assert not bad.passed and bad.values["matches"] == min(n, 3) and "at least" in bad.message
    assert bad.first[0].startswith("s=#%d " % trace.search(LATE_PATTERN).events[0, 0])


def test_races_rule(master_worker, ring, tmp_path):
    rules = write(tmp_path, """
[[rule]]
races = true
communicator = "world"
wildcard = "all"

[[rule]]
name = "some allowed"
races = true
wildcard = "master"
max_races = 1000
""")
    result = check(earlc.open(master_worker), rules)
    assert not result.results[0].passed and result.results[0].values["races"] > 0
    assert result.results[1].passed
    # a ring records no wildcard receive: no race
    assert check(earlc.open(ring[0]), write(tmp_path, '[[rule]]\nraces = true\n'
                                                      'wildcard = "all"\n', "r2.toml")).passed


def test_junit_report(ring, tmp_path):
    path, expected = ring
    pct = late_sender_percent(expected)
    rules = write(tmp_path, """
[[rule]]
name = "fails"
property = "late_sender"
max_percent = %r

[[rule]]
name = "holds"
property = "wait_at_barrier"
max_seconds = 1
""" % (pct / 2))
    result = check(earlc.open(path), rules)
    result.to_junit(tmp_path / "j.xml")
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["fails", "holds"]
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None
    assert "Late Sender" in cases[0].find("failure").get("message")


# -- bad rules --------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('[[rule]]\nproperty = "late_sendr"\n', "did you mean 'late_sender'"),
    ('[[rule]]\nproperty = "p2p_messages"\n', "compound event"),
    ('[[rule]]\nproperty = "late_sender"\nmax_procent = 5\n', "unknown key max_procent"),
    ('[[rule]]\nproperty = "late_sender"\npattern_text = "X := [] $a;"\n', "exactly one"),
    ('[[rule]]\nmax_percent = 5\n', "exactly one"),
    ('[[rule]]\nproperty = "visits"\nmax_seconds = 1\n', "use max_value"),
    ('[[rule]]\nproperty = "late_sender"\nmax_percent = -1\n', "at least 0"),
    ('[[rule]]\nproperty = "late_sender"\nmax_percent = "5"\n', "must be a number"),
    ('[[rule]]\npattern = "nosuch.pat"\n', "cannot read the pattern file"),
    ('[[rule]]\npattern_text = "S := [\\"\\", \\"MPI_SND\\", \\"\\"]; S $a;"\n', "MPI_SND"),
    ('[[rule]]\npattern_text = """%s"""\npattern_name = "Nope"\n' % LATE_PATTERN, "no pattern named"),
    ('[[rule]]\nraces = false\n', "races must be true"),
    ('[[rule]]\nraces = true\nwildcard = ""\n', "wildcard must be a non-empty string"),
    ('[[rule]]\nname="a"\nraces = true\n[[rule]]\nname="a"\nraces=true\n', "named 'a' already"),
    ('rules = 3\n', "unknown key rules"),
    ('', "no rule"),
    ('[[rule]\n', "not valid TOML"),
])
def test_bad_rules_are_named(tmp_path, text, message):
    with pytest.raises(RulesError, match=None) as info:
        load_rules(write(tmp_path, text))
    assert message in str(info.value)
    assert "rules.toml" in str(info.value)


def test_bad_rules_exit_2_before_the_trace_is_read(tmp_path):
    rules = write(tmp_path, '[[rule]]\nproperty = "late_sendr"\n')
    # the trace does not even exist: the rules are reported first
    r = run_cli("check", tmp_path / "no-trace", rules)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "late_sendr" in lines[0] and "Traceback" not in r.stderr


# -- the command ------------------------------------------------------------------------

def test_exit_status_and_outputs(ring, tmp_path):
    path, expected = ring
    pct = late_sender_percent(expected)
    holds = write(tmp_path, '[[rule]]\nproperty = "late_sender"\nmax_percent = %r\n'
                  % (pct * 2), "holds.toml")
    fails = write(tmp_path, '[[rule]]\nproperty = "late_sender"\nmax_percent = %r\n'
                  % (pct / 2), "fails.toml")
    r = run_cli("check", path, holds)
    assert r.returncode == 0, r.stderr
    assert "1 rule, all hold" in r.stdout and "PASS" in r.stdout
    r = run_cli("check", path, fails, "--junit", tmp_path / "out.xml", "--format", "json")
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["schema"] == "earlc-check/1" and data["passed"] is False
    assert data["results"][0]["values"]["percent"] == pytest.approx(pct)
    assert ET.parse(tmp_path / "out.xml").getroot().get("failures") == "1"
    r = run_cli("check", path, fails)
    fail_lines = [l for l in r.stdout.splitlines() if "FAIL" in l]
    assert len(fail_lines) == 1 and "first:" in fail_lines[0]


def test_usage_errors_exit_2(ring, tmp_path):
    path, _ = ring
    rules = write(tmp_path, '[[rule]]\nraces = true\ncommunicator = "nosuch"\nwildcard = "all"\n')
    r = run_cli("check", path, rules)
    assert r.returncode == 2 and "no communicator named 'nosuch'" in r.stderr
    r = run_cli("check", path, tmp_path / "missing.toml")
    assert r.returncode == 2 and "does not exist" in r.stderr
    # a trace that records no wildcard: the races rule needs a choice
    r = run_cli("check", path, write(tmp_path, '[[rule]]\nraces = true\n', "r.toml"))
    assert r.returncode == 2 and "wildcard" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("check", path, rules, "--junit", tmp_path / "nofolder" / "x.xml")
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_check_needs_only_the_named_properties(ring, tmp_path, monkeypatch):
    """One analysis restricted to the rules' properties (the benchmark's 1.2x rests on it)."""
    import earlc.analysis as analysis

    seen = []
    real = analysis.analyze

    def spy(trace, properties=None, **kw):
        seen.append(properties)
        return real(trace, properties=properties, **kw)

    monkeypatch.setattr(analysis, "analyze", spy)
    rules = write(tmp_path, '[[rule]]\nproperty = "late_sender"\n[[rule]]\nproperty = '
                            '"wait_at_barrier"\n[[rule]]\nname = "x"\nproperty = "late_sender"'
                            '\nmax_seconds = 1\n')
    check(earlc.open(ring[0]), rules)
    assert seen == [["late_sender", "wait_at_barrier"]]


def test_a_class_matching_nothing_in_this_trace_is_no_match(ring, tmp_path):
    rules = write(tmp_path, """
[[rule]]
name = "no isend"
pattern_text = '''C := ["", "MPI_ISEND", ""]; C $a; X := $a;'''
""")
    result = check(earlc.open(ring[0]), rules)
    assert result.passed and result.results[0].values["matches"] == 0
    assert "matches no event of this trace" in result.results[0].message
