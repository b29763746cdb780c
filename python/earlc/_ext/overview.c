/*
 * overview.c - _core.overview_activity and _core.overview_messages: the
 * Python face of earl_overview (csrc/overview), the levels of detail that
 * the timeline pictures and the HTML page's interactive timeline draw
 * (python/earlc/overview.py).  Arrays come in as numpy buffers; results go
 * out as bytes that numpy reads without a copy.  The GIL is released while
 * the C core works.
 */
#include "ext.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "earl_overview.h"
#include "earl_states.h"

#define MAX_LEVELS 32

static PyObject *overview_activity(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"states", "classes", "n_classes", "rows", "t0", "span", "bins",
                             "threads", "tallies", NULL};
    PyObject *states_obj, *classes_obj, *rows_obj, *bins_obj, *trace_obj;
    unsigned int n_classes;
    long long t0, span;
    int threads = 0, want_tallies = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOIOLLO|ip", kwlist, &states_obj,
                                     &classes_obj, &n_classes, &rows_obj, &t0, &span, &bins_obj,
                                     &threads, &want_tallies))
        return NULL;
    earl_states *states = earlc_states_of(states_obj, &trace_obj);
    earl_trace *trace = states ? earlc_trace_of(trace_obj) : NULL;
    if (!trace)
        return NULL;
    uint32_t bins[MAX_LEVELS];
    Py_ssize_t n_levels = PySequence_Check(bins_obj) ? PySequence_Size(bins_obj) : -1;
    if (n_levels < 1 || n_levels > MAX_LEVELS)
        return PyErr_Format(PyExc_ValueError, "overview_activity: bins is a list of 1 to %d "
                            "bin counts", MAX_LEVELS);
    for (Py_ssize_t k = 0; k < n_levels; k++) {
        PyObject *item = PySequence_GetItem(bins_obj, k);
        unsigned long v = item ? PyLong_AsUnsignedLong(item) : 0;
        Py_XDECREF(item);
        if (PyErr_Occurred())
            return NULL;
        if (v < 1 || v > UINT32_MAX)
            return PyErr_Format(PyExc_ValueError, "overview_activity: %lu bins", v);
        bins[k] = (uint32_t)v;
    }
    uint32_t n_regions = earl_trace_defs(trace)->n_regions;
    earlc_buffers held = {.n = 0};
    size_t n_class_entries = (size_t)n_regions + 1, n_rows = (size_t)-1;
    const uint8_t *classes = earlc_buffer_array(&held, classes_obj, 'B', 0, &n_class_entries,
                                                "classes (one per region ref, and one more)");
    const int32_t *rows = classes ? earlc_buffer_array(&held, rows_obj, 'i', 0, &n_rows, "rows")
                                  : NULL;
    PyObject *result = rows ? PyList_New(n_levels) : NULL;
    uint8_t *out[MAX_LEVELS];
    for (Py_ssize_t k = 0; result && k < n_levels; k++) {
        PyObject *b = (size_t)bins[k] * n_rows > (size_t)PY_SSIZE_T_MAX ? NULL :
            PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_rows * bins[k]));
        if (!b) {
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            Py_CLEAR(result);
            break;
        }
        out[k] = (uint8_t *)PyBytes_AS_STRING(b);
        PyList_SET_ITEM(result, k, b);
    }
    if (!result) {
        earlc_buffers_release(&held);
        return NULL;
    }
    PyObject *tallies = want_tallies ?
        PyBytes_FromStringAndSize(NULL, n_levels * (Py_ssize_t)sizeof(earl_overview_tally)) :
        NULL;
    if (want_tallies && !tallies) {
        Py_DECREF(result);
        earlc_buffers_release(&held);
        return NULL;
    }
    earl_overview_tally *tally = tallies ? (earl_overview_tally *)PyBytes_AS_STRING(tallies) :
                                           NULL;
    earl_overview_window w = {.t0 = t0, .span = span};
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_overview_activity_part(trace, earl_states_get_view(states)->enterptr, classes,
                                     n_regions, n_classes, rows, (uint32_t)n_rows, &w, bins,
                                     (uint32_t)n_levels, out, tally, threads, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (rc != EARL_OK) {
        Py_DECREF(result);
        Py_XDECREF(tallies);
        return earlc_raise(&err);
    }
    if (!tallies)
        return result;
    return Py_BuildValue("(NN)", result, tallies);
}

