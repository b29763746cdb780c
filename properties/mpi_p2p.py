"""MPI point-to-point properties (paper section 6.1 to 6.3, Scalasca's catalog).

p2p_messages (a compound event, no metric) matches every receive with its send
through the EARL layer's sendptr and finds the calls around them (enterptr).
Late Sender, Late Receiver and Messages in Wrong Order subscribe to it; the two
wrong-order refinements of Late Sender subscribe to Late Sender.
"""
import numpy as np

from earlc.analysis import Instances, Property

from .groups import exclusive_running_max, first_of_groups


class P2PMessages(Property):
    name, title, metric, unit = "p2p_messages", "Point-to-point messages", False, "occ"
    description = ("Every received message with its send: the receive event (MPI_RECV, or the "
                   "MPI_IRECV completing a request), the send (MPI_SEND, MPI_ISEND), and the "
                   "ENTERs of the calls around them.")

    def detect(self, ctx, subscribed):
        from .basic import message_rows

        m, _, is_recv = message_rows(ctx)
        recv = m.event[is_recv]
        send = ctx.pointer("sendptr", recv)
        ok = send >= 0
        recv, send = recv[ok], send[ok]
        recv_call, send_call = ctx.enter_of(recv), ctx.enter_of(send)
        ok = (recv_call >= 0) & (send_call >= 0)
        recv, send, recv_call, send_call = recv[ok], send[ok], recv_call[ok], send_call[ok]
        # the enter times of both calls, read by late sender and late receiver alike
        return Instances(recv, np.zeros(len(recv), np.int64),
                         {"recv": recv, "send": send, "recv_call": recv_call,
                          "send_call": send_call, "recv_call_time": ctx.time_of(recv_call),
                          "send_call_time": ctx.time_of(send_call)})


class LateSender(Property):
    name, title, parent, subscribes = "late_sender", "Late Sender", "mpi_point2point", "p2p_messages"
    cube_id = "mpi_latesender"
    description = ("A blocking receive (MPI_Recv, or MPI_Wait/Waitall/Waitany/Waitsome completing "
                   "receives) entered before the matching send call: the receiver waits "
                   "enter(send call) - enter(receive call); for a call completing several "
                   "receives, the maximum over them. Charged to the receive call.")
    diagnosis = ("Receivers wait for senders that start late: balance the work before the "
                 "send, or post the receive later (non-blocking) and compute meanwhile.")

    def detect(self, ctx, msgs):
        rc = msgs["recv_call"]
        blocking = ctx.is_region(rc, ctx.blocking_receive_region)
        wait = msgs["send_call_time"] - msgs["recv_call_time"]
        cand = msgs.select(blocking & (wait > 0))
        wait = wait[blocking & (wait > 0)]
        # one occurrence per receive call: the largest wait among its receives
        keep = first_of_groups(cand["recv_call"], wait)
        inst = cand.select(keep)
        return Instances(inst["recv_call"], wait[keep], inst.columns)


def _message_keys(ctx):
    """Sorted keys of all sends and receives, by destination and by (source,
    destination), each followed by the event id: the prefix counts of messages
    in transfer are binary searches in them.  Built in place: on a large trace
    every temporary array costs fresh memory."""
    from .basic import message_rows

    ev = ctx.events
    m, is_send, is_recv = message_rows(ctx)
    n = np.int64(len(ev) + 1)
    L = np.int64(ctx.n_locations + 1)
    s_ev, r_ev = m.event[is_send], m.event[is_recv]

    def keyed(group, ids):
        group *= n
        group += ids
        group.sort()
        return group

    s_dest = m.peer[is_send].astype(np.int64)
    r_dest = ev.location[r_ev].astype(np.int64)
    s_pair = ev.location[s_ev].astype(np.int64)
    s_pair *= L
    s_pair += s_dest
    r_pair = m.peer[is_recv].astype(np.int64)
    r_pair *= L
    r_pair += r_dest
    return {"n": n, "L": L,
            "send_dest": keyed(s_dest, s_ev), "recv_dest": keyed(r_dest, r_ev),
            "send_pair": keyed(s_pair, s_ev), "recv_pair": keyed(r_pair, r_ev)}


