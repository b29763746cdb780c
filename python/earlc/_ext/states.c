/*
 * states.c - _core.States: the Python face of earl_states (the EARL layer:
 * pointer attributes, collective instances, history queries).
 *
 * _core.States(trace) builds the states of a _core.Trace with the GIL
 * released and keeps the trace alive as long as it lives.  The per-event
 * arrays and the instance arrays are handed out as _core.Column buffers (no
 * copy): "enterptr32" is the pass's own enterptr (uint32, 0xFFFFFFFF for
 * none), "enterptr" and the other pointer names the int64 arrays built on
 * first request; queries and warnings, which are small, come back as tuples and
 * dicts for python/earlc/states.py to wrap.
 */
#include "ext.h"

#include "earl_states.h"

typedef struct {
    PyObject_HEAD
    PyObject *trace_obj;
    earl_states *states;
} StatesObject;

static void states_dealloc(PyObject *self)
{
    StatesObject *s = (StatesObject *)self;
    if (s->states) {
        earl_states *st = s->states;
        s->states = NULL;
        Py_BEGIN_ALLOW_THREADS
        earl_states_free(st);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(s->trace_obj);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *states_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"trace", "omp_barriers", "threads", "calltree", NULL};
    PyObject *trace_obj;
    int omp_barriers = 1, threads = 0, calltree = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|pip", kwlist, &trace_obj, &omp_barriers,
                                     &threads, &calltree))
        return NULL;
    earl_trace *tr = earlc_trace_of(trace_obj);
    if (!tr)
        return NULL;
    earl_states_options opts = {.no_omp_barriers = !omp_barriers, .threads = threads,
                                .calltree = calltree};
    earl_states *st = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_states_build(tr, &opts, &st, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK)
        return earlc_raise(&err);
    StatesObject *s = (StatesObject *)type->tp_alloc(type, 0);
    if (!s) {
        earl_states_free(st);
        return NULL;
    }
    Py_INCREF(trace_obj);
    s->trace_obj = trace_obj;
    s->states = st;
    return (PyObject *)s;
}

static PyObject *states_column(PyObject *self, PyObject *arg)
{
    StatesObject *s = (StatesObject *)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    const earl_states_view *v = earl_states_get_view(s->states);
    size_t nc = v->n_colls;
#define C(nm, ptr, count, fmt)                                                        \
    if (strcmp(name, nm) == 0)                                                        \
        return earlc_column_new(self, (ptr), (count), sizeof(*(ptr)), fmt);
    for (int p = 0; p < EARL_POINTER_COUNT; p++) {
        if (strcmp(name, earl_pointer_name((earl_pointer)p)) == 0) {
            earl_error err;
            const earl_eid *a;
            Py_BEGIN_ALLOW_THREADS
            a = earl_states_pointer(s->states, (earl_pointer)p, &err);
            Py_END_ALLOW_THREADS
            if (!a)
                return earlc_raise(&err);
            return earlc_column_new(self, a, v->count, sizeof *a, "q");
        }
    }
    if (strcmp(name, "coll_instance") == 0) {
        earl_error err;
        const int32_t *a;
        Py_BEGIN_ALLOW_THREADS
        a = earl_states_coll_instances(s->states, &err);
        Py_END_ALLOW_THREADS
        if (!a)
            return earlc_raise(&err);
        return earlc_column_new(self, a, v->count, sizeof *a, "i");
    }
    C("enterptr32", v->enterptr, v->count, "I")
    C("coll.type", v->coll_type, nc, "B")
    C("coll.comm", v->coll_comm, nc, "I")
    C("coll.fork", v->coll_fork, nc, "q")
    C("coll.op", v->coll_op, nc, "B")
    C("coll.root", v->coll_root, nc, "i")
    C("coll.expected", v->coll_expected, nc, "I")
    C("coll.complete", v->coll_complete, nc, "q")
    C("coll.member_start", v->coll_member_start, nc + 1, "Q")
    C("coll.members", v->coll_members, v->coll_member_start ? v->coll_member_start[nc] : 0, "q")
#undef C
    return PyErr_Format(PyExc_KeyError, "no states column named %R", arg);
}

