"""MPI operation statistics as Scalasca counts them: point-to-point and
collective operations split into communications (some payload) and
synchronisations (no payload), the bytes of collectives, and the Late Sender and
Late Receiver instances among them.

Each count is charged to the call path of the record that Scalasca charges: the
send record for sends, the receive record (MPI_RECV, or the MPI_IRECV in the call
completing the request) for receives, the MPI_COLLECTIVE_END for collectives, and
the waiting call for Late Sender and Late Receiver instances.
"""
import numpy as np

from earlc.analysis import Property


def _message_bytes(ctx, events: np.ndarray) -> np.ndarray:
    """Bytes of the message records events (sends or receives)."""
    return ctx.events.messages.bytes[ctx.events.ref_of(events)].view(np.int64)


def _collective_ends(ctx):
    """(MPI_COLLECTIVE_END event, bytes sent, bytes received)."""
    def compute():
        c = ctx.events.collectives
        return (c.event.astype(np.int64), c.sent.view(np.int64), c.received.view(np.int64))
    return ctx.memo("collective_ends", compute)


def _count(ctx, events: np.ndarray, values=None):
    if values is None:
        values = np.ones(len(events), dtype=np.int64)
    return ctx.cnode[events], ctx.events.location[events], values


class _P2PCount(Property):
    measures = "quantity"
    unit = "occ"
    sends = True
    payload = True

    def totals(self, ctx):
        sends, receives = ctx.message_sums()
        cnode, loc, records, payload, _ = sends if self.sends else receives
        return cnode, loc, payload if self.payload else records - payload


class CommsSend(_P2PCount):
    name, title, cube_id = "comms_send", "P2P send communications", "comms_send"
    description = ("Point-to-point sends of a non-empty message (MPI_SEND, MPI_ISEND records), "
                   "charged to the call that sends.")
    diagnosis = "Compare with Bytes sent: many small messages pay latency each time."


class CommsRecv(_P2PCount):
    name, title, cube_id = "comms_recv", "P2P receive communications", "comms_recv"
    sends = False
    description = ("Point-to-point receives of a non-empty message, charged to the call that "
                   "completes the receive.")
    diagnosis = "Compare with Bytes received: many small messages pay latency each time."


class SyncsSend(_P2PCount):
    name, title, cube_id = "syncs_send", "P2P send synchronizations", "syncs_send"
    payload = False
    description = "Point-to-point sends of an empty message (used to synchronise)."
    diagnosis = "Check whether these synchronisations are needed."


class SyncsRecv(_P2PCount):
    name, title, cube_id = "syncs_recv", "P2P receive synchronizations", "syncs_recv"
    sends, payload = False, False
    description = "Point-to-point receives of an empty message (used to synchronise)."
    diagnosis = "Check whether these synchronisations are needed."


class _CollectiveCount(Property):
    measures = "quantity"
    unit = "occ"
    sent = received = True

    def totals(self, ctx):
        end, sent, received = _collective_ends(ctx)
        keep = ((sent != 0) == self.sent) & ((received != 0) == self.received)
        return _count(ctx, end[keep])


class SyncsColl(_CollectiveCount):
    name, title, cube_id = "syncs_coll", "Collective synchronizations", "syncs_coll"
    sent = received = False
    description = ("Collective operations in which a process neither sends nor receives data "
                   "(MPI_Barrier, or empty collectives), counted once per participating "
                   "process, at its MPI_COLLECTIVE_END.")
    diagnosis = "A collective that moves no data only synchronises: could a barrier do, or none?"


class CommsCxch(_CollectiveCount):
    name, title, cube_id = "comms_cxch", "Collective exchange communications", "comms_cxch"
    description = ("Collective operations in which a process both sends and receives data "
                   "(all-to-all operations, scans, and the root of rooted ones).")
    diagnosis = "Many small collectives: aggregate their payloads."


class CommsCsrc(_CollectiveCount):
    name, title, cube_id = "comms_csrc", "Collective communications as source", "comms_csrc"
    received = False
    description = ("Collective operations in which a process sends data but receives none "
                   "(the non-root members of a gather or reduction).")
    diagnosis = "Many small collectives: aggregate their payloads."