def _in_transfer(ctx, at: np.ndarray, dest: np.ndarray, source=None) -> np.ndarray:
    """Messages to dest (from source, if given) sent before event `at` and not
    received before it: sends before minus receives before (prefix counts)."""
    k = ctx.memo("p2p_message_keys", lambda: _message_keys(ctx))
    n = k["n"]
    if source is None:
        sk, rk, group = k["send_dest"], k["recv_dest"], dest.astype(np.int64)
    else:
        sk, rk = k["send_pair"], k["recv_pair"]
        group = source.astype(np.int64) * k["L"] + dest
    q = group * n + at
    sent = np.searchsorted(sk, q) - _group_starts(sk, group, n)
    received = np.searchsorted(rk, q) - _group_starts(rk, group, n)
    return sent - received


def _group_starts(keys: np.ndarray, group: np.ndarray, n) -> np.ndarray:
    """Per row, the number of keys of groups below its group (keys = group * n +
    event id, sorted): one binary search per possible group rather than per row
    when the groups are few."""
    top = int(group.max()) + 1 if len(group) else 0
    if top > max(len(group), 1 << 16):
        return np.searchsorted(keys, group * n)
    return np.searchsorted(keys, np.arange(top, dtype=np.int64) * n)[group]


def _sent_before_own_call(ctx, msgs, calls: np.ndarray, source=None) -> np.ndarray:
    """Per call: messages the call itself receives whose send precedes the call
    (from source, if given).  A call that completes several receives (MPI_Waitall)
    takes them all at once, so they are no older message waiting in the queue."""
    ev = ctx.events
    early = msgs["send"] < msgs["recv_call"]
    rc_ = msgs["recv_call"][early].astype(np.int64)
    if source is None:
        keys = np.sort(rc_)
        q = calls.astype(np.int64)
    else:
        L = np.int64(ctx.n_locations + 1)
        keys = np.sort(rc_ * L + ev.location[msgs["send"][early]])
        q = calls.astype(np.int64) * L + source
    return np.searchsorted(keys, q, side="right") - np.searchsorted(keys, q, side="left")


def _by_pair_then_send(pair: np.ndarray, send: np.ndarray, n: int) -> np.ndarray:
    """Row order by (pair, send).  Rows come in receive order, which usually is
    send order within a pair: then a stable sort by pair alone (a radix sort when
    pairs fit in 16 bits) is that order."""
    if len(pair) == 0:
        return np.empty(0, dtype=np.int64)
    top = int(pair.max())
    if top < 1 << 16:
        order = np.argsort(pair.astype(np.uint16), kind="stable")
        p, s = pair[order], send[order]
        if not np.any((p[1:] == p[:-1]) & (s[1:] < s[:-1])):
            return order
    if top < (1 << 62) // n:
        return np.argsort(pair * np.int64(n) + send)  # unique keys, one sort
    return np.lexsort((send, pair))


class _LateSenderWrongOrder(Property):
    parent = subscribes = "late_sender"
    same_source = True

    def detect(self, ctx, ls):
        same, other = ctx.memo("late_sender_waiting", lambda: self.waiting(ctx, ls))
        return ls.select(same if self.same_source else (~same & other))

    @staticmethod
    def waiting(ctx, ls):
        """Per Late Sender: whether older messages from the same sender, and from
        other senders, were waiting when the receive call was entered."""
        msgs = ctx.published["p2p_messages"]
        at = ls["recv_call"]
        dest = ctx.events.location[at]
        source = ctx.events.location[ls["send"]].astype(np.int64)
        waiting_same = (_in_transfer(ctx, at, dest, source)
                        - _sent_before_own_call(ctx, msgs, at, source))
        waiting_any = _in_transfer(ctx, at, dest) - _sent_before_own_call(ctx, msgs, at)
        return waiting_same > 0, waiting_any - waiting_same > 0


