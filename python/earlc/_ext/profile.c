/*
 * profile.c - _core.profile_time and _core.profile_inclusive: the Python face
 * of earl_profile (csrc/profile), the event passes behind the time profile and
 * the flat profile of python/earlc/profiles.py.  profile_time reads the EARL
 * layer's 32-bit enterptr through its _core.States; profile_inclusive takes a
 * _core.Trace and its leaveptr array (any buffer of int64 event ids).  Both
 * run with the GIL released and return their sums as bytes of int64 for
 * numpy to read (python/earlc/profiles.py builds the DataFrames).
 */
#include <string.h>

#include "ext.h"
#include "earl_profile.h"
#include "earl_states.h"

/* A zeroed bytes object of n int64 sums (filled before anyone sees it). */
static PyObject *zeroed(size_t n, size_t item)
{
    if (n > (size_t)PY_SSIZE_T_MAX / item)
        return PyErr_Format(PyExc_MemoryError, "profile: %zu sums do not fit in memory", n);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * item));
    if (b)
        memset(PyBytes_AS_STRING(b), 0, n * item);
    return b;
}

/* The trace behind obj, with ptr checked to hold one int64 per event. */
static earl_trace *trace_and_pointers(PyObject *obj, Py_buffer *ptr, const char *what)
{
    earl_trace *trace = earlc_trace_of(obj);
    if (!trace)
        return NULL;
    size_t n = earl_trace_events(trace)->count;
    if ((size_t)ptr->len != n * sizeof(earl_eid)) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zu int64 event ids", what, n);
        return NULL;
    }
    return trace;
}

static PyObject *profile_time(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"states", "t0", "span", "bins", "regions", NULL};
    PyObject *states_obj, *trace_obj;
    long long t0, span;
    unsigned int n_bins, n_regions;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OLLII", kwlist, &states_obj, &t0, &span,
                                     &n_bins, &n_regions))
        return NULL;
    if (n_bins == 0)
        return PyErr_Format(PyExc_ValueError, "profile_time: bins must be at least 1");
    earl_states *states = earlc_states_of(states_obj, &trace_obj);
    earl_trace *trace = states ? earlc_trace_of(trace_obj) : NULL;
    if (!trace)
        return NULL;
    PyObject *totals = zeroed(((size_t)n_regions + 1) * n_bins, sizeof(int64_t));
    PyObject *present = totals ? zeroed((size_t)n_regions + 1, 1) : NULL;
    if (!present) {
        Py_XDECREF(totals);
        return NULL;
    }
    earl_profile_bins bins = {.t0 = t0, .span = span, .n_bins = n_bins};
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_profile_time(trace, earl_states_get_view(states)->enterptr, &bins, n_regions,
                           (int64_t *)PyBytes_AS_STRING(totals),
                           (uint8_t *)PyBytes_AS_STRING(present), &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK) {
        Py_XDECREF(totals);
        Py_XDECREF(present);
        return earlc_raise(&err);
    }
    return Py_BuildValue("NN", totals, present);
}

static PyObject *profile_inclusive(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"trace", "leaveptr", "regions", "per_location", NULL};
    PyObject *trace_obj;
    Py_buffer leaveptr;
    unsigned int n_regions;
    int per_location = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy*I|p", kwlist, &trace_obj, &leaveptr,
                                     &n_regions, &per_location))
        return NULL;
    earl_trace *trace = trace_and_pointers(trace_obj, &leaveptr, "leaveptr");
    PyObject *totals = NULL;
    if (trace) {
        size_t n_loc = earl_trace_defs(trace)->n_locations;
        totals = zeroed((size_t)n_regions * (per_location ? n_loc : 1), sizeof(int64_t));
    }
    if (!totals) {
        PyBuffer_Release(&leaveptr);
        return NULL;
    }
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_profile_inclusive(trace, (const earl_eid *)leaveptr.buf, n_regions, per_location,
                                (int64_t *)PyBytes_AS_STRING(totals), &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&leaveptr);
    if (rc != EARL_OK) {
        Py_DECREF(totals);
        return earlc_raise(&err);
    }
    return totals;
}

static PyMethodDef profile_functions[] = {
    {"profile_time", (PyCFunction)(void (*)(void))profile_time, METH_VARARGS | METH_KEYWORDS,
     "profile_time(states, t0, span, bins, regions) -> (totals, present): exclusive "
     "ticks per (region, bin) as (regions + 1) x bins int64 bytes (the last row: undefined "
     "regions) and one flag byte per row that got time"},
    {"profile_inclusive", (PyCFunction)(void (*)(void))profile_inclusive,
     METH_VARARGS | METH_KEYWORDS,
     "profile_inclusive(trace, leaveptr, regions, per_location=False) -> bytes: inclusive "
     "ticks per region (per region * n_locations + location) as int64"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_profile(PyObject *module)
{
    return PyModule_AddFunctions(module, profile_functions);
}
