"""The HTML page of a trace analysed in parts one after another (inturn.py):
the page of the analysis in one piece, byte for byte, within the budget.

The page of a report made in parts is assembled by parts/page.py from each
part's share (its locations' rows, messages and wait states) through a few
small collective steps.  Under MPI the parts are alive at once; here one
part is alive at a time, so the page runs unchanged through the step
exchange of steps.py, as the root causes in turn do: each run of the parts
reads a part again, analyses it again (the page reads its wait states and
call paths), takes the steps already complete from the scratch folder,
writes its data for the next one and is suspended.  The run in which the
first part is no longer suspended writes the page; the others need not run
again.  So the page costs one run of pass 2 per collective step of page.py
(PAGE_STEPS on the generated programs, more when the levels of detail are
painted in several batches), after the runs of the analysis itself.

What page.py asks of the whole trace by steps that count events (the whole
trace's ids of the events a page names, the times at ids around the listed
occurrences) needs no step here: the timestamps of every location were
spilled by pass 1 (spill.LocationTimes) and are counted directly.

Memory: a part and its analysis, what the others sent it in one step, and on
the first part, the page's own holdings (page.py: the levels, instances,
messages and wait states it keeps, and 40 bytes per message of the whole
trace, twice while they arrive), which `check_page_room` compares with the
budget before the messages are gathered.  Threading: the driver's thread only.  Determinism: the steps'
answers are in part order, the page does not depend on the partition.
"""
from __future__ import annotations

import copy

import numpy as np

from .budget import BudgetError, format_size
from .calltree import path_keys
from .page import refuse_unsupported, write_page
from .steps import StepExchange, Steps, StepsMisaligned, StepsSuspended

#: the collective steps page.py takes on the generated programs (a stopped run
#: takes one more, each further batch of levels of detail three more)
PAGE_STEPS = 16
#: the first part's holdings for the page besides its part and the messages:
#: the page's data and text, PAGE_BASE plus PAGE_PER_EVENT per event of the
#: trace, at most PAGE_FIXED (the page itself stays under about 30 MB; its
#: levels while they are painted, its base64 and its text while it is written)
PAGE_BASE = 8 << 20
PAGE_PER_EVENT = 40
PAGE_FIXED = 96 << 20
#: bytes per message of the whole trace the first part holds for the bundles:
#: its record (40 bytes), and the record as it arrived while it is read
MESSAGE_BYTES = 80
#: what the plan assumes before the messages are counted: a send per this many
#: events (check_page_room checks the real count before they are gathered)
EVENTS_PER_SEND = 10


def page_data(events: int) -> int:
    """The first part's holdings for the page, the messages aside."""
    return int(min(PAGE_FIXED, PAGE_BASE + PAGE_PER_EVENT * events))


def page_reserve(events: int) -> int:
    """Room to plan the parts with, for the page: its data, and the messages
    as the plan assumes them."""
    return page_data(events) + MESSAGE_BYTES * int(events) // EVENTS_PER_SEND


def with_page(model, path):
    """(the memory model, the room it leaves for the page) of an analysis of
    the trace at path whose page is written in turn: every part planned with
    room for the page's holdings (the first part holds them; planning all
    alike keeps the partition the analysis's own)."""
    import dataclasses

    from .. import _core
    from .inturn import declared_events

    events = int(declared_events(path, _core.Reading(str(path)).definitions()).sum())
    reserve = page_reserve(events)
    return dataclasses.replace(model, fixed=model.fixed + reserve), reserve


def write_page_in_turn(report, path=None, top: int = 5, rows: int = 5, pictures: bool = True,
                       matches=None, timeline: bool = True):
    """The page of a report made by InTurn.analyze, written to path (returns
    path) or returned as text: its parts run again in turn (see the module).
    Parts planned with room for the page (the command line's), or given by
    number, serve as they are while their analysis is open; otherwise
    (earlc.analyze(path, memory=) has ended its analysis, or the parts were
    planned without that room) the trace is read in parts again, pass 1 too
    (parts_for_page)."""
    refuse_unsupported(matches, timeline)
    it = report._in_turn
    if not it.closed and (it.page_reserve or it._fixed_parts is not None):
        return _drive(it, report, path, top, rows, pictures)
    with parts_for_page(it) as again:
        return _drive(again, report, path, top, rows, pictures)


