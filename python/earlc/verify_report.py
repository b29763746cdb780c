"""The reports of `earlc verify`: text for people, JSON (the schema is in
docs/verify.md, and DIR/verify.json holds it after every verification), and a
DataFrame with one row per run.  Failing runs come first, each with the
decisions that lead to it, where the flipped operations are in the program,
where the processes stopped, and the files to look at and replay."""
from __future__ import annotations

import json
import os
import shlex
from collections import Counter
from typing import List


#: every outcome of a run, in the order the reports list them
OUTCOMES = ("completed", "deadlock", "abort", "signal", "exit", "output", "unforceable")

#: forced decisions shown per failing run in the text report
SHOWN_DECISIONS = 12


def _ordered(v) -> list:
    """Failing runs first, then the others, each in run order."""
    return sorted(v.runs, key=lambda r: (not r.failed, r.number))


def _flip_text(f) -> str:
    took = " (took %d)" % f.took if f.took is not None else ""
    return "rank %d wildcard #%d from %d%s" % (f.rank, f.index, f.source, took)


def _how(run) -> str:
    """How a run ended, in a few words."""
    if run.outcome == "deadlock":
        return "deadlock: ended by the timeout after %.1f s" % run.seconds
    if run.outcome == "abort":
        why = [r for g in (run.stopped or {}).get("groups", []) for r in g["reasons"]]
        return "abort: " + (why[0] if why else "MPI_Abort was called")
    if run.outcome == "signal":
        return "signal: a process was killed by signal %d" % run.signal
    if run.outcome == "exit":
        why = [r for g in (run.stopped or {}).get("groups", []) for r in g["reasons"]]
        return "exit: " + (why[0] if why else "exit status %d" % run.status)
    if run.outcome == "output":
        return "output: its standard output differs from run 0's"
    if run.outcome == "unforceable":
        return "unforceable: the schedule could not be applied"
    return "completed"


def _stopped_dict(stop) -> dict:
    if not stop:
        return None
    return {"incomplete": stop["incomplete"],
            "groups": [{"ranks": g["ranks"], "call": g["call"], "callpath": g["callpath"],
                        "call_site": g["call_site"], "reasons": g["reasons"]}
                       for g in stop["groups"]]}


def run_dict(run) -> dict:
    return {
        "run": run.number, "parent": run.parent, "outcome": run.outcome, "failed": run.failed,
        "exit_status": run.status, "signal": run.signal, "seconds": round(run.seconds, 6),
        "forced": [f.to_dict() for f in run.forced],
        "flipped": [f.to_dict() for f in run.flips],
        "decisions": len(run.decisions),
        "schedule": run.schedule, "archive": run.archive, "output": run.output,
        "output_differs": run.output_differs,
        "stopped": _stopped_dict(run.stopped),
        "not_applied": [{"decision": f.to_dict(), "why": why} for f, why in run.not_applied],
    }


def report_dict(v) -> dict:
    first = v.runs[0]
    outcomes = Counter(r.outcome for r in v.runs)
    out = {
        "command": v.command, "folder": v.folder, "status": v.status,
        "options": {"timeout": v.timeout, "max_runs": v.max_runs, "bound": v.bound,
                    "compare_output": v.compare_output, "replay": v.replay},
        "summary": {"runs": len(v.runs), "failed": len(v.failed),
                    "outcomes": {o: outcomes[o] for o in OUTCOMES if outcomes[o]},
                    "wildcard_operations": sum(first.made.values()),
                    "alternatives": sum(len(d.alternatives) for d in first.decisions),
                    "cut_by_bound": v.cut_bound, "cut_by_max_runs": v.cut_max_runs},
        "runs": [run_dict(r) for r in _ordered(v)],
        "unforceable": [{"run": r.number, "decision": f.to_dict(), "why": why}
                        for r, f, why in v.unforceable],
    }
    if v.note:
        out["note"] = v.note
    return out


def write_report(v) -> None:
    """DIR/verify.json: the JSON report, beside the runs."""
    with open(os.path.join(v.folder, "verify.json"), "w") as f:
        json.dump(report_dict(v), f, indent=1)
        f.write("\n")


