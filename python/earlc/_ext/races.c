/*
 * races.c - _core.Races: the Python face of earl_races (the message-race
 * analysis, csrc/include/earl_races.h).
 *
 * _core.Races(trace, states, requested_source=None, requested_tag=None,
 * lamport=False, progress=None) runs the analysis with the GIL released and
 * keeps the states (and through them the trace) alive.  The result's arrays
 * come out as _core.Column buffers (no copy); counts and warnings as a dict,
 * for python/earlc/races.py to wrap.
 */
#include "ext.h"

#include "earl_races.h"

typedef struct {
    PyObject_HEAD
    PyObject *trace_obj;
    PyObject *states_obj;
    earl_races *races;
} RacesObject;

static void races_dealloc(PyObject *self)
{
    RacesObject *r = (RacesObject *)self;
    earl_races_free(r->races);
    Py_XDECREF(r->states_obj);
    Py_XDECREF(r->trace_obj);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject RacesType;

PyObject *earlc_races_new(earl_races *races, PyObject *trace_obj, PyObject *states_obj)
{
    RacesObject *r = (RacesObject *)RacesType.tp_alloc(&RacesType, 0);
    if (!r) {
        earl_races_free(races);
        return NULL;
    }
    Py_XINCREF(trace_obj);
    Py_XINCREF(states_obj);
    r->trace_obj = trace_obj;
    r->states_obj = states_obj;
    r->races = races;
    return (PyObject *)r;
}

int earlc_races_rows(PyObject *obj, Py_buffer *buf, size_t rows, const char *what)
{
    if (obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, buf, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if ((size_t)buf->len != rows * sizeof(int32_t)) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zu int32 values (one per message row), "
                     "not %zd bytes", what, rows, buf->len);
        PyBuffer_Release(buf);
        return -1;
    }
    return 1;
}

static PyObject *races_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"trace", "states", "requested_source", "requested_tag", "lamport",
                             "progress", NULL};
    PyObject *trace_obj, *states_obj, *source_obj = Py_None, *tag_obj = Py_None;
    PyObject *progress = Py_None;
    int lamport = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOpO", kwlist, &trace_obj, &states_obj,
                                     &source_obj, &tag_obj, &lamport, &progress))
        return NULL;
    earl_trace *tr = earlc_trace_of(trace_obj);
    earl_states *st = tr ? earlc_states_of(states_obj, NULL) : NULL;
    if (!st)
        return NULL;
    size_t rows = earl_trace_events(tr)->msg.count;
    Py_buffer source = {0}, tag = {0};
    int has_source = earlc_races_rows(source_obj, &source, rows, "requested_source");
    if (has_source < 0)
        return NULL;
    int has_tag = earlc_races_rows(tag_obj, &tag, rows, "requested_tag");
    if (has_tag < 0) {
        if (has_source)
            PyBuffer_Release(&source);
        return NULL;
    }
    earlc_progress_bridge bridge = {progress, 0};
    earl_races_options opts = {
        .requested_source = has_source ? source.buf : NULL,
        .requested_tag = has_tag ? tag.buf : NULL,
        .clocks = lamport ? EARL_RACES_LAMPORT : EARL_RACES_VECTOR,
        .progress = progress != Py_None ? earlc_call_progress : NULL,
        .progress_data = &bridge,
    };
    earl_races *races = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_races_build(tr, st, &opts, &races, &err);
    Py_END_ALLOW_THREADS
    if (has_source)
        PyBuffer_Release(&source);
    if (has_tag)
        PyBuffer_Release(&tag);
    if (rc != EARL_OK)
        return earlc_raise(&err);
    RacesObject *r = (RacesObject *)type->tp_alloc(type, 0);
    if (!r) {
        earl_races_free(races);
        return NULL;
    }
    Py_INCREF(trace_obj);
    Py_INCREF(states_obj);
    r->trace_obj = trace_obj;
    r->states_obj = states_obj;
    r->races = races;
    return (PyObject *)r;
}

static PyObject *races_column(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    const earl_races_view *v = earl_races_get_view(((RacesObject *)self)->races);
    size_t nr = v->n_receives, np = v->n_pairs, nf = v->n_findings;
#define C(nm, ptr, count, fmt)                                                        \
    if (strcmp(name, nm) == 0)                                                        \
        return earlc_column_new(self, (ptr), (count), sizeof(*(ptr)), fmt);
    C("recv", v->recv, nr, "q")
    C("recv_posted", v->recv_posted, nr, "q")
    C("recv_send", v->recv_send, nr, "q")
    C("recv_any_tag", v->recv_any_tag, nr, "B")
    C("alt_start", v->alt_start, nr + 1, "Q")
    C("alt_send", v->alt_send, np, "q")
    C("alt_lamport", v->alt_lamport, np, "B")
    C("finding_kind", v->finding_kind, nf, "B")
    C("finding_location", v->finding_location, nf, "i")
    C("finding_event", v->finding_event, nf, "q")
    C("finding_count", v->finding_count, nf, "Q")
#undef C
    return PyErr_Format(PyExc_KeyError, "no races column named %R", arg);
}

static PyObject *races_info(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const earl_races *races = ((RacesObject *)self)->races;
    const earl_races_view *v = earl_races_get_view(races);
    PyObject *warnings = PyDict_New(), *kinds = PyTuple_New(EARL_RACES_FINDING_KIND_COUNT);
    if (!warnings || !kinds)
        goto fail;
    for (int c = 0; c < EARL_RACES_WARNING_CODE_COUNT; c++) {
        PyObject *n = PyLong_FromUnsignedLongLong(
            earl_races_warning_count(races, (earl_races_warning_code)c));
        if (!n || PyDict_SetItemString(warnings,
                                       earl_races_warning_code_name((earl_races_warning_code)c),
                                       n) < 0) {
            Py_XDECREF(n);
            goto fail;
        }
        Py_DECREF(n);
    }
    for (int k = 0; k < EARL_RACES_FINDING_KIND_COUNT; k++)
        PyTuple_SET_ITEM(kinds, k, PyUnicode_FromString(
                                       earl_races_finding_kind_name((earl_races_finding_kind)k)));
    return Py_BuildValue("{s:s,s:K,s:N,s:N,s:n,s:n}", "clocks",
                         v->clocks == EARL_RACES_LAMPORT ? "lamport" : "vector",
                         "lamport_missed", (unsigned long long)v->lamport_missed,
                         "warnings", warnings, "finding_kinds", kinds,
                         "peak_bytes", (Py_ssize_t)earl_races_peak_bytes(races),
                         "bytes", (Py_ssize_t)earl_races_bytes(races));
fail:
    Py_XDECREF(warnings);
    Py_XDECREF(kinds);
    return NULL;
}

static PyMethodDef races_methods[] = {
    {"column", races_column, METH_O, "column(name) -> Column: zero-copy buffer of one array"},
    {"info", races_info, METH_NOARGS,
     "info() -> dict: clocks, lamport_missed, warnings, finding kinds, bytes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RacesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.Races",
    .tp_basicsize = sizeof(RacesObject),
    .tp_dealloc = races_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Races(trace, states, requested_source=None, requested_tag=None, lamport=False, "
              "progress=None): message races of a trace (see earlc.races).",
    .tp_methods = races_methods,
    .tp_new = races_new,
};

int earlc_add_races_type(PyObject *module)
{
    if (PyType_Ready(&RacesType) < 0)
        return -1;
    Py_INCREF(&RacesType);
    return PyModule_AddObject(module, "Races", (PyObject *)&RacesType);
}
