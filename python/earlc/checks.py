"""Patterns, properties and message races as checks: a rules file says what a trace
must not show, and `earlc check` (or `earlc.check`) says whether it holds.

    [[rule]]
    name = "few late senders"
    property = "late_sender"
    max_percent = 5

    [[rule]]
    pattern = "late_chain.pat"
    max_matches = 0

    result = earlc.check(trace, "rules.toml")
    result.passed, result.failures, print(result.to_text())
    result.to_junit("report.xml")

Rules are read and checked completely (keys, values, property names, pattern syntax)
before the trace is analysed.  The properties of all property rules are evaluated in
one analysis restricted to them (with what they need), each pattern is searched once,
and the races once per wildcard choice.  docs/workflow.md lists every key.
"""
from __future__ import annotations

import difflib
import fnmatch
import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from ._core import Error
from .readable import event_text, location_text, moment_text, ticks_text

#: the keys a rule may have, by kind; `name` and `description` fit every kind
_COMMON = {"name", "description"}
_KEYS = {
    "property": {"property", "max_percent", "max_seconds", "max_occurrences", "max_value",
                 "callpath"},
    "pattern": {"pattern", "pattern_text", "pattern_name", "max_matches"},
    "races": {"races", "max_races", "communicator", "wildcard"},
}
_KIND_OF_KEY = {"property": "property", "pattern": "pattern", "pattern_text": "pattern",
                "races": "races"}
#: how many matches (occurrences, races) a failing rule shows
FIRST = 3


class RulesError(Error, ValueError):
    """A rules file that cannot be used: the message names the file, the rule and
    what to change."""


@dataclass
class Rule:
    """One rule of a rules file: `kind` (property, pattern or races), its `name` for
    the report, its limits (`max_*`), and what it checks."""

    index: int                     #: 1-based position in the file
    kind: str
    name: str
    limits: Dict[str, float]
    property: Optional[str] = None
    callpath: Optional[str] = None
    pattern_text: Optional[str] = None
    pattern_source: Optional[str] = None  #: the pattern file, or "pattern_text"
    pattern_name: Optional[str] = None
    communicator: Optional[str] = None
    wildcard: str = "recorded"
    description: str = ""


@dataclass
class RuleResult:
    """What one rule found: `passed`, the measured `values` (by limit key: percent,
    seconds, occurrences, value, matches, races), a one-line `message`, the first
    matches (`first`, one string each) and the `seconds` it took."""

    rule: Rule
    passed: bool
    values: Dict[str, float]
    message: str
    first: List[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        """The rule's line of the text report."""
        text = "%s  %s: %s" % ("PASS" if self.passed else "FAIL", self.rule.name, self.message)
        if not self.passed and self.first:
            text += "; first: " + "; ".join(self.first)
        return text


class CheckResult:
    """The outcome of every rule of a rules file on one trace."""

    def __init__(self, trace_path: str, rules_path: str, results: List[RuleResult],
                 seconds: float):
        self.trace_path = trace_path
        self.rules_path = rules_path
        self.results = results
        self.seconds = seconds

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> List[RuleResult]:
        return [r for r in self.results if not r.passed]

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return "<earlc.CheckResult %s: %d rules, %d failed>" % (
            self.trace_path, len(self.results), len(self.failures))

    def to_text(self) -> str:
        n_bad = len(self.failures)
        lines = ["earlc check %s: %d rule%s, %s" % (
            self.trace_path, len(self.results), "" if len(self.results) == 1 else "s",
            "all hold" if not n_bad else "%d failed" % n_bad)]
        lines += ["  " + r.line() for r in self.results]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"schema": "earlc-check/1", "trace": self.trace_path, "rules": self.rules_path,
                "passed": self.passed, "seconds": self.seconds,
                "results": [{"index": r.rule.index, "name": r.rule.name, "kind": r.rule.kind,
                             "passed": r.passed, "values": r.values, "limits": r.rule.limits,
                             "message": r.message, "first": r.first, "seconds": r.seconds}
                            for r in self.results]}

    def to_junit(self, path=None) -> str:
        """The result as JUnit XML (one testsuite, one testcase per rule, a
        <failure> for each failing rule), written to path if given; returns the
        XML text."""
        import xml.etree.ElementTree as ET

        suites = ET.Element("testsuites", tests=str(len(self.results)),
                            failures=str(len(self.failures)), time="%.3f" % self.seconds)
        suite = ET.SubElement(suites, "testsuite", name="earlc check %s" % self.trace_path,
                              tests=str(len(self.results)), failures=str(len(self.failures)),
                              errors="0", skipped="0", time="%.3f" % self.seconds)
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="rules",
                      value=self.rules_path)
        for r in self.results:
            case = ET.SubElement(suite, "testcase", classname="earlc.check.%s" % r.rule.kind,
                                 name=r.rule.name, time="%.3f" % r.seconds)
            if not r.passed:
                failure = ET.SubElement(case, "failure", message=r.message, type="RuleFailed")
                failure.text = "\n".join([r.message] + r.first)
            else:
                ET.SubElement(case, "system-out").text = r.message
        ET.indent(suites)
        text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return text


