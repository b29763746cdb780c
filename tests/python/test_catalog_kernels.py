"""The C kernels of the analysis catalog (csrc/catalog) against plain Python
loops that follow their definitions, on random inputs over a generated trace
(the kernels read its timestamps and locations)."""
import numpy as np
import pytest

import earlc
from earlc import _core


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "halo"
    earlc.synth("halo", out, ranks=4, iterations=20, imbalance=50)
    return earlc.open(out)


def wrong_order_by_definition(trace, recv, call, send, late_call, late_send):
    """Per Late Sender: the sender's location of the first message received on
    its location after its call whose send is earlier than the Late Sender's."""
    loc, time = trace.events.location, trace.events.time
    rows = sorted(range(len(recv)), key=lambda k: (loc[recv[k]], recv[k]))
    out = []
    for c, s in zip(late_call, late_send):
        found = -1
        for k in rows:
            if loc[recv[k]] == loc[c] and call[k] > c and time[send[k]] < time[s]:
                found = int(loc[send[k]])
                break
        out.append(found)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_wrong_order_is_the_first_earlier_send_after_the_call(trace, seed):
    rng = np.random.default_rng(seed)
    n = len(trace)
    # receives in any order; each call holds one to three adjacent receives
    recv = np.sort(rng.choice(n, size=300, replace=False)).astype(np.int64)
    call = recv.copy()
    for k in range(1, len(recv)):
        same_loc = trace.events.location[recv[k]] == trace.events.location[recv[k - 1]]
        if same_loc and rng.random() < 0.3:
            call[k] = call[k - 1]
    send = rng.integers(0, n, size=len(recv)).astype(np.int64)
    late = rng.choice(len(recv), size=80, replace=False)
    late_call = call[late]
    late_send = rng.integers(0, n, size=len(late)).astype(np.int64)
    shuffle = rng.permutation(len(recv))
    got = np.empty(len(late), dtype=np.int64)
    _core.wrong_order(trace._core, recv[shuffle], call[shuffle], send[shuffle], late_call,
                      late_send, got)
    want = wrong_order_by_definition(trace, recv, call, send, late_call, late_send)
    assert got.tolist() == want
    assert any(w >= 0 for w in want) and any(w < 0 for w in want)


def test_wrong_order_rejects_event_ids_out_of_range(trace):
    ids = np.array([len(trace)], dtype=np.int64)
    out = np.empty(1, dtype=np.int64)
    with pytest.raises(earlc.TraceError, match="out of range"):
        _core.wrong_order(trace._core, ids, ids, ids, ids, ids, out)
    with pytest.raises(ValueError, match="length of recv"):
        _core.wrong_order(trace._core, ids, ids[:0], ids, ids, ids, out)
    with pytest.raises(ValueError, match="length of late_call"):
        _core.wrong_order(trace._core, ids, ids, ids, ids, ids, out[:0])
    with pytest.raises(ValueError, match="recv must be a contiguous int64 array"):
        _core.wrong_order(trace._core, ids.astype(np.float64), ids, ids, ids, ids, out)


def test_leaves_equal_the_states_leaveptr(trace):
    rng = np.random.default_rng(7)
    enters = np.nonzero(trace.events.kind == earlc.KINDS["ENTER"])[0]
    ids = np.concatenate((rng.choice(enters, 500), rng.integers(0, len(trace), 50), [-1, -1]))
    rng.shuffle(ids)
    got = np.empty(len(ids), dtype=np.int64)
    _core.leaves(trace.states._core, ids, got)
    want = trace.states.leaveptr[np.maximum(ids, 0)]
    want = np.where(trace.events.kind[np.maximum(ids, 0)] == earlc.KINDS["ENTER"], want, -1)
    want[ids < 0] = -1
    assert got.tolist() == want.tolist()
    assert (got >= 0).sum() >= 500
    # knowing an event inside each call: any one from the ENTER to before the LEAVE
    left = enters[trace.states.leaveptr[enters] >= 0]
    calls = rng.choice(left, 500)
    leave = trace.states.leaveptr[calls]
    inside = np.array([rng.integers(c, l) for c, l in zip(calls.tolist(), leave.tolist())])
    got = np.empty(len(calls), dtype=np.int64)
    _core.leaves_after(trace.states._core, calls, inside, got)
    assert got.tolist() == leave.tolist()
    with pytest.raises(TypeError, match="_core.States"):
        _core.leaves(trace._core, ids, got)


def first_of_groups_by_definition(keys, values):
    """Per key ascending: the row of its largest value, the first of equal ones."""
    first = {}
    for k, (key, v) in enumerate(zip(keys.tolist(), values.tolist())):
        if key not in first or v > values[first[key]]:
            first[key] = k
    return [first[k] for k in sorted(first)]


@pytest.mark.parametrize("seed", range(4))
def test_group_kernels_follow_their_definitions(seed):
    from earlc.analysis.reductions import exclusive_running_max, first_of_groups

    rng = np.random.default_rng(seed)
    keys = np.sort(rng.integers(0, 40, 400))
    values = rng.integers(0, 6, 400)
    assert first_of_groups(keys, values).tolist() == first_of_groups_by_definition(keys, values)
    # unsorted keys take the sorting path, with the same meaning
    perm = rng.permutation(400)
    assert first_of_groups(keys[perm], values[perm]).tolist() == \
        first_of_groups_by_definition(keys[perm], values[perm])
    running, want = {}, []
    for key, v in zip(keys.tolist(), values.tolist()):
        want.append(running.get(key, -1))
        running[key] = max(running.get(key, -1), v)
    assert exclusive_running_max(keys, values, -1).tolist() == want


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("spread", [50, 10**6, 2**62])
def test_ids_in_is_membership(seed, spread):
    """ids_in answers as np.isin: a dense set (the bitmap), a sparse one (the
    search), values outside the set's range and -1."""
    from earlc.analysis.reductions import ids_in

    rng = np.random.default_rng(seed)
    ids = np.sort(rng.integers(0, spread, 300))
    values = np.concatenate((rng.integers(-2, spread + 2, 500), ids[::7], [-1]))
    rng.shuffle(values)
    got = ids_in(values, ids)
    assert got.dtype == bool
    assert got.tolist() == np.isin(values, ids).tolist()
    assert not ids_in(values, np.empty(0, np.int64)).any()
    # ids in no order: sorted first, the same answers
    assert ids_in(values, rng.permutation(ids)).tolist() == np.isin(values, ids).tolist()
    assert ids_in(np.empty(0, np.int64), ids).tolist() == []


def test_message_sums_add_up_the_message_table(trace):
    ev = trace.events
    cnode = earlc.analyze(trace)._ctx.cnode
    m = ev.messages
    kinds = ev.kind[m.event]
    sides = _core.message_sums(trace._core, cnode)
    for side, names in zip(sides, (("MPI_SEND", "MPI_ISEND"), ("MPI_RECV", "MPI_IRECV"))):
        want = {}
        for e, size, k in zip(m.event.tolist(), m.bytes.tolist(), kinds.tolist()):
            if earlc.KIND_NAMES[k] in names and cnode[e] >= 0:
                cell = want.setdefault((int(cnode[e]), int(ev.location[e])), [0, 0, 0])
                cell[0] += 1
                cell[1] += size != 0
                cell[2] += size
        cols = [np.frombuffer(c, dtype=np.int64).tolist() for c in side]
        got = {(c, l): [r, p, b] for c, l, r, p, b in zip(*cols)}
        assert got == want and len(want) > 1
        assert list(got) == sorted(got)