class CommsCdst(_CollectiveCount):
    name, title, cube_id = "comms_cdst", "Collective communications as destination", "comms_cdst"
    sent = False
    description = ("Collective operations in which a process receives data but sends none "
                   "(the non-root members of a broadcast or scatter).")
    diagnosis = "Many small collectives: aggregate their payloads."


class BytesCout(Property):
    measures = "quantity"
    name, title, unit, cube_id = "bytes_cout", "Collective bytes outgoing", "bytes", "bytes_cout"
    description = ("Bytes a process sends in collective operations, as recorded in its "
                   "MPI_COLLECTIVE_END (a naive implementation's volume, not the network's).")
    diagnosis = "Where collective volume concentrates, per call path and process."

    def totals(self, ctx):
        end, sent, _ = _collective_ends(ctx)
        return _count(ctx, end, sent)


class BytesCin(Property):
    measures = "quantity"
    name, title, unit, cube_id = "bytes_cin", "Collective bytes incoming", "bytes", "bytes_cin"
    description = "Bytes a process receives in collective operations (its MPI_COLLECTIVE_END)."
    diagnosis = "Where collective volume concentrates, per call path and process."

    def totals(self, ctx):
        end, _, received = _collective_ends(ctx)
        return _count(ctx, end, received)


class _LateCount(Property):
    """Instances of a waiting-time property whose message has (or lacks) a payload."""

    measures = "quantity"
    unit = "occ"
    payload = True

    def detect(self, ctx, waits):
        return waits.charged(np.ones(len(waits), dtype=np.int64),
                             (_message_bytes(ctx, waits["send"]) != 0) == self.payload)


class LateSenderCount(_LateCount):
    name, title, parent, subscribes = ("late_sender_count", "Late Sender instances",
                                       "comms_recv", "late_sender")
    cube_id = "mpi_cls_count"
    description = "Late Sender instances on receives of a non-empty message."
    diagnosis = "How often receivers wait; with Late Sender's time, the average wait."


class LateSenderWrongOrderCount(_LateCount):
    name, title, parent, subscribes = ("late_sender_wo_count", "Late Sender, wrong order instances",
                                       "late_sender_count", "late_sender_wrong_order")
    cube_id = "mpi_clswo_count"
    description = "Late Sender, wrong order instances on receives of a non-empty message."
    diagnosis = "How often receivers wait for messages they ask for in another order than sent."


class LateReceiverCount(_LateCount):
    name, title, parent, subscribes = ("late_receiver_count", "Late Receiver instances",
                                       "comms_send", "late_receiver")
    cube_id = "mpi_clr_count"
    description = "Late Receiver instances on sends of a non-empty message."
    diagnosis = "How often senders wait; with Late Receiver's time, the average wait."


class SyncLateSenderCount(_LateCount):
    name, title, parent, subscribes = ("sync_late_sender_count", "Late Sender instances (sync)",
                                       "syncs_recv", "late_sender")
    cube_id, payload = "mpi_sls_count", False
    description = "Late Sender instances on receives of an empty message."
    diagnosis = "How often receivers wait for a synchronisation message."


class SyncLateSenderWrongOrderCount(_LateCount):
    name, title, parent, subscribes = ("sync_late_sender_wo_count",
                                       "Late Sender, wrong order instances (sync)",
                                       "sync_late_sender_count", "late_sender_wrong_order")
    cube_id, payload = "mpi_slswo_count", False
    description = "Late Sender, wrong order instances on receives of an empty message."
    diagnosis = "Synchronisation messages asked for in another order than sent."


class SyncLateReceiverCount(_LateCount):
    name, title, parent, subscribes = ("sync_late_receiver_count", "Late Receiver instances (sync)",
                                       "syncs_send", "late_receiver")
    cube_id, payload = "mpi_slr_count", False
    description = "Late Receiver instances on sends of an empty message."
    diagnosis = "How often senders wait to deliver a synchronisation message."


PROPERTIES = (CommsSend, CommsRecv, SyncsSend, SyncsRecv, SyncsColl, CommsCxch, CommsCsrc,
              CommsCdst, BytesCout, BytesCin, LateSenderCount, LateSenderWrongOrderCount,
              LateReceiverCount, SyncLateSenderCount, SyncLateSenderWrongOrderCount,
              SyncLateReceiverCount)