def parts_for_page(it):
    """The trace of an analysis in turn in parts again, for its page: as many
    parts when they were given by number, else planned anew within the budget
    with room for the page (with_page), in a scratch folder of its own."""
    if it._fixed_parts is not None:
        return it.reopened()
    model, reserve = with_page(it.model, it.path)
    again = it.reopened(model)
    again.page_reserve = reserve
    return again


def _drive(it, report, path, top, rows, pictures):
    """Runs of the parts until the first part writes the page (see the
    module); the steps' files removed however it ends."""
    from ..analysis import engine
    from ..analysis.catalog import packages_held

    if it.times is None:
        it.pass1()
    args = report._analysis
    _, chosen = engine.selection(args["properties"], args["plugins"], args["packages"],
                                 args["strict"])
    across = any(getattr(p, "across_parts", False) for p in chosen)
    steps = Steps(it.scratch, it.pp.parts)
    progress = it.progress
    progress.title = "page run"
    progress.repeats, progress.done_events[1], progress.shown = 0, 0.0, 0.0
    progress.expect(PAGE_STEPS + 1 + (report._in_turn.steps_taken if across else 0))
    sends = None
    try:
        with packages_held():
            while True:
                page, done, counted = _run(it, report, steps, path, top, rows, pictures, args,
                                           count_sends=sends is None)
                if done:
                    return page
                if sends is None:
                    # every part ran once: the sends of the whole trace are known
                    # before the first part gathers them
                    sends = counted
                    check_page_room(it, sends)
                before = steps.complete
                steps.end_of_pass()
                if steps.complete <= before:
                    raise RuntimeError("the parts analysed in turn stopped at step %d of the "
                                       "page: a part did not write it" % before)
                progress.again()
    finally:
        steps.remove()
        progress.title = "pass"


def _run(it, report, steps, path, top, rows, pictures, args, count_sends: bool):
    """One run of the parts: (the page, True, _) when the first part wrote it,
    else (None, False, the sends of the parts' own locations, if counted)."""
    from ..analysis import engine
    from .. import _core
    from ..events import KINDS

    sends = 0
    for p in range(it.pp.parts):
        part = it.open(p)
        part.exchange = StepExchange(steps, p)
        part.whole_times = it.times
        previous = _core.use_store_memory()
        try:
            if count_sends:
                kinds = part.trace.events.kind[part.own[part.trace.events.location]]
                sends += int(np.count_nonzero((kinds == KINDS["MPI_SEND"]) |
                                              (kinds == KINDS["MPI_ISEND"])))
                del kinds
            local = engine.run(part.trace, args["properties"], top=args["top"],
                               progress=it.progress, plugins=args["plugins"],
                               strict=args["strict"], packages=args["packages"], own=part.own,
                               last_time=it.whole.get("last_time"))
            view = copy.copy(report)  # the merged report, seen from this part
            view.part, view._local = part, local
            view._cnode_map = report._tree.local_to_global(path_keys(local._ctx.calltree))
            page = write_page(view, path, top=top, rows=rows, pictures=pictures)
            del local, view
        except StepsSuspended:
            page = None
        except StepsMisaligned as wrong:
            raise RuntimeError(str(wrong)) from None
        finally:
            _core.restore_numpy_memory(previous)
            it.let_go(part)
            del part
            it.progress.end()
        if p == 0 and page is not None:
            return page, True, sends  # the first part wrote it: the others need not run
    return None, False, sends


def check_page_room(it, sends: int) -> None:
    """The first part's peak with the page's holdings must fit the budget
    (the plan's room for the page, InTurn.page_reserve, replaced by what the
    page holds with the messages counted): else one line with the budget that
    would fit, before the page's data is gathered."""
    from .inturn import _round_up

    events = int(it.whole.get("events") or it.declared.sum())
    need = it.pp.peak(0, None) - getattr(it, "page_reserve", 0) + page_data(events) + \
        MESSAGE_BYTES * int(sends)
    if need > it.budget:
        raise BudgetError("a memory budget of %s is too small for the HTML page of this trace: "
                          "its first part with the page's data (%s messages at %d bytes each) "
                          "takes about %s; give at least %s, or write the JSON or CUBE report"
                          % (format_size(it.budget), format(int(sends), ","), MESSAGE_BYTES,
                             format_size(need), _round_up(need)))


__all__ = ["write_page_in_turn", "check_page_room", "with_page", "page_reserve", "PAGE_STEPS"]