class LateSenderWrongOrderSameSource(_LateSenderWrongOrder):
    name, title = "late_sender_wrong_order_same_source", "Wrong order, same source"
    description = ("A Late Sender while an older message from the same sender to this receiver "
                   "had already been sent and was not yet received.")
    diagnosis = "The receiver asks for messages in another order than its sender sends them."


class LateSenderWrongOrderDifferentSource(_LateSenderWrongOrder):
    name, title = "late_sender_wrong_order_different_source", "Wrong order, other source"
    same_source = False
    description = ("A Late Sender (not of the same-source kind) while an older message from "
                   "another sender to this receiver had already been sent and was not yet "
                   "received.")
    diagnosis = "Receiving from whichever sender is ready (MPI_ANY_SOURCE) would avoid the wait."


class LateReceiver(Property):
    name, title, parent, subscribes = "late_receiver", "Late Receiver", "mpi_point2point", "p2p_messages"
    cube_id = "mpi_latereceiver"
    description = ("A blocking send (MPI_Send, MPI_Ssend, MPI_Rsend) whose receive call is "
                   "entered later while the send call is still running (it blocks until the "
                   "receive starts): enter(receive call) - enter(send call). Charged to the send.")
    diagnosis = ("The sender waits for a receiver that is late: the message is synchronous or "
                 "too large to buffer. Post receives earlier or send non-blocking.")

    def detect(self, ctx, msgs):
        sc = msgs["send_call"]
        t_recv, t_send = msgs["recv_call_time"], msgs["send_call_time"]
        cand = np.nonzero(ctx.is_region(sc, ctx.blocking_send_region) & (t_recv > t_send))[0]
        leave = ctx.leave_of(sc[cand])  # only for the candidates: the walk is not free
        covers = (leave >= 0) & (ctx.time_of(np.maximum(leave, 0)) >= t_recv[cand])
        keep = cand[covers]
        inst = msgs.select(keep)
        return Instances(inst["send_call"], (t_recv - t_send)[keep], inst.columns)


class MessagesInWrongOrder(Property):
    name, title, parent, subscribes = ("messages_in_wrong_order", "Messages in Wrong Order",
                                       "mpi_point2point", "p2p_messages")
    description = ("A receive of a message while an older message from the same sender to the "
                   "same receiver is still in transfer (sent earlier, received later by a later "
                   "call; paper section 6.3). Messages completed by one call (MPI_Waitall) are "
                   "taken together, in no order. Severity: the duration of that receive call.")
    diagnosis = ("Messages are consumed in another order than sent; buffering them costs time "
                 "and memory.")

    def detect(self, ctx, msgs):
        ev = ctx.events
        send, recv = msgs["send"], msgs["recv"]
        src = ev.location[send].astype(np.int64)
        dst = ev.location[recv].astype(np.int64)
        pair = src * (ctx.n_locations + 1) + dst
        call = msgs["recv_call"].astype(np.int64)
        order = _by_pair_then_send(pair, send, len(ev) + 1)
        # latest receive call among the older messages of the same pair
        older = exclusive_running_max(pair[order], call[order], -1)
        wrong = np.zeros(len(send), dtype=bool)
        wrong[order] = older > call[order]
        inst = msgs.select(wrong)
        call = inst["recv_call"]
        leave = ctx.leave_of(call)
        dur = np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)) - ctx.time_of(call), 0)
        return Instances(call, dur, inst.columns)


PROPERTIES = (P2PMessages, LateSender, LateSenderWrongOrderSameSource,
              LateSenderWrongOrderDifferentSource, LateReceiver, MessagesInWrongOrder)
