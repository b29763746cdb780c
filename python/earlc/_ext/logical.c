/*
 * logical.c - _core.LogicalTime: the Python face of earl_logical (the
 * logical steps and lateness of the communication events, csrc/hb).
 *
 * _core.LogicalTime(states, progress=None) walks the trace with the GIL
 * released and keeps the states (and through them the trace) alive; its
 * columns come out as _core.Column buffers over the C arrays, which numpy
 * views without a copy (python/earlc/logical.py).
 */
#include <string.h>

#include "ext.h"

#include "earl_hb.h"

typedef struct {
    PyObject_HEAD
    PyObject *states_obj;
    earl_logical *lt;
} LogicalObject;

static void logical_dealloc(PyObject *self)
{
    LogicalObject *o = (LogicalObject *)self;
    earl_logical_free(o->lt);
    Py_XDECREF(o->states_obj);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *logical_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"states", "progress", NULL};
    PyObject *states_obj, *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", kwlist, &states_obj, &progress))
        return NULL;
    PyObject *trace_obj;
    earl_states *st = earlc_states_of(states_obj, &trace_obj);
    earl_trace *tr = st ? earlc_trace_of(trace_obj) : NULL;
    if (!tr)
        return NULL;
    earlc_progress_bridge bridge = {progress, 0};
    earl_hb_options opts = {1, progress != Py_None ? earlc_call_progress : NULL, &bridge};
    earl_logical *lt = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_logical_build(tr, st, &opts, &lt, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK)
        return earlc_raise(&err);
    LogicalObject *o = (LogicalObject *)type->tp_alloc(type, 0);
    if (!o) {
        earl_logical_free(lt);
        return NULL;
    }
    Py_INCREF(states_obj);
    o->states_obj = states_obj;
    o->lt = lt;
    return (PyObject *)o;
}

/* column(name) -> Column: "events" (int64), "step" (uint32), "lateness" (int64). */
static PyObject *logical_column(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    const earl_logical *lt = ((LogicalObject *)self)->lt;
    size_t n = earl_logical_count(lt);
    if (!strcmp(name, "events"))
        return earlc_column_new(self, earl_logical_events(lt), n, sizeof(earl_eid), "q");
    if (!strcmp(name, "step"))
        return earlc_column_new(self, earl_logical_steps(lt), n, sizeof(uint32_t), "I");
    if (!strcmp(name, "lateness"))
        return earlc_column_new(self, earl_logical_lateness(lt), n, sizeof(int64_t), "q");
    return PyErr_Format(PyExc_KeyError, "LogicalTime has no column %s", name);
}

/* info() -> dict: count, steps, cycles_broken, bytes. */
static PyObject *logical_info(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_logical *lt = ((LogicalObject *)self)->lt;
    return Py_BuildValue("{s:n,s:I,s:K,s:n}", "count", (Py_ssize_t)earl_logical_count(lt),
                         "steps", (unsigned)earl_logical_n_steps(lt), "cycles_broken",
                         (unsigned long long)earl_logical_cycles_broken(lt), "bytes",
                         (Py_ssize_t)earl_logical_bytes(lt));
}

static PyMethodDef logical_methods[] = {
    {"column", logical_column, METH_VARARGS, "column(name) -> Column"},
    {"info", logical_info, METH_NOARGS, "info() -> dict"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LogicalType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.LogicalTime",
    .tp_basicsize = sizeof(LogicalObject),
    .tp_dealloc = logical_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Logical steps and lateness of the communication events (see "
              "earlc.logical.LogicalTime).",
    .tp_methods = logical_methods,
    .tp_new = logical_new,
};

int earlc_add_logical_type(PyObject *module)
{
    if (PyType_Ready(&LogicalType) < 0)
        return -1;
    Py_INCREF(&LogicalType);
    return PyModule_AddObject(module, "LogicalTime", (PyObject *)&LogicalType);
}
