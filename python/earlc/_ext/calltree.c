/*
 * calltree.c - _core.CallTree: the call tree of a trace (csrc/calltree.c)
 * with its columns as zero-copy buffers.  Built from a _core.States: the
 * trace it belongs to and the 32-bit enterptr the EARL layer keeps (no int64
 * copy); the GIL is released while building.  States built with
 * calltree=True hand over the tree their pass built (the first CallTree of
 * them takes it; later ones build their own).
 */
#include "ext.h"
#include "earl_calltree.h"
#include "earl_states.h"

typedef struct {
    PyObject_HEAD
    earl_calltree *tree;
    PyObject *states; /* keeps the states, and through them the trace, alive */
} CallTreeObject;

static void calltree_dealloc(PyObject *self)
{
    CallTreeObject *c = (CallTreeObject *)self;
    earl_calltree_free(c->tree);
    Py_XDECREF(c->states);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *calltree_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"states", "threads", NULL};
    PyObject *states_obj, *trace_obj;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i", kwlist, &states_obj, &threads))
        return NULL;
    if (threads < 0)
        return PyErr_Format(PyExc_ValueError, "threads must be >= 0 (0: one per core)");
    earl_states *states = earlc_states_of(states_obj, &trace_obj);
    earl_trace *trace = states ? earlc_trace_of(trace_obj) : NULL;
    if (!trace)
        return NULL;
    earl_calltree *tree = earl_states_take_calltree(states); /* under the GIL: taken once */
    if (!tree) {
        earl_error err;
        earl_status st;
        Py_BEGIN_ALLOW_THREADS
        st = earl_calltree_build(trace, earl_states_get_view(states)->enterptr, threads, &tree,
                                 &err);
        Py_END_ALLOW_THREADS
        if (st != EARL_OK)
            return earlc_raise(&err);
    }
    CallTreeObject *c = (CallTreeObject *)type->tp_alloc(type, 0);
    if (!c) {
        earl_calltree_free(tree);
        return NULL;
    }
    c->tree = tree;
    Py_INCREF(states_obj);
    c->states = states_obj;
    return (PyObject *)c;
}

static PyObject *calltree_column(PyObject *self, PyObject *arg)
{
    const earl_calltree_view *v = earl_calltree_get_view(((CallTreeObject *)self)->tree);
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
#define C(nm, ptr, count, fmt)                                                        \
    if (strcmp(name, nm) == 0)                                                        \
        return earlc_column_new(self, ptr, count, sizeof(*(ptr)), fmt);
    C("parent", v->parent, v->n_cnodes, "i")
    C("region", v->region, v->n_cnodes, "I")
    C("event_cnode", v->event_cnode, v->n_events, "i")
    C("row_cnode", v->row_cnode, v->n_rows, "i")
    C("row_location", v->row_location, v->n_rows, "i")
    C("row_time", v->row_time, v->n_rows, "Q")
    C("row_visits", v->row_visits, v->n_rows, "Q")
    C("row_idle", v->row_idle, v->n_rows, "Q")
#undef C
    return PyErr_Format(PyExc_KeyError, "no call tree column named %R", arg);
}

static PyMethodDef calltree_methods[] = {
    {"column", calltree_column, METH_O, "column(name) -> Column"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CallTreeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.CallTree",
    .tp_basicsize = sizeof(CallTreeObject),
    .tp_dealloc = calltree_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "CallTree(states, threads=1): call paths, the call path of every event, and "
              "exclusive time and visits per (call path, location).",
    .tp_methods = calltree_methods,
    .tp_new = calltree_new,
};

int earlc_add_calltree_type(PyObject *module)
{
    if (PyType_Ready(&CallTreeType) < 0)
        return -1;
    Py_INCREF(&CallTreeType);
    return PyModule_AddObject(module, "CallTree", (PyObject *)&CallTreeType);
}
