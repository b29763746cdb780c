"""The catalog on the real Score-P traces, against expectations derived by hand
from `otf2-print` output.

How the expectations are derived (independently of earlc, in plain Python over
the text otf2-print prints):
- every ENTER/LEAVE line maintains a region stack per location, so each record
  knows the call it is in (the innermost region) and when that call was entered;
- MPI_SEND/MPI_ISEND and MPI_RECV/MPI_IRECV lines name the peer location;
  receives are matched with sends first-in first-out per (sender, receiver, tag)
  (MPI's non-overtaking rule; a tag is never reused across communicators here);
- late sender: the blocking receive call (MPI_Recv, or the MPI_Wait/MPI_Waitall in
  which an MPI_IRECV completes) was entered before the send call: enter(send call)
  - enter(receive call), the largest over the receives one call completes;
- late receiver (Scalasca's rule): the call completing the send (MPI_Send, or the
  MPI_Wait/MPI_Waitall in which its MPI_ISEND_COMPLETE lies, matched by request
  id) entered before, and left after, the call that posted the receive (MPI_Recv,
  or the MPI_Irecv holding the MPI_IRECV_REQUEST): enter(posting call) -
  enter(completing call); for an MPI_Waitall the largest over its sends, unless
  it also completes a late sender's receive;
- collectives: the k-th MPI_COLLECTIVE_END of a communicator on each location
  belongs to instance k (a communicator whose group is COMM_SELF, in
  `otf2-print -G`, is each location's own); for MPI_Bcast/Scatter a non-root waits enter(root) - own
  enter; for Allreduce/Allgather/Alltoall each member waits max(enter) - own enter.
"""
import re
import subprocess
from collections import defaultdict, deque

import pytest

import earlc
from conftest import need_otf2_print, reference_trace

LINE = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s+(.*)$")
REGION = re.compile(r'Region: "([^"]*)"')
PEER = re.compile(r'(?:Receiver|Sender|Root): \d+ \("[^"]*" <(\d+)>\)')
TAG = re.compile(r"Tag: (\d+)")
REQUEST = re.compile(r"Request: (\d+)")
COMM = re.compile(r'Communicator: "[^"]*" <(\d+)>')
OP = re.compile(r"Operation: (\w+)")


