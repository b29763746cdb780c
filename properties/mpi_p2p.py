"""MPI point-to-point properties (paper section 6.1 to 6.3, Scalasca's catalog).

p2p_messages (a compound event, no metric) matches every receive with its send
through the EARL layer's sendptr and finds the calls around them (enterptr).
Late Sender, Late Receiver and Messages in Wrong Order subscribe to it; the two
wrong-order refinements of Late Sender subscribe to Late Sender.
"""
import numpy as np

from earlc.analysis import Instances, Property
from earlc.analysis.reductions import first_of_groups, ids_in, segments


class P2PMessages(Property):
    measures = "quantity"
    name, title, metric, unit = "p2p_messages", "Point-to-point messages", False, "occ"
    description = ("Every received message with its send: the receive event (MPI_RECV, or the "
                   "MPI_IRECV completing a request), the send (MPI_SEND, MPI_ISEND), the "
                   "ENTERs of the calls around them and their times, the call completing the "
                   "send (the send call, or the call completing an MPI_Isend) and the call "
                   "posting the receive (the receive call, or the MPI_Irecv).")

    def detect(self, ctx, subscribed):
        cols = ctx.matched_messages()
        return Instances(cols["recv"], np.zeros(len(cols["recv"]), np.int64), cols)


class LateSender(Property):
    measures = "inefficiency"
    name, title, parent, subscribes = "late_sender", "Late Sender", "mpi_point2point", "p2p_messages"
    cube_id = "mpi_latesender"
    partner = "send_call"
    description = ("A blocking receive (MPI_Recv, or MPI_Wait/Waitall/Waitany/Waitsome completing "
                   "receives) entered before the matching send call: the receiver waits "
                   "enter(send call) - enter(receive call), at most until the receive call is "
                   "left; for a call completing several receives, the maximum over them. "
                   "Charged to the receive call.")
    diagnosis = ("Receivers wait for senders that start late: balance the work before the "
                 "send, or post the receive later (non-blocking) and compute meanwhile.")

    def detect(self, ctx, msgs):
        wait = msgs["send_call_time"] - msgs["recv_call_time"]
        # the receives entered before their send, then those in blocking calls (the
        # region look-up for these rows only)
        late = np.nonzero(wait > 0)[0]
        late = late[ctx.is_region(msgs["recv_call"][late], ctx.blocking_receive_region)]
        cand = msgs.select(late)
        wait = wait[late]
        if len(wait):
            # no waiting past the receive's own leave (clocks of different processes
            # may disagree a little): once per receive call
            # (the receives of one call are adjacent: one lookup per run of them)
            starts, run = segments(cand["recv_call"])
            last = np.append(starts[1:], len(run)) - 1  # the last receive of each run
            leave = ctx.leave_of(cand["recv_call"][starts], inside=cand["recv"][last])
            t_leave = np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)),
                               np.iinfo(np.int64).max)[run]
            wait = np.minimum(wait, t_leave - cand["recv_call_time"])
        # one occurrence per receive call: the largest wait among its receives
        keep = first_of_groups(cand["recv_call"], wait)
        keep = keep[wait[keep] > 0]
        inst = cand.select(keep)
        return Instances(inst["recv_call"], wait[keep], inst.columns)


def _wrong_order(ctx, ls):
    """Per Late Sender: the source location of the first later receive on the
    same location whose message was sent before the Late Sender's message was
    (-1 when none), as Scalasca defines wrong order."""
    msgs = ctx.published["p2p_messages"]
    return ctx.wrong_order_sources(msgs["recv"], msgs["recv_call"], msgs["send"],
                                   ls["recv_call"], ls["send"])


