/*
 * catalog.c - the kernels of the analysis catalog (csrc/catalog,
 * earl_catalog.h) as functions of earlc._core.  Event ids and values come in
 * as buffers of int64 (numpy arrays); results go into int64 arrays the caller
 * allocates (numpy's, which during an analysis come from earlc's warm memory:
 * fresh pages would cost the kernel's zeroing).  The GIL is released while
 * the kernels run.
 */
#include "ext.h"

#include <string.h>

#include "earl_catalog.h"
#include "base/errors.h"
#include "base/mem.h"

/* The next argument as a contiguous buffer of int64 items (writable for an
 * output), its items in *count; NULL with an exception otherwise. */
static int64_t *take(earlc_buffers *a, PyObject *obj, const char *what, int writable, size_t *count)
{
    *count = (size_t)-1;
    return earlc_buffer_array(a, obj, 'q', writable, count, what);
}

/* Take n_in inputs then n_out outputs of args (after `skip` other
 * arguments), all of one length; -1 with an exception otherwise. */
static int take_all(earlc_buffers *a, PyObject *args, int skip, int n_in, int n_out,
                    const char *const *names, int64_t **buf, size_t *n)
{
    if (PyTuple_GET_SIZE(args) != skip + n_in + n_out) {
        PyErr_Format(PyExc_TypeError, "expected %d arguments", skip + n_in + n_out);
        return -1;
    }
    for (int k = 0; k < n_in + n_out; k++) {
        size_t count;
        buf[k] = take(a, PyTuple_GET_ITEM(args, skip + k), names[k], k >= n_in, &count);
        if (!buf[k])
            return -1;
        if (k == 0)
            *n = count;
        else if (count != *n) {
            PyErr_Format(PyExc_ValueError, "%s must have the length of %s", names[k], names[0]);
            return -1;
        }
    }
    return 0;
}

static earl_trace *trace_arg(PyObject *args)
{
    if (PyTuple_GET_SIZE(args) < 1) {
        PyErr_SetString(PyExc_TypeError, "expected a _core.Trace first");
        return NULL;
    }
    return earlc_trace_of(PyTuple_GET_ITEM(args, 0));
}

/* The _core.States first in args, with its trace in *trace; NULL with an
 * exception otherwise. */
static earl_states *states_arg(PyObject *args, earl_trace **trace)
{
    PyObject *trace_obj;
    earl_states *states = PyTuple_GET_SIZE(args) ? earlc_states_of(PyTuple_GET_ITEM(args, 0),
                                                                    &trace_obj) : NULL;
    *trace = states ? earlc_trace_of(trace_obj) : NULL;
    if (!*trace) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "expected a _core.States first");
        return NULL;
    }
    return states;
}

static PyObject *status_result(earl_status st, const earl_error *err)
{
    if (st != EARL_OK)
        return earlc_raise(err);
    Py_RETURN_NONE;
}

/* The keyword argument threads= of a kernel (0: one per core), 1 without
 * it; -1 with an exception when it is no int >= 0. */
static int threads_kw(PyObject *kwargs)
{
    PyObject *value = kwargs ? PyDict_GetItemString(kwargs, "threads") : NULL;
    if (!value)
        return 1;
    long t = PyLong_AsLong(value);
    if (t == -1 && PyErr_Occurred())
        return -1;
    if (t < 0 || t > 1 << 16) {
        PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: one per core)");
        return -1;
    }
    return (int)t;
}

/* p2p_capacity(trace) -> the most rows p2p_messages fills. */
static PyObject *p2p_capacity(PyObject *module, PyObject *trace_obj)
{
    (void)module;
    earl_trace *trace = earlc_trace_of(trace_obj);
    return trace ? PyLong_FromSize_t(earl_p2p_capacity(trace)) : NULL;
}

/* p2p_messages(states, recv, send, recv_call, send_call, recv_call_time,
 * send_call_time, completion_call, request_call, threads=1) -> rows filled,
 * each array of p2p_capacity(trace) items (earl_p2p_find). */
