/*
 * hb.c - _core.VectorClocks: the Python face of earl_hb (vector timestamps
 * of chosen events and the happened-before test over them).
 *
 * _core.VectorClocks(states, ids, threads=0, progress=None) stamps the
 * events ids (int64, sorted, distinct) with the GIL released and keeps the
 * states (and through them the trace) alive.  Columns come out as
 * _core.Column buffers; the vectorised tests write into a caller's buffer.
 * _core.clocks_from_stamps(width, events, location, position, stamps) makes
 * one of stamps gathered from the parts of a trace (earl_hb_from_stamps).
 */
#include "ext.h"

#include "earl_hb.h"

typedef struct {
    PyObject_HEAD
    PyObject *states_obj;
    earl_hb *hb;
} ClocksObject;

static void clocks_dealloc(PyObject *self)
{
    ClocksObject *c = (ClocksObject *)self;
    earl_hb_free(c->hb);
    Py_XDECREF(c->states_obj);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject ClocksType;

PyObject *earlc_clocks_new(earl_hb *hb, PyObject *owner)
{
    ClocksObject *c = (ClocksObject *)ClocksType.tp_alloc(&ClocksType, 0);
    if (!c) {
        earl_hb_free(hb);
        return NULL;
    }
    Py_XINCREF(owner);
    c->states_obj = owner;
    c->hb = hb;
    return (PyObject *)c;
}

static PyObject *clocks_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"states", "ids", "threads", "progress", NULL};
    PyObject *states_obj, *progress = Py_None;
    Py_buffer ids;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy*|iO", kwlist, &states_obj, &ids, &threads,
                                     &progress))
        return NULL;
    PyObject *trace_obj;
    earl_states *st = earlc_states_of(states_obj, &trace_obj);
    earl_trace *tr = st ? earlc_trace_of(trace_obj) : NULL;
    if (!tr || ids.len % sizeof(earl_eid)) {
        PyBuffer_Release(&ids);
        if (tr)
            PyErr_SetString(PyExc_ValueError, "ids must be an int64 array");
        return NULL;
    }
    earlc_progress_bridge bridge = {progress, 0};
    earl_hb_options opts = {threads, progress != Py_None ? earlc_call_progress : NULL, &bridge};
    earl_hb *hb = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_hb_build(tr, st, (const earl_eid *)ids.buf, (size_t)ids.len / sizeof(earl_eid),
                       &opts, &hb, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ids);
    if (rc != EARL_OK)
        return earlc_raise(&err);
    ClocksObject *c = (ClocksObject *)type->tp_alloc(type, 0);
    if (!c) {
        earl_hb_free(hb);
        return NULL;
    }
    Py_INCREF(states_obj);
    c->states_obj = states_obj;
    c->hb = hb;
    return (PyObject *)c;
}

/* stamps() -> Column of count x width uint32 (row k: the stamp of event k). */
static PyObject *clocks_stamps(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_hb *hb = ((ClocksObject *)self)->hb;
    size_t n = earl_hb_count(hb);
    return earlc_column_new(self, n ? earl_hb_stamp(hb, 0) : NULL, n * earl_hb_width(hb),
                            sizeof(uint32_t), "I");
}

/* info() -> dict: count, width, bytes, warnings. */
static PyObject *clocks_info(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_hb *hb = ((ClocksObject *)self)->hb;
    return Py_BuildValue("{s:n,s:I,s:n,s:K}", "count", (Py_ssize_t)earl_hb_count(hb),
                         "width", (unsigned)earl_hb_width(hb), "bytes",
                         (Py_ssize_t)earl_hb_bytes(hb), "cycles_broken",
                         (unsigned long long)earl_hb_warning_count(hb, EARL_HBW_CYCLE_BROKEN));
}

/* places(out_loc, out_pos): the location (int32) and position (uint32) of
 * every stamped event, written into two buffers of count items. */
static PyObject *clocks_places(PyObject *self, PyObject *args)
{
    const earl_hb *hb = ((ClocksObject *)self)->hb;
    Py_buffer loc, pos;
    if (!PyArg_ParseTuple(args, "w*w*", &loc, &pos))
        return NULL;
    size_t n = earl_hb_count(hb);
    PyObject *r = NULL;
    if ((size_t)loc.len != n * sizeof(int32_t) || (size_t)pos.len != n * sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "places: buffers of count int32 and uint32 expected");
    } else {
        for (size_t k = 0; k < n; k++) {
            ((int32_t *)loc.buf)[k] = earl_hb_location(hb, k);
            ((uint32_t *)pos.buf)[k] = earl_hb_position(hb, k);
        }
        r = Py_None;
        Py_INCREF(r);
    }
    PyBuffer_Release(&loc);
    PyBuffer_Release(&pos);
    return r;
}