# -- reading rules ----------------------------------------------------------------------

def _number(where: str, key: str, value, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RulesError("%s: %s must be a number, not %r" % (where, key, value))
    if value < 0:
        raise RulesError("%s: %s must be at least 0, not %r" % (where, key, value))
    if integer and value != int(value):
        raise RulesError("%s: %s must be a whole number, not %r" % (where, key, value))
    return value


def _string(where: str, key: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RulesError("%s: %s must be a non-empty string, not %r" % (where, key, value))
    return value


def _suggest(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return " (did you mean '%s'?)" % close[0] if close else ""


def parse_rules(data: dict, source: str = "rules", base: Optional[str] = None,
                catalog=None) -> List[Rule]:
    """Rules from the parsed TOML of a rules file (`source` names it in errors; pattern
    files are found relative to `base`).  Raises RulesError."""
    from .search import PatternError, parse

    unknown_top = sorted(set(data) - {"rule"})
    if unknown_top:
        raise RulesError("%s: unknown key%s %s at the top level (rules are [[rule]] tables)"
                         % (source, "" if len(unknown_top) == 1 else "s", ", ".join(unknown_top)))
    tables = data.get("rule")
    if not isinstance(tables, list) or not tables:
        raise RulesError("%s: no rule: write each rule as a [[rule]] table" % source)
    if catalog is None:
        from .analysis.catalog import assemble

        catalog = assemble()
    by_name = catalog.by_name()
    metrics = sorted(n for n, p in by_name.items() if p.metric)
    rules, names = [], set()
    for k, t in enumerate(tables, 1):
        where = "%s: rule %d" % (source, k)
        if not isinstance(t, dict):
            raise RulesError("%s is not a table: write it as [[rule]]" % where)
        kinds = sorted({_KIND_OF_KEY[key] for key in t if key in _KIND_OF_KEY})
        if len(kinds) != 1:
            raise RulesError("%s: a rule checks one thing: give exactly one of property, "
                             "pattern (or pattern_text) and races%s"
                             % (where, "" if not kinds else " (it gives %s)" % " and ".join(kinds)))
        kind = kinds[0]
        allowed = _KEYS[kind] | _COMMON
        extra = sorted(set(t) - allowed)
        if extra:
            raise RulesError("%s: unknown key %s for a %s rule (keys: %s)%s"
                             % (where, extra[0], kind, ", ".join(sorted(allowed)),
                                _suggest(extra[0], allowed)))
        limits = {key: _number(where, key, t[key], integer=key in (
            "max_occurrences", "max_matches", "max_races", "max_value"))
            for key in t if key.startswith("max_")}
        rule = Rule(index=k, kind=kind, name="", limits=limits,
                    description=str(t.get("description", "")))
        if kind == "property":
            name = _string(where, "property", t["property"])
            if name not in by_name:
                raise RulesError("%s: unknown property '%s'%s; `earlc properties` lists them"
                                 % (where, name, _suggest(name, metrics)))
            p = by_name[name]
            if not p.metric:
                raise RulesError("%s: %s is a compound event, not a metric: name a property "
                                 "that subscribes to it" % (where, name))
            if not limits:
                limits["max_value" if p.unit != "sec" else "max_percent"] = 0
            for key in ("max_percent", "max_seconds"):
                if key in limits and p.unit != "sec":
                    raise RulesError("%s: %s is counted in %s, not in time: use max_value "
                                     "instead of %s" % (where, name, p.unit, key))
            if "max_value" in limits and p.unit == "sec":
                raise RulesError("%s: %s is a time: use max_seconds or max_percent instead of "
                                 "max_value" % (where, name))
            rule.property = name
            if "callpath" in t:
                rule.callpath = _string(where, "callpath", t["callpath"])
            rule.name = t.get("name") or "%s %s" % (name, _limits_text(limits))
        elif kind == "pattern":
            if "pattern" in t and "pattern_text" in t:
                raise RulesError("%s: give pattern (a file) or pattern_text, not both" % where)
            if "pattern" in t:
                file = _string(where, "pattern", t["pattern"])
                path = file if os.path.isabs(file) or base is None else os.path.join(base, file)
                try:
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                except (OSError, UnicodeDecodeError) as exc:
                    raise RulesError("%s: cannot read the pattern file %s: %s"
                                     % (where, path, getattr(exc, "strerror", None) or exc)) \
                        from None
                rule.pattern_source = file
            else:
                text = _string(where, "pattern_text", t["pattern_text"])
                rule.pattern_source = "pattern_text"
            try:
                program = parse(text)
            except PatternError as exc:
                raise RulesError("%s: %s: %s" % (where, rule.pattern_source, exc)) from None
            patterns = list(program.patterns())
            if "pattern_name" in t:
                rule.pattern_name = _string(where, "pattern_name", t["pattern_name"])
                if rule.pattern_name not in patterns:
                    raise RulesError("%s: %s defines no pattern named '%s' (it defines: %s)"
                                     % (where, rule.pattern_source, rule.pattern_name,
                                        ", ".join(patterns)))
            rule.pattern_text = text
            limits.setdefault("max_matches", 0)
            rule.name = t.get("name") or "pattern %s %s" % (
                rule.pattern_name or patterns[-1], _limits_text(limits))
        else:
            if t["races"] is not True:
                raise RulesError("%s: races must be true (a races rule counts message races)"
                                 % where)
            if "communicator" in t:
                rule.communicator = _string(where, "communicator", t["communicator"])
            if "wildcard" in t:
                from .races import parse_wildcard

                rule.wildcard = _string(where, "wildcard", t["wildcard"])
                try:
                    parse_wildcard(rule.wildcard)
                except ValueError as exc:
                    raise RulesError("%s: wildcard: %s" % (where, exc)) from None
            limits.setdefault("max_races", 0)
            rule.name = t.get("name") or "races%s %s" % (
                " on %s" % rule.communicator if rule.communicator else "", _limits_text(limits))
        if "name" in t:
            rule.name = _string(where, "name", t["name"])
        if rule.name in names:
            raise RulesError("%s: another rule is named '%s' already: names must differ (the "
                             "JUnit report lists rules by name)" % (where, rule.name))
        names.add(rule.name)
        rules.append(rule)
    return rules


def _limits_text(limits: Dict[str, float]) -> str:
    parts = []
    for key, v in limits.items():
        what = key[len("max_"):]
        if what == "percent":
            parts.append("at most %g%% of time" % v)
        elif what == "seconds":
            parts.append("at most %g s" % v)
        else:
            parts.append("at most %d %s" % (v, what))
    return ", ".join(parts)


def load_rules(rules, catalog=None) -> tuple:
    """(rules, source) from a rules file path, a TOML text, or a parsed dict.  Raises
    RulesError for a file that cannot be read, bad TOML or a bad rule."""
    import tomllib

    if isinstance(rules, dict):
        return parse_rules(rules, "rules", None, catalog), "rules"
    text, source, base = None, "rules", None
    path = os.fspath(rules)
    if "\n" not in path and ("[[" not in path) and (os.path.exists(path) or path.endswith(".toml")):
        if os.path.isdir(path):
            raise RulesError("%s is a folder, not a rules file" % path)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise RulesError("%s: %s" % (path, exc.strerror or exc)) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RulesError("%s: not a text file (a rules file is TOML)" % path) from None
        source, base = path, os.path.dirname(os.path.abspath(path))
    else:
        text = path
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError("%s: not valid TOML: %s" % (source, exc)) from None
    return parse_rules(data, source, base, catalog), source


# -- checking -------------------------------------------------------------------------

def _check_property(rule: Rule, report, trace) -> RuleResult:
    p = report._by_name[rule.property]
    if rule.callpath:
        value = sum(v for path, v in report.by_callpath(p.name)
                    if fnmatch.fnmatchcase(path, rule.callpath))
    else:
        value = report.total(p.name)
    values = {}
    total_time = report.total_time
    if p.unit == "sec":
        values["seconds"] = value / trace.timer_resolution
        values["seconds_ticks"] = value
        values["percent"] = 100.0 * value / total_time if total_time else 0.0
    else:
        values["value"] = value
    values["occurrences"] = report.occurrences(p.name)
    failed = []
    for key, limit in rule.limits.items():
        got = values[key[len("max_"):]]
        if got > limit:
            failed.append(key)
    where = " in %s" % rule.callpath if rule.callpath else ""
    if p.unit == "sec":
        msg = "%s%s %s, %.3f%% of time (%d occurrence%s)" % (
            p.title, where, ticks_text(trace, value), values["percent"], values["occurrences"],
            "" if values["occurrences"] == 1 else "s")
    else:
        msg = "%s%s %d %s" % (p.title, where, value, p.unit)
    msg += "; " + ", ".join(("over " if key in failed else "within ") + _limits_text({key: v})
                            for key, v in rule.limits.items())
    first = []
    inst = report.worst.get(p.name)
    if inst is not None and failed:
        for k in range(len(inst)):
            w = int(inst.where[k])
            path = report.callpath_of(w)
            if rule.callpath and not fnmatch.fnmatchcase(path, rule.callpath):
                continue
            sev = int(inst.severity[k])
            first.append("%s at %s on %s in %s" % (
                ticks_text(trace, sev) if p.unit == "sec" else "%d" % sev,
                moment_text(trace, int(trace.events.time[w])),
                location_text(trace, int(trace.events.location[w])), path))
            if len(first) == FIRST:
                break
    return RuleResult(rule, not failed, values, msg, first)


def _check_pattern(rule: Rule, trace, threads) -> RuleResult:
    from .search import PatternWarning, search

    limit = int(rule.limits["max_matches"]) + FIRST
    import warnings

    with warnings.catch_warnings():
        # a class that matches no event of this trace gives no match (the rules file
        # serves many traces): m.warnings says so, in the rule's message below
        warnings.simplefilter("ignore", PatternWarning)
        m = search(trace, rule.pattern_text, name=rule.pattern_name, limit=limit,
                   threads=threads)
    n = len(m)
    failed = n > rule.limits["max_matches"]
    msg = "%s%d match%s of %s; %s %s" % (
        "at least " if m.truncated else "", n, "" if n == 1 else "es", m.pattern,
        "over" if failed else "within", _limits_text({"max_matches": rule.limits["max_matches"]}))
    for note in getattr(m, "warnings", ()):
        msg += " (%s)" % note.split(": ", 1)[-1].split(": ", 1)[-1]
    first = []
    if failed:
        for row in m.events[:FIRST]:
            first.append(", ".join("%s=%s" % (c, event_text(trace, int(e)))
                                   for c, e in zip(m.columns, row.tolist())))
    return RuleResult(rule, not failed, {"matches": n}, msg, first)


def _communicator_refs(trace, name: str) -> set:
    """Communicator refs named `name` ('world' names MPI_COMM_WORLD too)."""
    wanted = {name, name.lower(), "mpi_comm_" + name.lower()}
    refs = {c.id for c in trace.communicators
            if c.name in wanted or (c.name or "").lower() in wanted}
    if not refs:
        named = sorted({c.name for c in trace.communicators if c.name})
        from .cliargs import UsageError

        raise UsageError("%s has no communicator named '%s' (it has: %s)"
                         % (trace.path, name, ", ".join(named) or "no named one"))
    return refs


def _check_races(rule: Rule, found, trace) -> RuleResult:
    import numpy as np

    recv = found.recv
    n_alt = found.n_alternatives
    racing = n_alt > 0
    if rule.communicator:
        refs = _communicator_refs(trace, rule.communicator)
        ev = trace.events
        comm = ev.messages.comm[ev.ref_of(recv)] if len(recv) else np.empty(0, np.int64)
        racing &= np.isin(comm, list(refs))
    n = int(racing.sum())
    failed = n > rule.limits["max_races"]
    msg = "%d wildcard receive%s with alternatives%s (%s); %s %s" % (
        n, "" if n == 1 else "s", " on %s" % rule.communicator if rule.communicator else "",
        "wildcards: " + found.assumption["wildcard"], "over" if failed else "within",
        _limits_text({"max_races": rule.limits["max_races"]}))
    first = []
    if failed:
        for k in np.nonzero(racing)[0][:FIRST].tolist():
            first.append("%s could take %d other send%s" % (
                event_text(trace, int(recv[k])), int(n_alt[k]), "" if n_alt[k] == 1 else "s"))
    return RuleResult(rule, not failed, {"races": n}, msg, first)


def check(trace, rules, progress=None, threads: Optional[int] = None, plugins=(),
          catalog=None) -> CheckResult:
    """Check the rules (a rules file, its TOML text, a parsed dict, or a list of Rule)
    on trace (an earlc.Trace, a view of one, or a path).  Raises RulesError for bad
    rules (before the trace is read when given as a path)."""
    from . import open as open_trace
    from .analysis import analyze
    from .races import parse_wildcard, races

    if isinstance(rules, (list, tuple)) and all(isinstance(r, Rule) for r in rules):
        rule_list, source = list(rules), "rules"
    else:
        if catalog is None and plugins:
            from .analysis.catalog import assemble

            catalog = assemble(plugins=list(plugins))
        rule_list, source = load_rules(rules, catalog)
    if isinstance(trace, (str, os.PathLike)):
        trace = open_trace(trace, progress=progress)
    start = time.perf_counter()
    results: List[Optional[RuleResult]] = [None] * len(rule_list)
    prop_rules = [(k, r) for k, r in enumerate(rule_list) if r.kind == "property"]
    if prop_rules:
        t0 = time.perf_counter()
        names = sorted({r.property for _, r in prop_rules})
        report = analyze(trace, properties=names, top=max(FIRST * 4, 10), progress=progress,
                         plugins=plugins)
        share = (time.perf_counter() - t0) / len(prop_rules)
        for k, r in prop_rules:
            results[k] = _check_property(r, report, trace)
            results[k].seconds = share
    race_results = {}
    for k, r in enumerate(rule_list):
        t0 = time.perf_counter()
        if r.kind == "pattern":
            results[k] = _check_pattern(r, trace, threads)
        elif r.kind == "races":
            if r.wildcard not in race_results:
                try:
                    race_results[r.wildcard] = races(trace, wildcard=parse_wildcard(r.wildcard),
                                                     progress=progress)
                except ValueError as exc:
                    raise RulesError("%s: rule %d: %s" % (source, r.index, exc)) from None
            results[k] = _check_races(r, race_results[r.wildcard], trace)
        else:
            continue
        results[k].seconds = time.perf_counter() - t0
    return CheckResult(getattr(trace, "path", str(trace)), source, results,
                       time.perf_counter() - start)


__all__ = ["check", "load_rules", "parse_rules", "Rule", "RuleResult", "CheckResult",
           "RulesError"]
