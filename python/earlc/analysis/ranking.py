"""What each metric measures, and the one ranking of inefficiencies that every
output shows (the text report, the JSON report, the HTML page, the pictures).

A metric measures one of four things (Property.measures):

    inefficiency  time lost: wait states, idle threads, thread management
    time          where the time goes: Time, Execution, Computation, MPI, ...
    cause         lost time charged to what caused it (delay costs of the root
                  causes): a second view of an inefficiency's time, not more of it
    quantity      counts and bytes

Only inefficiencies are ranked as "most severe" and drawn in red; a plain time
of 95% (Computation) says where the program runs, not that it wastes anything.
The ranking orders them by their total severity, largest first, ties in the
metric tree's order; a child (Late Sender, wrong order) is ranked beside its
parent (Late Sender), as both are wait states a user looks up.
"""
from __future__ import annotations

from typing import List

from .property import MEASURES, Property


def measures_of(p: Property) -> str:
    """What p measures: its declaration, else decided from how it computes its
    values: a time made of occurrences (`detect`) is an inefficiency, one from
    region classes or `totals` is a plain time, counts and bytes a quantity."""
    declared = getattr(p, "measures", None)
    if declared is not None:
        return declared
    if p.unit != "sec":
        return "quantity"
    if p.region_class is not None or type(p).totals is not Property.totals:
        return "time"
    return "inefficiency"


def is_inefficiency(p: Property) -> bool:
    return measures_of(p) == "inefficiency"


def ranking(report) -> List[Property]:
    """The inefficiencies of a report with a non-zero total, most severe first
    (ties in the order of the metric tree)."""
    found = [(k, p) for k, p in enumerate(report.properties)
             if p.metric and is_inefficiency(p) and report.total(p.name) > 0]
    found.sort(key=lambda kp: (-report.total(kp[1].name), kp[0]))
    return [p for _, p in found]


__all__ = ["MEASURES", "measures_of", "is_inefficiency", "ranking"]
