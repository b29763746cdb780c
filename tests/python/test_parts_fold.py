"""Folded ghost calls (earl_part_fold_calls, docs/parallel.md "Where a part's
memory goes"): a part analysed with the built-in catalog without the root causes
holds the LEAVE of a ghost message call only where the EARL layer cannot close
the call at its location's next ENTER, and its ghost calls still do not nest;
a part for the root causes or plugins holds every LEAVE.  That the reports stay
those of the analysis in one piece is tested with the parts (test_parts.py,
test_inturn.py)."""
import numpy as np
import pytest

import earlc
from earlc import _core
from earlc.parts.inturn import InTurn

ENTER, LEAVE = _core.KIND_NAMES.index("ENTER"), _core.KIND_NAMES.index("LEAVE")


@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    return earlc.synth("halo", tmp_path_factory.mktemp("fold") / "h", ranks=8,
                       iterations=40).path


def ghost_calls(halo, scratch, collectives):
    """Per part: (ghosts received, ghost ENTERs, ghost LEAVEs, enterptr of the
    ghost ENTERs)."""
    out = []
    with InTurn(halo, 1 << 50, scratch=scratch, parts=4, collectives=collectives) as it:
        it.pass1()
        for p in range(4):
            part = it.open(p)
            ev = part.trace.events
            ghost = ~part.own[ev.location]
            kinds = ev.kind[ghost]
            enters = np.nonzero(ghost & (ev.kind == ENTER))[0]
            out.append((part.ghosts_received, int((kinds == ENTER).sum()),
                        int((kinds == LEAVE).sum()), part.trace.states.enterptr_of(enters)))
            del part
    return out


def test_a_part_for_the_wait_states_folds_its_ghost_message_calls(halo, tmp_path):
    for received, enters, leaves, enterptr in ghost_calls(halo, tmp_path, "representatives"):
        held = enters + leaves
        assert enters > 0
        # most ghost calls of a halo are message calls followed by another call
        assert leaves < enters / 2, (enters, leaves)
        assert held < received
        # a folded call ends at the next ENTER: no ghost call inside another
        assert (enterptr == -1).all()


def test_a_part_for_the_root_causes_holds_every_leave(halo, tmp_path):
    for received, enters, leaves, enterptr in ghost_calls(halo, tmp_path, "delayers"):
        assert enters == leaves > 0
        assert (enterptr == -1).all()