def by_hand(anchor):
    need_otf2_print()
    out = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True,
                         check=True).stdout
    stack = defaultdict(list)          # location -> [(region, enter time)]
    sends = defaultdict(deque)         # (src, dst, tag) -> deque of send call info
    calls = []                         # matched (recv call, send call) pairs
    leave_of = {}                      # (location, enter time, region) -> leave time
    coll = defaultdict(list)           # (comm, location) -> [(op, enter, root)]
    requests = {}                      # (location, request id) -> send or posting call
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind, loc, t, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        if kind == "ENTER":
            stack[loc].append((REGION.search(rest).group(1), t))
        elif kind == "LEAVE":
            region, enter = stack[loc].pop()
            leave_of[(loc, enter, region)] = t
        elif kind in ("MPI_SEND", "MPI_ISEND"):
            dst, tag = int(PEER.search(rest).group(1)), int(TAG.search(rest).group(1))
            send = {"call": (loc,) + stack[loc][-1]}
            send["completion"] = send["call"]
            if kind == "MPI_ISEND":
                requests[(loc, int(REQUEST.search(rest).group(1)))] = send
            sends[(loc, dst, tag)].append(send)
        elif kind == "MPI_ISEND_COMPLETE":
            requests.pop((loc, int(REQUEST.search(rest).group(1))))["completion"] = \
                (loc,) + stack[loc][-1]
        elif kind == "MPI_IRECV_REQUEST":
            requests[(loc, int(REQUEST.search(rest).group(1)))] = (loc,) + stack[loc][-1]
        elif kind in ("MPI_RECV", "MPI_IRECV"):
            src, tag = int(PEER.search(rest).group(1)), int(TAG.search(rest).group(1))
            call = (loc,) + stack[loc][-1]
            posted = requests.pop((loc, int(REQUEST.search(rest).group(1)))) \
                if kind == "MPI_IRECV" else call
            calls.append((call, sends[(src, loc, tag)].popleft(), posted))
        elif kind == "MPI_COLLECTIVE_END":
            root = PEER.search(rest)
            coll[(int(COMM.search(rest).group(1)), loc)].append(
                (OP.search(rest).group(1), stack[loc][-1][1], int(root.group(1)) if root else None, loc))
    late_sender = late_receiver = 0
    worst_wait = defaultdict(int)  # receive call -> its largest wait for a sender
    for (rloc, rregion, renter), send, _ in calls:
        (sloc, sregion, senter) = send["call"]
        if rregion in ("MPI_Recv", "MPI_Wait", "MPI_Waitall") and senter > renter:
            key = (rloc, renter)
            worst_wait[key] = max(worst_wait[key], senter - renter)
    late_sender = sum(worst_wait.values())
    worst_lr = defaultdict(int)  # MPI_Waitall -> its largest wait for a receiver
    for _, send, (_, _, posted) in calls:
        cloc, cregion, center = send["completion"]
        wait = posted - center
        if wait <= 0 or leave_of[(cloc, center, cregion)] <= posted:
            continue
        if cregion in ("MPI_Send", "MPI_Wait"):
            late_receiver += wait
        elif cregion == "MPI_Waitall" and (cloc, center) not in worst_wait:
            worst_lr[(cloc, center)] = max(worst_lr[(cloc, center)], wait)
    late_receiver += sum(worst_lr.values())
    late_bcast = wait_nxn = 0
    defs = subprocess.run(["otf2-print", "-G", str(anchor)], capture_output=True, text=True,
                          check=True).stdout
    self_groups = set(re.findall(r"^GROUP\s+(\d+)\s.*Type: COMM_SELF", defs, re.M))
    self_comms = {int(c) for c, g in re.findall(r"^COMM\s+(\d+)\s.*Group: \"[^\"]*\" <(\d+)>",
                                                defs, re.M) if g in self_groups}
    comms = {c for c, _ in coll} - self_comms
    for c in comms:
        lists = [v for (cc, _), v in coll.items() if cc == c]
        for members in zip(*lists):
            op = members[0][0]
            enters = {loc: enter for _, enter, _, loc in members}
            if op in ("BCAST", "SCATTER"):
                root = members[0][2]
                late_bcast += sum(max(0, enters[root] - e) for l, e in enters.items() if l != root)
            if op in ("ALLREDUCE", "ALLGATHER", "ALLTOALL"):
                last = max(enters.values())
                wait_nxn += sum(last - e for e in enters.values())
    return {"late_sender": late_sender, "late_receiver": late_receiver,
            "late_broadcast": late_bcast, "wait_at_nxn": wait_nxn}


@pytest.mark.parametrize("name", ["pipit-ping-pong", "pipit-ping-pong-papi",
                                  "sstmacro-mpi-coverage"])
def test_catalog_matches_otf2_print_by_hand(name):
    anchor = reference_trace(name)
    want = by_hand(anchor)
    report = earlc.analyze(earlc.open(anchor))
    got = {k: report.total(k) for k in want}
    assert got == want
    assert any(want.values())  # the comparison is not vacuous


def test_ping_pong_has_late_receivers_for_large_messages():
    report = earlc.analyze(earlc.open(reference_trace("pipit-ping-pong")))
    inst = report.worst["late_receiver"]
    assert len(inst) > 0
    sizes = [report.trace.event(int(s)).bytes for s in inst["send"]]
    assert min(sizes) >= 16384  # only the blocking (large) sends wait for their receiver


def test_every_reference_trace_is_analysed():
    for name in ["casita-jacobi-hybrid", "casita-cuda-simple", "casita-ompt-nested"]:
        report = earlc.analyze(earlc.open(reference_trace(name)))
        assert report.total("time") > 0
        assert report.total("omp") > 0