static PyObject *states_pointer(PyObject *self, PyObject *args)
{
    const char *name;
    long long i;
    if (!PyArg_ParseTuple(args, "sL", &name, &i))
        return NULL;
    for (int p = 0; p < EARL_POINTER_COUNT; p++)
        if (strcmp(name, earl_pointer_name((earl_pointer)p)) == 0)
            return PyLong_FromLongLong(
                earl_states_ptr(((StatesObject *)self)->states, (earl_pointer)p, i));
    return PyErr_Format(PyExc_KeyError, "no pointer named %s", name);
}

/* gather(name, ids) -> bytes of int64: the pointer of each event id. */
static PyObject *states_gather(PyObject *self, PyObject *args)
{
    StatesObject *s = (StatesObject *)self;
    const char *name;
    Py_buffer ids;
    if (!PyArg_ParseTuple(args, "sy*", &name, &ids))
        return NULL;
    int p = 0;
    while (p < EARL_POINTER_COUNT && strcmp(name, earl_pointer_name((earl_pointer)p)) != 0)
        p++;
    if (p == EARL_POINTER_COUNT || ids.len % sizeof(earl_eid)) {
        PyBuffer_Release(&ids);
        return PyErr_Format(PyExc_ValueError, "gather(%s): unknown pointer or ids not int64",
                            name);
    }
    size_t n = (size_t)ids.len / sizeof(earl_eid);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(earl_eid)));
    if (!out) {
        PyBuffer_Release(&ids);
        return NULL;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_states_gather(s->states, (earl_pointer)p, (const earl_eid *)ids.buf, n,
                            (earl_eid *)PyBytes_AS_STRING(out), &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ids);
    if (st != EARL_OK) {
        Py_DECREF(out);
        return earlc_raise(&err);
    }
    return out;
}

static PyObject *states_instance_of(PyObject *self, PyObject *arg)
{
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromLong(earl_states_instance_of(((StatesObject *)self)->states, i));
}