static PyObject *p2p_messages(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static const char *const names[8] = {"recv", "send", "recv_call", "send_call",
                                         "recv_call_time", "send_call_time",
                                         "completion_call", "request_call"};
    earl_trace *trace;
    earl_states *states = states_arg(args, &trace);
    int threads = threads_kw(kwargs);
    if (!states || threads < 0)
        return NULL;
    earlc_buffers a = {.n = 0};
    int64_t *buf[8];
    size_t n;
    if (take_all(&a, args, 1, 0, 8, names, buf, &n) < 0) {
        earlc_buffers_release(&a);
        return NULL;
    }
    if (n < earl_p2p_capacity(trace)) {
        earlc_buffers_release(&a);
        return PyErr_Format(PyExc_ValueError, "p2p_messages: the columns need %zu items",
                            earl_p2p_capacity(trace));
    }
    earl_p2p_messages m = {0, buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7]};
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_p2p_find(trace, states, &m, threads, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return PyLong_FromSize_t(m.n);
}

/* The columns of one side of message_sums as a tuple of bytes of int64. */
static PyObject *sums_tuple(const earl_message_sums *s)
{
    Py_ssize_t bytes = (Py_ssize_t)(s->n * sizeof(int64_t));
    return Py_BuildValue("(y#y#y#y#y#)", (const char *)s->cnode, bytes,
                         (const char *)s->location, bytes, (const char *)s->records, bytes,
                         (const char *)s->payload, bytes, (const char *)s->bytes, bytes);
}

/* message_sums(trace, event_cnode) -> (sends, receives), each (cnode,
 * location, records, payload, bytes) as bytes of int64, one item per (call
 * path, location) (earl_message_sums_build; few rows). */
static PyObject *message_sums(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *trace_obj;
    Py_buffer cnode;
    if (!PyArg_ParseTuple(args, "Oy*", &trace_obj, &cnode))
        return NULL;
    earl_trace *trace = earlc_trace_of(trace_obj);
    if (!trace) {
        PyBuffer_Release(&cnode);
        return NULL;
    }
    const earl_events *ev = earl_trace_events(trace);
    if ((size_t)cnode.len != ev->count * sizeof(int32_t)) {
        PyBuffer_Release(&cnode);
        return PyErr_Format(PyExc_ValueError, "message_sums: event_cnode must hold one int32 "
                            "per event (%zu)", ev->count);
    }
    earl_message_sums sends, recvs;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_message_sums_build(ev, cnode.buf, earl_trace_defs(trace)->n_locations, &sends,
                                 &recvs, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&cnode);
    if (st != EARL_OK)
        return earlc_raise(&err);
    PyObject *out = Py_BuildValue("(NN)", sums_tuple(&sends), sums_tuple(&recvs));
    earl_message_sums_free(&sends);
    earl_message_sums_free(&recvs);
    return out;
}

/* wrong_order(trace, recv, recv_call, send, late_call, late_send, out):
 * per Late Sender, the location of the sender of the first message its
 * location receives later and that was sent before its own (-1: none). */