/* compare(a, b, out, concurrent): for indices a[k], b[k] (int64 into the
 * stamped events) out[k] = a --> b, or a || b when concurrent is true. */
static PyObject *clocks_compare(PyObject *self, PyObject *args)
{
    const earl_hb *hb = ((ClocksObject *)self)->hb;
    Py_buffer a, b, out;
    int concurrent;
    if (!PyArg_ParseTuple(args, "y*y*w*p", &a, &b, &out, &concurrent))
        return NULL;
    size_t n = (size_t)a.len / sizeof(int64_t), count = earl_hb_count(hb);
    PyObject *r = NULL;
    if (a.len != b.len || a.len % sizeof(int64_t) || (size_t)out.len != n) {
        PyErr_SetString(PyExc_ValueError, "compare: two int64 arrays and a uint8 output of one length");
        goto done;
    }
    const int64_t *ia = a.buf, *ib = b.buf;
    for (size_t k = 0; k < n; k++)
        if (ia[k] < 0 || (size_t)ia[k] >= count || ib[k] < 0 || (size_t)ib[k] >= count) {
            PyErr_SetString(PyExc_IndexError, "compare: index out of the stamped events");
            goto done;
        }
    uint8_t *o = out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t k = 0; k < n; k++)
        o[k] = (uint8_t)(concurrent ? earl_hb_concurrent(hb, (size_t)ia[k], (size_t)ib[k])
                                    : earl_hb_before(hb, (size_t)ia[k], (size_t)ib[k]));
    Py_END_ALLOW_THREADS
    r = Py_None;
    Py_INCREF(r);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    PyBuffer_Release(&out);
    return r;
}

static PyMethodDef clocks_methods[] = {
    {"stamps", clocks_stamps, METH_NOARGS, "stamps() -> Column of count x width uint32"},
    {"info", clocks_info, METH_NOARGS, "info() -> dict"},
    {"places", clocks_places, METH_VARARGS, "places(out_loc, out_pos)"},
    {"compare", clocks_compare, METH_VARARGS, "compare(a, b, out, concurrent)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ClocksType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.VectorClocks",
    .tp_basicsize = sizeof(ClocksObject),
    .tp_dealloc = clocks_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Vector timestamps of chosen events (see earlc.VectorClocks).",
    .tp_methods = clocks_methods,
    .tp_new = clocks_new,
};

/* clocks_from_stamps(width, events, location, position, stamps) -> VectorClocks
 * over stamps computed elsewhere (int64, int32, uint32, uint32 x width). */
static PyObject *clocks_from_stamps(PyObject *module, PyObject *args)
{
    (void)module;
    unsigned width;
    PyObject *events_obj, *loc_obj, *pos_obj, *stamps_obj;
    if (!PyArg_ParseTuple(args, "IOOOO", &width, &events_obj, &loc_obj, &pos_obj, &stamps_obj))
        return NULL;
    earlc_buffers held = {0};
    size_t n = (size_t)-1, entries = (size_t)-1;
    const earl_eid *events = earlc_buffer_array(&held, events_obj, 'q', 0, &n, "events");
    const int32_t *loc = events ? earlc_buffer_array(&held, loc_obj, 'i', 0, &n, "location") : NULL;
    const uint32_t *pos = loc ? earlc_buffer_array(&held, pos_obj, 'I', 0, &n, "position") : NULL;
    const uint32_t *stamps = pos ? earlc_buffer_array(&held, stamps_obj, 'I', 0, &entries,
                                                      "stamps") : NULL;
    if (!stamps) {
        earlc_buffers_release(&held);
        return NULL;
    }
    if (entries != n * (size_t)width) {
        earlc_buffers_release(&held);
        return PyErr_Format(PyExc_ValueError, "stamps: %zu entries for %zu events of %u",
                            entries, n, width);
    }
    earl_hb *hb;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_hb_from_stamps(width, n, events, loc, pos, stamps, &hb, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return earlc_clocks_new(hb, NULL);
}

static PyMethodDef module_functions[] = {
    {"clocks_from_stamps", clocks_from_stamps, METH_VARARGS,
     "clocks_from_stamps(width, events, location, position, stamps) -> VectorClocks"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_hb_type(PyObject *module)
{
    if (PyType_Ready(&ClocksType) < 0)
        return -1;
    Py_INCREF(&ClocksType);
    if (PyModule_AddObject(module, "VectorClocks", (PyObject *)&ClocksType) < 0)
        return -1;
    return PyModule_AddFunctions(module, module_functions);
}
