"""Every reference trace opens, and what earlc read equals what otf2-print shows:
event counts per kind and per location, each location's sequence of (kind, time),
every MPI peer and collective root resolved to the location otf2-print names, and
the definition counts."""
import numpy as np
import pytest

import earlc
from conftest import REFERENCE_NAMES, otf2_print, reference_trace

PEER_KINDS = {"MPI_SEND", "MPI_RECV", "MPI_ISEND", "MPI_IRECV", "MPI_COLLECTIVE_END"}


@pytest.fixture(params=REFERENCE_NAMES)
def reference(request):
    anchor = reference_trace(request.param)
    return earlc.open(anchor), otf2_print(anchor)


def test_counts_per_kind_match_otf2_print(reference):
    trace, printed = reference
    assert trace.kind_counts() == dict(printed.kinds)
    assert len(trace) == sum(printed.kinds.values())
    assert not trace.warnings, trace.warnings


def test_each_location_matches_otf2_print_event_by_event(reference):
    trace, printed = reference
    ev = trace.events
    peers = ev.peer
    roots = np.full(len(ev), -1)
    roots[ev.collectives.event] = ev.collectives.root
    assert sorted(printed.events) == sorted(l.id for l in trace.locations)
    for loc in trace.locations:
        ids = ev.of_location(loc.index)
        expected = printed.events[loc.id]
        assert len(ids) == len(expected) == loc.events == loc.declared_events
        kinds = [earlc.KIND_NAMES[k] for k in ev.kind[ids]]
        assert kinds == [k for k, _, _ in expected]
        assert ev.time[ids].tolist() == [t for _, t, _ in expected]
        for i, (kind, _, peer_id) in zip(ids, expected):
            if kind in PEER_KINDS and peer_id is not None:
                got = roots[i] if kind == "MPI_COLLECTIVE_END" else peers[i]
                assert trace.locations[int(got)].id == peer_id, trace.event(int(i))


def test_definition_counts_match_otf2_print(reference):
    trace, printed = reference
    d = printed.definitions
    assert len(trace.locations) == d["LOCATION"]
    assert len(trace.processes) == d["LOCATION_GROUP"]
    assert len(trace.regions) == d["REGION"]
    assert len(trace.communicators) == d["COMM"] + d.get("INTER_COMM", 0)
    assert len(trace.groups) == d["GROUP"]
    assert len(trace.system_tree) == d["SYSTEM_TREE_NODE"]
    assert len([s for s in trace.strings]) >= d["STRING"]
    assert trace.definition_count == sum(d.values())


def test_total_order_is_time_then_location():
    trace = earlc.open(reference_trace("casita-jacobi-hybrid"))
    t, loc = trace.events.time.astype(np.int64), trace.events.location
    assert (np.diff(t) >= 0).all()
    ties = np.diff(t) == 0
    assert (np.diff(loc)[ties] >= 0).all()


def test_sst_macro_sub_communicator_peers_by_hand():
    """MPI_Comm_split in sst-macro made comms 1..4 = {0,6}, {1,7}, {2,8}, {3,9}
    (world ranks; GROUP 2..5 in `otf2-print -G`).  Rank 1 of comm 3 is world rank 8."""
    trace = earlc.open(reference_trace("sstmacro-mpi-coverage"))
    comms = {c.id: c for c in trace.communicators}
    by_rank = {l.rank: l.index for l in trace.locations}
    for comm, members in {1: (0, 6), 2: (1, 7), 3: (2, 8), 4: (3, 9)}.items():
        assert [trace.locations[i].rank for i in comms[comm].locations] == list(members)
    m = trace.events.messages
    checked = 0
    for row in np.nonzero((m.comm >= 1) & (m.comm <= 4))[0][:40]:
        comm, rank = int(m.comm[row]), int(m.peer_rank[row])
        world = {1: (0, 6), 2: (1, 7), 3: (2, 8), 4: (3, 9)}[comm][rank]
        assert int(m.peer[row]) == by_rank[world]
        checked += 1
    assert checked == 40
    # one record checked against the otf2-print line itself:
    # MPI_ISEND on location 2, Receiver: 1 ("Master thread" <8>), Communicator <3>, Request 97
    ev = trace.events
    rows = [r for r in range(len(m)) if ev.location[m.event[r]] == by_rank[2]
            and m.comm[r] == 3 and m.request[r] == 97 and ev.kind[m.event[r]] == earlc.KINDS["MPI_ISEND"]]
    assert rows and trace.event(int(m.event[rows[0]])).peer.rank == 8


def test_sst_macro_requests_are_paired():
    trace = earlc.open(reference_trace("sstmacro-mpi-coverage"))
    ev, m = trace.events, trace.events.messages
    k = earlc.KINDS
    for start, end in ((k["MPI_ISEND"], k["MPI_ISEND_COMPLETE"]),
                       (k["MPI_IRECV_REQUEST"], k["MPI_IRECV"])):
        rows = np.nonzero(ev.kind[m.event] == start)[0]
        assert len(rows) == 1440
        partners = m.partner[rows]
        assert (partners >= 0).all()
        assert (ev.kind[partners] == end).all()
        assert (ev.location[partners] == ev.location[m.event[rows]]).all()
        assert (partners > m.event[rows]).all()
        # the completion carries the message of its start
        back = ev.ref_of(partners)
        assert (m.tag[back] == m.tag[rows]).all() and (m.peer[back] == m.peer[rows]).all()
        assert (m.partner[back] == m.event[rows]).all()


def test_openmp_threads_and_metrics():
    trace = earlc.open(reference_trace("casita-jacobi-hybrid"))
    threads = [l for l in trace.locations if l.type == "CPU_THREAD"]
    assert sorted(l.thread for l in threads) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [l.rank for l in threads] == [0, 0, 0, 0, 1, 1, 1, 1]
    locks = trace.events.threading
    assert len(locks) == 2 * 4009 + 2 * 16036 + 2 * 8000
    papi = earlc.open(reference_trace("pipit-ping-pong-papi"))
    metric_events = np.nonzero(papi.events.kind == earlc.KINDS["METRIC"])[0]
    e = papi.event(int(metric_events[0]))
    assert len(e.values) >= 1 and all(isinstance(v, (int, float)) for v in e.values)
