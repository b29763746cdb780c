"""Waiting calls the wait-state properties cannot examine, said in counted
warnings: a report without wait states must mean there were none, not that the
trace lacks what they are computed from.

A wait state is computed from records inside the waiting call: an MPI
collective from its MPI_COLLECTIVE_BEGIN/END records, an OpenMP barrier from its
thread team's instance (which needs the team's fork, join and team records), a
lock contention from the lock acquire record.  Traces recorded otherwise lack
them: through OMPT alone (ENTER and LEAVE of barriers and critical sections,
nothing else), by a tool that writes no collective records, or cut.  The calls
are then in the time metrics (Barrier, Collective, Critical and locks) but in no
wait state, and the wait states read 0.  Each check below counts such calls and
their time, for the properties that need them; the report lists them among its
warnings (codes in docs/report-schema.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import numpy as np

from . import regions as rc
from .reductions import ids_in


@dataclass
class Unanalysed:
    """Waiting calls of one kind that hold none of the records their wait
    states are computed from."""

    code: str
    calls: int            #: how many
    ticks: int            #: their time (calls never left count to the trace's end)
    event: int            #: the first one's ENTER
    location: int         #: its location
    properties: tuple     #: the wait states that cannot see them
    detail: str


@dataclass(frozen=True)
class _Check:
    code: str
    what: str             #: the calls, for the message ("OpenMP barrier calls")
    missing: str          #: what they lack, for the message
    properties: tuple     #: the wait states computed from those records

    def table(self, ctx) -> np.ndarray:
        """The region table of the waiting calls."""
        raise NotImplementedError

    def records(self, ctx) -> int:
        """How many records there are (free or nearly): when there are as many as
        calls, every call has its own, as MPI and OpenMP record them."""
        raise NotImplementedError

    def covered(self, ctx) -> np.ndarray:
        """The ENTERs of the calls that hold a record (sorted)."""
        raise NotImplementedError


def _class_table(ctx, *classes) -> np.ndarray:
    table = np.isin(ctx.region_class, [rc.CLASS_CODE[c] for c in classes])
    table[-1] = False
    return table


def _sorted_enters(ctx, events: np.ndarray) -> np.ndarray:
    return np.sort(ctx.enter_of(events))  # a LEAVE's enterptr is its own ENTER


class _OmpBarriers(_Check):
    def table(self, ctx):
        return _class_table(ctx, "omp_barrier_explicit", "omp_barrier_implicit")

    def records(self, ctx):
        return len(ctx.collective_members("omp_barrier")[1])

    def covered(self, ctx):
        return _sorted_enters(ctx, ctx.collective_members("omp_barrier")[1])


class _LockCalls(_Check):
    def table(self, ctx):
        # the calls that acquire: a critical construct's waiting region (not its
        # body, the "sblock"), omp_set_lock and omp_set_nest_lock
        table = ctx.regions_named("omp_set_lock", "omp_set_nest_lock")
        for r in ctx.trace.regions:
            if r.paradigm == "OPENMP" and r.role == "CRITICAL" and r.id < len(table) - 1:
                table[r.id] = True
        return table

    def records(self, ctx):
        return ctx.count_of_kind("THREAD_ACQUIRE_LOCK", "OMP_ACQUIRE_LOCK")

    def covered(self, ctx):
        return _sorted_enters(ctx, ctx.events_of_kind("THREAD_ACQUIRE_LOCK", "OMP_ACQUIRE_LOCK"))


class _MpiCollectives(_Check):
    def table(self, ctx):
        return _class_table(ctx, "mpi_barrier", "mpi_collective")

    def records(self, ctx):
        return ctx.count_of_kind("MPI_COLLECTIVE_END")

    def covered(self, ctx):
        return _sorted_enters(ctx, ctx.events_of_kind("MPI_COLLECTIVE_END"))


def _visits(ctx, table: np.ndarray) -> int:
    """Calls of the regions of a table, from the call tree's visits (no pass
    over the events)."""
    ct = ctx.calltree
    region = ct.region[ct.row_cnode.astype(np.int64)].astype(np.int64)
    region = np.minimum(region, len(table) - 1)  # the program's root: no region
    return int(ct.row_visits[table[region]].sum())


CHECKS = (
    _OmpBarriers("omp_barrier_without_team", "OpenMP barrier calls",
                 "belong to no barrier instance of a thread team: the trace has no thread "
                 "team records (THREAD_FORK/JOIN, THREAD_TEAM_BEGIN/END or OMP_FORK/JOIN; "
                 "traces recorded through OMPT alone have none)",
                 ("omp_barrier_wait_explicit", "omp_barrier_wait_implicit")),
    _LockCalls("lock_call_without_records", "OpenMP critical and lock calls",
               "hold no lock acquire record (THREAD_ACQUIRE_LOCK or OMP_ACQUIRE_LOCK)",
               ("lock_contention", "lock_contention_critical", "lock_contention_api")),
    _MpiCollectives("collective_without_records", "MPI collective calls",
                    "hold no MPI_COLLECTIVE_END record",
                    ("wait_at_barrier", "barrier_completion", "wait_at_nxn", "nxn_completion",
                     "late_broadcast", "early_reduce", "early_scan")),
)


def describe(code: str, calls: int, ticks: int, properties, resolution: int) -> str:
    """The detail text of an Unanalysed."""
    check = next(c for c in CHECKS if c.code == code)
    return ("%d %s (%.6g s) %s, so %s cannot be computed for them"
            % (calls, check.what, ticks / resolution if resolution else 0.0, check.missing,
               ", ".join(properties)))


def unanalysed_waits(ctx, evaluated: Sequence[str], own=None,
                     last_time: int = None) -> List[Unanalysed]:
    """The checks of the properties evaluated (names) whose calls lack their
    records on this trace.  own (a bool per location): the calls of those
    locations only (a part of a trace analysed in parts); last_time: where the
    calls never left end (default: the trace's last event)."""
    out = []
    names = set(evaluated)
    for check in CHECKS:
        props = tuple(p for p in check.properties if p in names)
        if not props:
            continue
        table = check.table(ctx)
        if not table.any() or check.records(ctx) >= _visits(ctx, table):
            continue  # no such calls, or a record for each (the usual case: no pass)
        calls = ctx.enters_of(table)  # ascending
        missing = calls[~ids_in(calls, check.covered(ctx))]
        # a call inside another of the same kind (OMPT nests "wait_barrier" in
        # "barrier") is counted once, with the outer one
        missing = missing[~ids_in(ctx.enter_of(missing), missing)]
        if own is not None:
            missing = missing[own[ctx.events.location[missing]]]
        if not len(missing):
            continue
        leave = ctx.leave_of(missing)
        end = np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)),
                       int(ctx.events.time[-1]) if last_time is None else last_time)
        ticks = int((end - ctx.time_of(missing)).sum())
        first = int(missing[0])
        out.append(Unanalysed(check.code, len(missing), ticks, first,
                              int(ctx.events.location[first]), props,
                              describe(check.code, len(missing), ticks, props,
                                       ctx.trace.timer_resolution)))
    return out