class LateSenderWrongOrder(Property):
    measures = "inefficiency"
    name, title, parent, subscribes = ("late_sender_wrong_order", "Late Sender, wrong order",
                                       "late_sender", "late_sender")
    reads = ("p2p_messages",)  # the other messages of the receiving location
    column_kinds = {"later_source": "location"}
    cube_id = "mpi_latesender_wo"
    partner = "send_call"
    description = ("A Late Sender whose message was sent after a message that the same "
                   "location receives later: had the receives come in the order of the sends, "
                   "the earlier message could have been received first. (Scalasca's "
                   "definition; Messages in Wrong Order below follows the paper.)")
    diagnosis = ("The receiver asks for messages in another order than they are sent: receive "
                 "in sending order, or from MPI_ANY_SOURCE.")

    def detect(self, ctx, ls):
        trigger = ctx.memo("late_sender_wrong_order", lambda: _wrong_order(ctx, ls))
        inst = ls.select(trigger >= 0)
        inst.columns["later_source"] = trigger[trigger >= 0]
        return inst


class _LateSenderWrongOrderSource(Property):
    measures = "inefficiency"
    partner = "send_call"
    parent = subscribes = "late_sender_wrong_order"
    same_source = True

    def detect(self, ctx, wo):
        same = wo["later_source"] == ctx.events.location[wo["send"]]
        return wo.select(same == self.same_source)


class LateSenderWrongOrderSameSource(_LateSenderWrongOrderSource):
    name, title = "late_sender_wrong_order_same_source", "Wrong order, same source"
    cube_id = "mpi_lswo_same"
    description = ("A Late Sender, wrong order, where the earlier-sent message received later "
                   "comes from the same sender.")
    diagnosis = "The receiver asks for one sender's messages in another order than it sends them."


class LateSenderWrongOrderDifferentSource(_LateSenderWrongOrderSource):
    name, title = "late_sender_wrong_order_different_source", "Wrong order, other source"
    cube_id = "mpi_lswo_different"
    same_source = False
    description = ("A Late Sender, wrong order, where the earlier-sent message received later "
                   "comes from another sender.")
    diagnosis = "Receiving from whichever sender is ready (MPI_ANY_SOURCE) would avoid the wait."


def _request_half(ctx, events: np.ndarray, kind: str) -> np.ndarray:
    """For events of `kind` (MPI_ISEND, MPI_IRECV): the other half of their
    request (the MPI_ISEND_COMPLETE, the MPI_IRECV_REQUEST); other events and
    requests without their other half: the event itself."""
    ev = ctx.events
    out = events.copy()
    nb = np.nonzero(ev.kind[events] == ctx.kinds[kind])[0]
    if len(nb):
        half = ev.messages.partner_of(ev.ref_of(events[nb]))
        ok = half >= 0
        out[nb[ok]] = half[ok]
    return out


#: calls that complete one send, and several
_SINGLE_COMPLETION = ("MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Wait", "MPI_Waitany")
_MULTI_COMPLETION = ("MPI_Waitall", "MPI_Waitsome")


