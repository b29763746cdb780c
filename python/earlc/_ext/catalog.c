/*
 * catalog.c - the kernels of the analysis catalog (csrc/catalog,
 * earl_catalog.h) as functions of earlc._core.  Event ids come in as
 * buffers of int64 (numpy arrays), results go out as bytes of int64 for
 * numpy.frombuffer; the GIL is released while the kernels run.
 */
#include "ext.h"

#include "earl_catalog.h"

/* Buffers of int64 given to a kernel, released together. */
typedef struct int64_args {
    Py_buffer view[8];
    int n;
} int64_args;

static void release_args(int64_args *a)
{
    for (int k = 0; k < a->n; k++)
        PyBuffer_Release(&a->view[k]);
    a->n = 0;
}

/* The next argument as int64 items; -1 with ValueError when its size is no
 * multiple of 8 bytes or it is not contiguous. */
static int take_int64(int64_args *a, PyObject *obj, const char *what, size_t *count)
{
    Py_buffer *v = &a->view[a->n];
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    a->n++;
    if (v->len % (Py_ssize_t)sizeof(int64_t)) {
        PyErr_Format(PyExc_ValueError, "%s must hold int64 items", what);
        return -1;
    }
    *count = (size_t)v->len / sizeof(int64_t);
    return 0;
}

/* wrong_order(trace, recv, recv_call, send, late_call, late_send) -> bytes
 * of int64: per Late Sender, the location of the sender of the first message
 * its location receives later and that was sent before its own (-1: none). */
static PyObject *wrong_order(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *trace_obj, *obj[5];
    if (!PyArg_ParseTuple(args, "OOOOOO", &trace_obj, &obj[0], &obj[1], &obj[2], &obj[3],
                          &obj[4]))
        return NULL;
    earl_trace *trace = earlc_trace_of(trace_obj);
    if (!trace)
        return NULL;
    static const char *names[5] = {"recv", "recv_call", "send", "late_call", "late_send"};
    int64_args a = {.n = 0};
    size_t count[5];
    for (int k = 0; k < 5; k++)
        if (take_int64(&a, obj[k], names[k], &count[k]) < 0) {
            release_args(&a);
            return NULL;
        }
    if (count[1] != count[0] || count[2] != count[0] || count[4] != count[3]) {
        release_args(&a);
        return PyErr_Format(PyExc_ValueError, "wrong_order: recv, recv_call and send must have "
                            "one length, late_call and late_send another");
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count[3] * sizeof(int64_t)));
    if (!out) {
        release_args(&a);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_wrong_order(earl_trace_events(trace), earl_trace_defs(trace)->n_locations,
                          count[0], a.view[0].buf, a.view[1].buf, a.view[2].buf, count[3],
                          a.view[3].buf, a.view[4].buf, (int64_t *)PyBytes_AS_STRING(out), &err);
    Py_END_ALLOW_THREADS
    release_args(&a);
    if (st != EARL_OK) {
        Py_DECREF(out);
        return earlc_raise(&err);
    }
    return out;
}

/* leaves(trace, enterptr, ids) -> bytes of int64: the LEAVE of each ENTER. */
static PyObject *leaves(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *trace_obj, *enterptr_obj, *ids_obj;
    if (!PyArg_ParseTuple(args, "OOO", &trace_obj, &enterptr_obj, &ids_obj))
        return NULL;
    earl_trace *trace = earlc_trace_of(trace_obj);
    if (!trace)
        return NULL;
    const earl_events *ev = earl_trace_events(trace);
    int64_args a = {.n = 0};
    size_t n_enterptr, n;
    if (take_int64(&a, enterptr_obj, "enterptr", &n_enterptr) < 0 ||
        take_int64(&a, ids_obj, "ids", &n) < 0) {
        release_args(&a);
        return NULL;
    }
    if (n_enterptr != ev->count) {
        release_args(&a);
        return PyErr_Format(PyExc_ValueError, "leaves: enterptr must hold one id per event "
                            "(%zu), not %zu", ev->count, n_enterptr);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    if (!out) {
        release_args(&a);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_leaves(ev, a.view[0].buf, a.view[1].buf, n, (earl_eid *)PyBytes_AS_STRING(out),
                     &err);
    Py_END_ALLOW_THREADS
    release_args(&a);
    if (st != EARL_OK) {
        Py_DECREF(out);
        return earlc_raise(&err);
    }
    return out;
}

/* The keys and values of a group reduction, of one length. */
static int take_groups(int64_args *a, PyObject *keys, PyObject *values, size_t *n)
{
    size_t n_values;
    if (take_int64(a, keys, "keys", n) < 0 || take_int64(a, values, "values", &n_values) < 0)
        return -1;
    if (n_values != *n) {
        PyErr_SetString(PyExc_ValueError, "keys and values must have one length");
        return -1;
    }
    return 0;
}

/* first_of_groups(keys, values) -> bytes of int64 (row numbers), or None
 * when the keys are not sorted. */
static PyObject *first_of_groups(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *keys, *values;
    if (!PyArg_ParseTuple(args, "OO", &keys, &values))
        return NULL;
    int64_args a = {.n = 0};
    size_t n;
    if (take_groups(&a, keys, values, &n) < 0) {
        release_args(&a);
        return NULL;
    }
    int64_t *rows = PyMem_RawMalloc((n ? n : 1) * sizeof *rows);
    if (!rows) {
        release_args(&a);
        return PyErr_NoMemory();
    }
    ptrdiff_t found;
    Py_BEGIN_ALLOW_THREADS
    found = earl_first_of_groups(n, a.view[0].buf, a.view[1].buf, rows);
    Py_END_ALLOW_THREADS
    release_args(&a);
    PyObject *out = found < 0 ? Py_NewRef(Py_None)
                              : PyBytes_FromStringAndSize((const char *)rows,
                                                          (Py_ssize_t)(found * sizeof *rows));
    PyMem_RawFree(rows);
    return out;
}

/* exclusive_running_max(keys, values, floor) -> bytes of int64. */
static PyObject *exclusive_running_max(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *keys, *values;
    long long floor;
    if (!PyArg_ParseTuple(args, "OOL", &keys, &values, &floor))
        return NULL;
    int64_args a = {.n = 0};
    size_t n;
    if (take_groups(&a, keys, values, &n) < 0) {
        release_args(&a);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    if (out) {
        Py_BEGIN_ALLOW_THREADS
        earl_exclusive_running_max(n, a.view[0].buf, a.view[1].buf, floor,
                                   (int64_t *)PyBytes_AS_STRING(out));
        Py_END_ALLOW_THREADS
    }
    release_args(&a);
    return out;
}

static PyMethodDef catalog_functions[] = {
    {"wrong_order", wrong_order, METH_VARARGS,
     "wrong_order(trace, recv, recv_call, send, late_call, late_send) -> bytes of int64"},
    {"leaves", leaves, METH_VARARGS, "leaves(trace, enterptr, ids) -> bytes of int64"},
    {"first_of_groups", first_of_groups, METH_VARARGS,
     "first_of_groups(keys, values) -> bytes of int64 row numbers, None for unsorted keys"},
    {"exclusive_running_max", exclusive_running_max, METH_VARARGS,
     "exclusive_running_max(keys, values, floor) -> bytes of int64"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_catalog(PyObject *module)
{
    return PyModule_AddFunctions(module, catalog_functions);
}