static PyObject *states_warnings(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const earl_states_warnings *w = earl_states_get_warnings(((StatesObject *)self)->states);
    PyObject *counts = PyDict_New(), *details = PyList_New(0);
    if (!counts || !details)
        goto fail;
    for (int c = 0; c < EARL_STATES_WARNING_CODE_COUNT; c++) {
        PyObject *v = PyLong_FromUnsignedLongLong(w->counts[c]);
        if (!v || PyDict_SetItemString(counts, earl_states_warning_code_name(c), v) < 0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    for (size_t k = 0; k < w->n_details; k++) {
        const earl_states_warning *it = &w->details[k];
        PyObject *t = Py_BuildValue("(siLs)", earl_states_warning_code_name(it->code),
                                    (int)it->location, (long long)it->event, it->detail);
        if (!t || PyList_Append(details, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    return Py_BuildValue("{sNsN}", "counts", counts, "details", details);
fail:
    Py_XDECREF(counts);
    Py_XDECREF(details);
    return NULL;
}

static PyObject *eid_tuple(const earl_eid *ids, size_t n)
{
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    if (!t)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        PyObject *v = PyLong_FromLongLong(ids[k]);
        if (!v) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)k, v);
    }
    return t;
}

static PyObject *states_stack(PyObject *self, PyObject *args)
{
    long long i;
    int loc;
    if (!PyArg_ParseTuple(args, "Li", &i, &loc))
        return NULL;
    earl_states *st = ((StatesObject *)self)->states;
    earl_eid buf[64];
    size_t depth = earl_states_stack(st, i, loc, buf, 64);
    if (depth <= 64)
        return eid_tuple(buf, depth);
    earl_eid *big = PyMem_Malloc(depth * sizeof *big);
    if (!big)
        return PyErr_NoMemory();
    earl_states_stack(st, i, loc, big, depth);
    PyObject *t = eid_tuple(big, depth);
    PyMem_Free(big);
    return t;
}

static PyObject *states_queue(PyObject *self, PyObject *args)
{
    long long i;
    int src, dst;
    if (!PyArg_ParseTuple(args, "Lii", &i, &src, &dst))
        return NULL;
    earl_states *st = ((StatesObject *)self)->states;
    earl_eid buf[64];
    size_t n = 0;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_states_queue(st, i, src, dst, buf, 64, &n, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK)
        return earlc_raise(&err);
    if (n <= 64)
        return eid_tuple(buf, n);
    earl_eid *big = PyMem_Malloc(n * sizeof *big);
    if (!big)
        return PyErr_NoMemory();
    size_t n2 = 0;
    earl_states_queue(st, i, src, dst, big, n, &n2, &err);
    PyObject *t = eid_tuple(big, n2);
    PyMem_Free(big);
    return t;
}

static PyObject *states_coll(PyObject *self, PyObject *arg)
{
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    const earl_eid *members;
    size_t n;
    int32_t c = earl_states_coll(((StatesObject *)self)->states, i, &members, &n);
    PyObject *t = eid_tuple(members, n);
    if (!t)
        return NULL;
    return Py_BuildValue("(iN)", (int)c, t);
}

static PyObject *states_locks(PyObject *self, PyObject *arg)
{
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    earl_states *st = ((StatesObject *)self)->states;
    size_t n = earl_states_locks(st, i, NULL, 0);
    earl_lock_state *buf = PyMem_Malloc((n ? n : 1) * sizeof *buf);
    if (!buf)
        return PyErr_NoMemory();
    earl_states_locks(st, i, buf, n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list && k < n; k++) {
        PyObject *t = Py_BuildValue("(IBKLi)", buf[k].process, buf[k].model,
                                    (unsigned long long)buf[k].id, (long long)buf[k].last,
                                    (int)buf[k].holder);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, t);
    }
    PyMem_Free(buf);
    return list;
}

static PyObject *states_memory(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    return PyLong_FromSize_t(earl_states_bytes(((StatesObject *)self)->states));
}

static Py_ssize_t states_length(PyObject *self)
{
    return (Py_ssize_t)earl_states_get_view(((StatesObject *)self)->states)->count;
}

static PyMethodDef states_methods[] = {
    {"column", states_column, METH_O,
     "column(name) -> Column: zero-copy buffer of one array (pointer arrays built on first use)"},
    {"pointer", states_pointer, METH_VARARGS, "pointer(name, i) -> event id or -1"},
    {"gather", states_gather, METH_VARARGS,
     "gather(name, ids) -> int64 bytes: the pointer of each event, without a dense array"},
    {"instance_of", states_instance_of, METH_O, "instance_of(i) -> collective instance or -1"},
    {"warnings", states_warnings, METH_NOARGS, "counted warnings of the states pass"},
    {"stack", states_stack, METH_VARARGS, "stack(i, loc) -> ENTER ids, outermost first"},
    {"queue", states_queue, METH_VARARGS, "queue(i, src, dst) -> send ids in transfer"},
    {"coll", states_coll, METH_O, "coll(i) -> (instance or -1, member ids if i completes it)"},
    {"locks", states_locks, METH_O,
     "locks(i) -> [(process, model, lock id, last event, holder)]"},
    {"memory", states_memory, METH_NOARGS, "heap bytes held by the states"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods states_as_sequence = {.sq_length = states_length};

static PyTypeObject StatesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.States",
    .tp_basicsize = sizeof(StatesObject),
    .tp_dealloc = states_dealloc,
    .tp_as_sequence = &states_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "States(trace, omp_barriers=True, threads=0, calltree=False): EARL pointer attributes and states "
              "(see earlc.states).",
    .tp_methods = states_methods,
    .tp_new = states_new,
};

earl_states *earlc_states_of(PyObject *obj, PyObject **trace_obj)
{
    if (!PyObject_TypeCheck(obj, &StatesType)) {
        PyErr_Format(PyExc_TypeError, "expected an earlc._core.States, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (trace_obj)
        *trace_obj = ((StatesObject *)obj)->trace_obj;
    return ((StatesObject *)obj)->states;
}

int earlc_add_states_type(PyObject *module)
{
    PyObject *names = PyTuple_New(EARL_STATES_WARNING_CODE_COUNT);
    if (!names)
        return -1;
    for (int c = 0; c < EARL_STATES_WARNING_CODE_COUNT; c++)
        PyTuple_SET_ITEM(names, c, PyUnicode_FromString(earl_states_warning_code_name(c)));
    if (PyModule_AddObject(module, "STATES_WARNING_NAMES", names) < 0) {
        Py_DECREF(names);
        return -1;
    }
    if (PyType_Ready(&StatesType) < 0)
        return -1;
    Py_INCREF(&StatesType);
    return PyModule_AddObject(module, "States", (PyObject *)&StatesType);
}