/* The fields of earl_overview_bundle handed to Python, each as a column. */
static const struct {
    const char *name;
    size_t offset;
    int narrow; /* uint32_t, else int64_t */
} bundle_fields[] = {
    {"src", offsetof(earl_overview_bundle, src), 1},
    {"dst", offsetof(earl_overview_bundle, dst), 1},
    {"count", offsetof(earl_overview_bundle, count), 1},
    {"send_first", offsetof(earl_overview_bundle, send_first), 0},
    {"send_last", offsetof(earl_overview_bundle, send_last), 0},
    {"recv_first", offsetof(earl_overview_bundle, recv_first), 0},
    {"recv_last", offsetof(earl_overview_bundle, recv_last), 0},
};

/* One field of every bundle, as bytes of int64. */
static PyObject *column_of(const earl_overview_bundle *b, size_t n, size_t f)
{
    PyObject *col = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    if (!col)
        return NULL;
    int64_t *v = (int64_t *)PyBytes_AS_STRING(col);
    for (size_t k = 0; k < n; k++) {
        const char *at = (const char *)&b[k] + bundle_fields[f].offset;
        v[k] = bundle_fields[f].narrow ? (int64_t)*(const uint32_t *)at : *(const int64_t *)at;
    }
    return col;
}

static PyObject *overview_messages(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"send_time", "recv_time", "src", "dst", "t0", "span", "bins",
                             "bins_per_bundle", NULL};
    PyObject *obj[4];
    long long t0, span;
    unsigned int n_bins, per_bundle;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOLLII", kwlist, &obj[0], &obj[1],
                                     &obj[2], &obj[3], &t0, &span, &n_bins, &per_bundle))
        return NULL;
    earlc_buffers held = {.n = 0};
    size_t n = (size_t)-1;
    const int64_t *send = earlc_buffer_array(&held, obj[0], 'q', 0, &n, "send_time");
    const int64_t *recv = send ? earlc_buffer_array(&held, obj[1], 'q', 0, &n, "recv_time")
                               : NULL;
    const uint32_t *src = recv ? earlc_buffer_array(&held, obj[2], 'I', 0, &n, "src") : NULL;
    const uint32_t *dst = src ? earlc_buffer_array(&held, obj[3], 'I', 0, &n, "dst") : NULL;
    if (!dst) {
        earlc_buffers_release(&held);
        return NULL;
    }
    earl_overview_window w = {.t0 = t0, .span = span};
    earl_overview_bundle *bundles = NULL;
    size_t n_bundles = 0;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_overview_messages(send, recv, src, dst, n, &w, n_bins, per_bundle, &bundles,
                                &n_bundles, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (rc != EARL_OK)
        return earlc_raise(&err);
    PyObject *out = PyDict_New();
    for (size_t f = 0; out && f < sizeof bundle_fields / sizeof *bundle_fields; f++) {
        PyObject *col = column_of(bundles, n_bundles, f);
        if (!col || PyDict_SetItemString(out, bundle_fields[f].name, col) < 0) {
            Py_XDECREF(col);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(col);
    }
    free(bundles);
    return out;
}

static PyMethodDef overview_functions[] = {
    {"overview_activity", (PyCFunction)(void (*)(void))overview_activity,
     METH_VARARGS | METH_KEYWORDS,
     "overview_activity(states, classes, n_classes, rows, t0, span, bins, threads=0, "
     "tallies=False) -> "
     "[bytes]: per "
     "level (bins: a list of bin counts), per (row, bin) the dominant activity class, 254 "
     "idle, 255 nothing (earl_overview.h); with tallies, ([bytes], bytes of one "
     "earl_overview_tally per level) and no class given a bin it did not win "
     "(earl_overview_activity_part)"},
    {"overview_messages", (PyCFunction)(void (*)(void))overview_messages,
     METH_VARARGS | METH_KEYWORDS,
     "overview_messages(send_time, recv_time, src, dst, t0, span, bins, bins_per_bundle) -> "
     "dict of int64 bytes columns src, dst, count, send_first, send_last, recv_first, "
     "recv_last: the messages bundled (earl_overview.h)"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_overview(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "OVERVIEW_TALLY_BYTES", sizeof(earl_overview_tally)) ||
        PyModule_AddIntConstant(module, "OVERVIEW_MAX_CLASSES", EARL_OVERVIEW_MAX_CLASSES))
        return -1;
    return PyModule_AddFunctions(module, overview_functions);
}