def runs_dataframe(v):
    """One row per run, in run order: run, parent, outcome, failed, status
    (exit status), signal, seconds, flips, forced (decisions forced), decisions
    (decisions made), explored (the decision it flipped, as text), schedule,
    archive, not_applied (why its schedule could not be followed, or "")."""
    import pandas as pd

    rows = []
    for r in v.runs:
        rows.append({
            "run": r.number, "parent": -1 if r.parent is None else r.parent,
            "outcome": r.outcome, "failed": r.failed, "status": r.status,
            "signal": -1 if r.signal is None else r.signal, "seconds": r.seconds,
            "flips": len(r.flips), "forced": len(r.forced), "decisions": len(r.decisions),
            "explored": _flip_text(r.flip) if r.flip else "",
            "schedule": r.schedule, "archive": r.archive or "",
            "not_applied": "; ".join(why for _, why in r.not_applied)})
    return pd.DataFrame(rows, columns=["run", "parent", "outcome", "failed", "status", "signal",
                                       "seconds", "flips", "forced", "decisions", "explored",
                                       "schedule", "archive", "not_applied"])


def _indent(text: str, by: str = "    ") -> List[str]:
    return [by + line for line in text.splitlines()]


def report_text(v) -> str:
    first = v.runs[0]
    command = " ".join(shlex.quote(a) for a in v.command)
    failed = v.failed
    unforced = len(v.unforceable)
    verdict = "%d failed" % len(failed) if failed else (
        "every run completed" if not unforced and len(v.runs) == sum(
            r.outcome == "completed" for r in v.runs) else "none failed")
    if unforced:
        verdict += " (%d alternative%s could not be forced)" % (unforced,
                                                                "" if unforced == 1 else "s")
    lines = ["earlc verify: %d run%s of %s: %s" % (
        len(v.runs), "" if len(v.runs) == 1 else "s", command, verdict)]
    if v.replay:
        lines.append("  replayed %s" % v.replay)
    else:
        lines.append("  %d wildcard operation%s in the first run, %d alternative%s to them"
                     % (sum(first.made.values()), "" if sum(first.made.values()) == 1 else "s",
                        sum(len(d.alternatives) for d in first.decisions),
                        "" if sum(len(d.alternatives) for d in first.decisions) == 1 else "s"))
    lines.append("  runs in %s" % v.folder)
    if v.note:
        lines.append("  " + v.note)
    for r in failed:
        lines.append("")
        lines.append("FAILED run %d: %s" % (r.number, _how(r)))
        if r.forced:
            lines.append("  decisions forced (* flipped against the run it came from):")
            shown = [f for f in r.forced if f.flipped] if len(r.forced) > SHOWN_DECISIONS \
                else r.forced
            for f in shown:
                where = " at %s" % f.site if f.site else ""
                took = ", took %d in run %d" % (f.took, r.parent) \
                    if f.flipped and f.took is not None and r.parent is not None else ""
                lines.append("    %s rank %d wildcard #%d (%s%s) from %d%s"
                             % ("*" if f.flipped else " ", f.rank, f.index, f.call, where,
                                f.source, took))
            if len(shown) < len(r.forced):
                lines.append("      and %d more as they were (all in the schedule)"
                             % (len(r.forced) - len(shown)))
        else:
            lines.append("  with no decision forced: the program's own first run")
        if r.output_differs:
            lines.append("  its output against run 0's:")
            lines += _indent("\n".join(r.output_differs[:SHOWN_DECISIONS]))
        if r.stopped_text:
            lines += _indent(r.stopped_text, "  ")
        lines.append("  schedule: %s" % r.schedule)
        lines.append("  replay:   earlc verify --replay %s -- %s" % (shlex.quote(r.schedule),
                                                                   command))
        if r.archive:
            lines.append("  archive:  %s" % r.archive)
    lines.append("")
    lines.append("Runs (failing first):")
    lines.append("  %4s %6s  %-12s %5s %8s  %s" % ("run", "parent", "outcome", "flips", "seconds",
                                                   "explored"))
    for r in _ordered(v):
        lines.append("  %4d %6s  %-12s %5d %8.2f  %s"
                     % (r.number, "-" if r.parent is None else r.parent, r.outcome, len(r.flips),
                        r.seconds, _flip_text(r.flip) if r.flip else
                        ("(the schedule)" if r.forced else "(free)")))
    if v.unforceable:
        lines.append("")
        lines.append("Alternatives that could not be forced:")
        for r, f, why in v.unforceable:
            lines.append("  run %d: %s: %s" % (r.number, _flip_text(f), why))
    if v.cut_bound or v.cut_max_runs:
        lines.append("")
    if v.cut_bound:
        lines.append("--bound %d left %d alternative%s unexplored (runs with more flips)"
                     % (v.bound, v.cut_bound, "" if v.cut_bound == 1 else "s"))
    if v.cut_max_runs:
        lines.append("--max-runs %d stopped the search with %d alternative%s unexplored, and "
                     "what lies beyond them" % (v.max_runs, v.cut_max_runs,
                                                "" if v.cut_max_runs == 1 else "s"))
    return "\n".join(lines)