static PyObject *wrong_order(PyObject *module, PyObject *args)
{
    (void)module;
    static const char *const msg_names[3] = {"recv", "recv_call", "send"};
    static const char *const late_names[3] = {"late_call", "late_send", "out"};
    earl_trace *trace = trace_arg(args);
    if (!trace)
        return NULL;
    if (PyTuple_GET_SIZE(args) != 7)
        return PyErr_Format(PyExc_TypeError, "wrong_order takes 7 arguments");
    earlc_buffers a = {.n = 0};
    int64_t *msg[3], *late[3];
    size_t n_msgs, n_late;
    PyObject *msg_args = PyTuple_GetSlice(args, 0, 4), *late_args = PyTuple_GetSlice(args, 3, 7);
    int ok = msg_args && late_args &&
             take_all(&a, msg_args, 1, 3, 0, msg_names, msg, &n_msgs) == 0 &&
             take_all(&a, late_args, 1, 2, 1, late_names, late, &n_late) == 0;
    Py_XDECREF(msg_args);
    Py_XDECREF(late_args);
    if (!ok) {
        earlc_buffers_release(&a);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_wrong_order(earl_trace_events(trace), earl_trace_defs(trace)->n_locations, n_msgs,
                          msg[0], msg[1], msg[2], n_late, late[0], late[1], late[2], &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    return status_result(st, &err);
}

/* The LEAVE of each ENTER: leaves(states, ids, out, threads=1), and
 * leaves_after(states, ids, after, out, threads=1) knowing an event inside
 * each call; both follow the EARL layer's 32-bit enterptr.  One conversion
 * for both. */
static PyObject *leave_lookup(PyObject *args, PyObject *kwargs, int with_after)
{
    static const char *const names[3] = {"ids", "after", "out"};
    static const char *const names_plain[2] = {"ids", "out"};
    earl_trace *trace;
    earl_states *states = states_arg(args, &trace);
    if (!states)
        return NULL;
    const earl_events *ev = earl_trace_events(trace);
    const earl_eid32 *enterptr = earl_states_get_view(states)->enterptr;
    int threads = threads_kw(kwargs);
    if (threads < 0)
        return NULL;
    earlc_buffers a = {.n = 0};
    int64_t *buf[3];
    size_t n;
    if (take_all(&a, args, 1, with_after ? 2 : 1, 1, with_after ? names : names_plain, buf,
                 &n) < 0) {
        earlc_buffers_release(&a);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    if (with_after)
        st = earl_leaves_after(ev, enterptr, buf[0], buf[1], n, buf[2], threads, &err);
    else
        st = earl_leaves(ev, enterptr, buf[0], n, buf[1], threads, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    return status_result(st, &err);
}

static PyObject *leaves(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    return leave_lookup(args, kwargs, 0);
}

static PyObject *leaves_after(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    return leave_lookup(args, kwargs, 1);
}

/* collective_begins(trace, ends, calls, out): the MPI_COLLECTIVE_BEGIN of
 * each MPI_COLLECTIVE_END inside its call (-1: none). */
static PyObject *collective_begins(PyObject *module, PyObject *args)
{
    (void)module;
    static const char *const names[3] = {"ends", "calls", "out"};
    earl_trace *trace = trace_arg(args);
    if (!trace)
        return NULL;
    earlc_buffers a = {.n = 0};
    int64_t *buf[3];
    size_t n;
    if (take_all(&a, args, 1, 2, 1, names, buf, &n) < 0) {
        earlc_buffers_release(&a);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_collective_begins(earl_trace_events(trace), earl_trace_defs(trace)->n_locations,
                                buf[0], buf[1], n, buf[2], &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    return status_result(st, &err);
}

/* messages_out_of_order(trace, recv, recv_call, send, out, threads=1): out (a
 * uint8 per row) says whether an earlier-sent message of the row's pair is
 * received by a later call (earl_messages_out_of_order). */
static PyObject *messages_out_of_order(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static const char *const names[3] = {"recv", "recv_call", "send"};
    earl_trace *trace = trace_arg(args);
    int threads = threads_kw(kwargs);
    if (!trace || threads < 0)
        return NULL;
    if (PyTuple_GET_SIZE(args) != 5)
        return PyErr_Format(PyExc_TypeError, "expected 5 arguments");
    earlc_buffers a = {.n = 0};
    int64_t *buf[3];
    size_t n = 0, count;
    for (int k = 0; k < 3; k++) {
        buf[k] = take(&a, PyTuple_GET_ITEM(args, 1 + k), names[k], 0, &count);
        if (buf[k] && k && count != n) {
            PyErr_Format(PyExc_ValueError, "%s must have the length of recv", names[k]);
            buf[k] = NULL;
        }
        if (!buf[k]) {
            earlc_buffers_release(&a);
            return NULL;
        }
        n = count;
    }
    size_t n_out = (size_t)-1;
    uint8_t *out = earlc_buffer_array(&a, PyTuple_GET_ITEM(args, 4), 'B', 1, &n_out, "out");
    if (!out || n_out != n) {
        earlc_buffers_release(&a);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "out must have a byte per row");
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_messages_out_of_order(earl_trace_events(trace), earl_trace_defs(trace)->n_locations,
                                    n, buf[0], buf[1], buf[2], threads, out, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    return status_result(st, &err);
}

/* select_events(trace, kinds, regions=None, threads=1) -> a writable buffer of
 * the int64 ids of the events whose kind is wanted (kinds: 256 bytes, one per
 * kind value) and, with regions (a byte per region ref, one more for refs
 * beyond), that are ENTERs of a wanted region; ascending (earl_select_*). */
static PyObject *select_events(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = {"trace", "kinds", "regions", "threads", NULL};
    PyObject *trace_obj, *regions_obj = Py_None;
    Py_buffer kinds, regions = {0};
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy*|Oi", kwlist, &trace_obj, &kinds,
                                     &regions_obj, &threads))
        return NULL;
    earl_trace *trace = earlc_trace_of(trace_obj);
    int have_regions = regions_obj != Py_None;
    if (!trace || kinds.len != 256 || threads < 0 ||
        (have_regions && PyObject_GetBuffer(regions_obj, &regions, PyBUF_SIMPLE) < 0)) {
        if (trace && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, threads < 0 ? "threads must be >= 0"
                                                          : "kinds must have 256 bytes");
        PyBuffer_Release(&kinds);
        return NULL;
    }
    if (have_regions && regions.len < 1) {
        PyBuffer_Release(&kinds);
        PyBuffer_Release(&regions);
        return PyErr_Format(PyExc_ValueError, "regions must have a byte for refs beyond");
    }
    const earl_events *ev = earl_trace_events(trace);
    const uint8_t *table = have_regions ? regions.buf : NULL;
    size_t n_regions = have_regions ? (size_t)regions.len - 1 : 0;
    earl_selection sel;
    earl_eid *out;
    Py_BEGIN_ALLOW_THREADS
    earl_select_count(ev, kinds.buf, table, n_regions, threads, &sel);
    out = earl_mem_alloc_temp((sel.total ? sel.total : 1) * sizeof *out);
    if (out)
        earl_select_fill(ev, kinds.buf, table, n_regions, &sel, out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&kinds);
    if (have_regions)
        PyBuffer_Release(&regions);
    if (!out)
        return PyErr_NoMemory();
    return earlc_column_of_block(out, sel.total, sizeof *out, "q");
}

/* first_of_runs(keys, values, out) -> rows written to out. */
static PyObject *first_of_runs(PyObject *module, PyObject *args)
{
    (void)module;
    static const char *const names[3] = {"keys", "values", "out"};
    earlc_buffers a = {.n = 0};
    int64_t *buf[3];
    size_t n;
    if (take_all(&a, args, 0, 2, 1, names, buf, &n) < 0) {
        earlc_buffers_release(&a);
        return NULL;
    }
    size_t found;
    Py_BEGIN_ALLOW_THREADS
    found = earl_first_of_runs(n, buf[0], buf[1], buf[2]);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    return PyLong_FromSize_t(found);
}

/* ids_in_set(values, set, out): out[k] = 1 when values[k] is in set (int64,
 * ascending), else 0 (out: uint8, the length of values). */
static PyObject *ids_in_set(PyObject *module, PyObject *args)
{
    (void)module;
    if (PyTuple_GET_SIZE(args) != 3)
        return PyErr_Format(PyExc_TypeError, "ids_in_set takes 3 arguments");
    earlc_buffers a = {.n = 0};
    size_t n = (size_t)-1, m = (size_t)-1;
    int64_t *values = take(&a, PyTuple_GET_ITEM(args, 0), "values", 0, &n);
    int64_t *set = values ? take(&a, PyTuple_GET_ITEM(args, 1), "set", 0, &m) : NULL;
    uint8_t *out = set ? earlc_buffer_array(&a, PyTuple_GET_ITEM(args, 2), 'B', 1, &n, "out")
                       : NULL;
    if (!out) {
        earlc_buffers_release(&a);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    earl_ids_in_set(n, values, m, set, out);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    Py_RETURN_NONE;
}

/* exclusive_running_max(keys, values, out, floor). */
static PyObject *exclusive_running_max(PyObject *module, PyObject *args)
{
    (void)module;
    static const char *const names[3] = {"keys", "values", "out"};
    if (PyTuple_GET_SIZE(args) != 4)
        return PyErr_Format(PyExc_TypeError, "exclusive_running_max takes 4 arguments");
    long long floor = PyLong_AsLongLong(PyTuple_GET_ITEM(args, 3));
    if (floor == -1 && PyErr_Occurred())
        return NULL;
    earlc_buffers a = {.n = 0};
    int64_t *buf[3];
    size_t n;
    PyObject *arrays = PyTuple_GetSlice(args, 0, 3);
    int ok = arrays && take_all(&a, arrays, 0, 2, 1, names, buf, &n) == 0;
    Py_XDECREF(arrays);
    if (!ok) {
        earlc_buffers_release(&a);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    earl_exclusive_running_max(n, buf[0], buf[1], floor, buf[2]);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&a);
    Py_RETURN_NONE;
}

static PyMethodDef catalog_functions[] = {
    {"p2p_capacity", p2p_capacity, METH_O, "p2p_capacity(trace) -> rows p2p_messages may fill"},
    {"p2p_messages", (PyCFunction)(void (*)(void))p2p_messages, METH_VARARGS | METH_KEYWORDS,
     "p2p_messages(states, recv, send, recv_call, send_call, recv_call_time, send_call_time, "
     "completion_call, request_call) -> rows filled"},
    {"message_sums", message_sums, METH_VARARGS,
     "message_sums(trace, event_cnode) -> (sends, receives), each (cnode, location, records, "
     "payload, bytes)"},
    {"wrong_order", wrong_order, METH_VARARGS,
     "wrong_order(trace, recv, recv_call, send, late_call, late_send, out)"},
    {"leaves", (PyCFunction)(void (*)(void))leaves, METH_VARARGS | METH_KEYWORDS,
     "leaves(states, ids, out, threads=1)"},
    {"leaves_after", (PyCFunction)(void (*)(void))leaves_after, METH_VARARGS | METH_KEYWORDS,
     "leaves_after(states, ids, after, out, threads=1)"},
    {"collective_begins", collective_begins, METH_VARARGS,
     "collective_begins(trace, ends, calls, out)"},
    {"messages_out_of_order", (PyCFunction)(void (*)(void))messages_out_of_order,
     METH_VARARGS | METH_KEYWORDS,
     "messages_out_of_order(trace, recv, recv_call, send, out, threads=1)"},
    {"select_events", (PyCFunction)(void (*)(void))select_events, METH_VARARGS | METH_KEYWORDS,
     "select_events(trace, kinds, regions=None, threads=1) -> int64 ids (a writable buffer)"},
    {"first_of_runs", first_of_runs, METH_VARARGS,
     "first_of_runs(keys, values, out) -> rows written (the first largest of each run)"},
    {"ids_in_set", ids_in_set, METH_VARARGS,
     "ids_in_set(values, set, out): out[k] = values[k] in set (ascending int64; out uint8)"},
    {"exclusive_running_max", exclusive_running_max, METH_VARARGS,
     "exclusive_running_max(keys, values, out, floor)"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_catalog(PyObject *module)
{
    return PyModule_AddFunctions(module, catalog_functions);
}