class LateReceiver(Property):
    measures = "inefficiency"
    name, title, parent, subscribes = "late_receiver", "Late Receiver", "mpi_point2point", "p2p_messages"
    reads = ("late_sender",)  # a call completing several sends may wait for a Late Sender
    cube_id = "mpi_latereceiver"
    partner = "request_call"
    description = ("A send whose completing call (MPI_Send, MPI_Ssend, MPI_Rsend, or the "
                   "MPI_Wait, MPI_Waitany, MPI_Waitall, MPI_Waitsome completing an MPI_Isend) "
                   "was entered before the receiver posted the receive (the MPI_Recv, or the "
                   "MPI_Irecv starting the request) and is left after it: enter(receive "
                   "posting call) - enter(completing call). For a call completing several "
                   "sends, the largest over them, unless the call also waits for a Late "
                   "Sender. Charged to the completing call.")
    diagnosis = ("The sender waits for a receiver that is late: the message is synchronous or "
                 "too large to buffer. Post receives earlier or send non-blocking.")

    def detect(self, ctx, msgs):
        cmp_call, req_call = msgs["completion_call"], msgs["request_call"]
        # narrowed step by step: most messages are posted before their send
        # completes.  Event ids follow the time (the total order is by
        # timestamp, each location's clamped to be monotone), so a posting
        # call entered after the completing call comes after it by id too:
        # compared by id first, in the columns' own order, the times gathered
        # at random for those only (about half the messages of a halo exchange)
        cand = np.nonzero((cmp_call >= 0) & (req_call > cmp_call))[0]
        t_req, t_cmp = ctx.time_of(req_call[cand]), ctx.time_of(cmp_call[cand])
        later = t_req > t_cmp
        cand, t_req, t_cmp = cand[later], t_req[later], t_cmp[later]
        calls = cmp_call[cand]  # all >= 0: their regions looked up once for both tables
        region = ctx.region_of_enter(calls)
        single = ctx.regions_named(*_SINGLE_COMPLETION)[region]
        multi = ctx.regions_named(*_MULTI_COMPLETION)[region]
        if multi.any():
            # a multi-completion call that also completes a Late Sender's receive is
            # charged there: left out before its leave is looked up (in a halo
            # exchange, most MPI_Waitall calls are)
            ls = ctx.published.get("late_sender")  # None when it found none
            late_calls = ls["recv_call"] if ls is not None else np.empty(0, np.int64)
            multi &= ~ids_in(calls, late_calls)  # Late Senders come in call order: no sort
        known = single | multi
        cand, t_req, t_cmp, calls, multi = (cand[known], t_req[known], t_cmp[known],
                                            calls[known], multi[known])
        # the leave of each candidate call, once per call (a MPI_Waitall completes
        # many sends)
        distinct, which = np.unique(calls, return_inverse=True)
        leave = ctx.leave_of(distinct)
        t_leave = np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)), -1)[which]
        covers = t_leave > t_req
        cand, calls, is_multi = cand[covers], calls[covers], multi[covers]
        wait = (t_req - t_cmp)[covers]
        if is_multi.any():
            # a multi-completion call once, with its largest wait
            m = np.nonzero(is_multi)[0]
            best = m[first_of_groups(calls[m], wait[m])]
            keep = np.sort(np.concatenate((np.nonzero(~is_multi)[0], best)))
            cand, wait = cand[keep], wait[keep]
        inst = msgs.select(cand)
        inst.columns["send_completion"] = cmp_call[cand]
        return Instances(cmp_call[cand], wait, inst.columns)


class MessagesInWrongOrder(Property):
    measures = "inefficiency"
    name, title, parent, subscribes = ("messages_in_wrong_order", "Messages in Wrong Order",
                                       "mpi_point2point", "p2p_messages")
    description = ("A receive of a message while an older message from the same sender to the "
                   "same receiver is still in transfer (sent earlier, received later by a later "
                   "call; paper section 6.3). Messages completed by one call (MPI_Waitall) are "
                   "taken together, in no order. Severity: the duration of that receive call, "
                   "once per call.")
    diagnosis = ("Messages are consumed in another order than sent; buffering them costs time "
                 "and memory.")

    def detect(self, ctx, msgs):
        # per (sender, receiver), in sending order: a later call received an
        # older message
        wrong = ctx.received_out_of_order(msgs["recv"], msgs["recv_call"], msgs["send"])
        inst = msgs.select(wrong)
        # a call completing several such messages (MPI_Waitall) is one occurrence
        inst = inst.select(first_of_groups(inst["recv_call"], inst["send"]))
        call = inst["recv_call"]
        leave = ctx.leave_of(call)
        dur = np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)) - ctx.time_of(call), 0)
        return Instances(call, dur, inst.columns)


PROPERTIES = (P2PMessages, LateSender, LateSenderWrongOrder, LateSenderWrongOrderSameSource,
              LateSenderWrongOrderDifferentSource, LateReceiver, MessagesInWrongOrder)
