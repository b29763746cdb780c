/*
 * part.c - _core.Reading: the stages of an open (earl_reading_*, earl.h)
 * and the ghosts of a part of a trace (earl_part_*, csrc/include/earl_part.h).
 *
 * A part of a trace is read in stages: the definitions first (to plan the
 * parts), then the part's own locations, then the ghosts the other parts
 * export for it are added, then the events are ordered into a _core.Trace.
 * Ghost records travel as bytes (earl_ghost structs, 72 bytes each), which
 * the Python side sends between parts as they are.  Each stage releases
 * the GIL around its C work.
 */
#include "ext.h"
#include "earl_part.h"

typedef struct {
    PyObject_HEAD
    earl_reading *reading;
    earlc_progress_bridge bridge;
    PyObject *progress; /* held for the bridge */
} ReadingObject;

static void reading_dealloc(PyObject *self)
{
    ReadingObject *r = (ReadingObject *)self;
    earl_reading_free(r->reading);
    r->reading = NULL;
    Py_XDECREF(r->progress);
    Py_TYPE(self)->tp_free(self);
}

static earl_reading *reading_of(ReadingObject *r)
{
    if (!r->reading)
        PyErr_SetString(PyExc_ValueError, "this reading was finished (or failed) already");
    return r->reading;
}

static PyObject *reading_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"path", "threads", "progress", "salvage", NULL};
    PyObject *path_obj = NULL, *progress = Py_None;
    int threads = 0, salvage = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|iOp", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &threads, &progress, &salvage))
        return NULL;
    ReadingObject *r = (ReadingObject *)type->tp_alloc(type, 0);
    if (!r) {
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_INCREF(progress);
    r->progress = progress;
    r->bridge = (earlc_progress_bridge){progress, 0};
    earl_open_options opts = {threads, progress != Py_None ? earlc_call_progress : NULL,
                              &r->bridge, salvage, NULL};
    earl_error err;
    earl_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_open(path, &opts, &r->reading, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != EARL_OK) {
        Py_DECREF(r);
        return earlc_raise(&err);
    }
    return (PyObject *)r;
}

static PyObject *reading_n_locations(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_reading *rd = reading_of((ReadingObject *)self);
    return rd ? PyLong_FromUnsignedLong(earl_reading_defs(rd)->n_locations) : NULL;
}

static PyObject *reading_definitions(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_reading *rd = reading_of((ReadingObject *)self);
    return rd ? earlc_definitions(earl_reading_defs(rd), earl_reading_path(rd)) : NULL;
}

/* read(mask): the events of the locations whose byte in mask is non-zero. */
static PyObject *reading_read(PyObject *self, PyObject *arg)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    Py_buffer mask;
    if (PyObject_GetBuffer(arg, &mask, PyBUF_SIMPLE) != 0)
        return NULL;
    if ((size_t)mask.len != earl_reading_defs(rd)->n_locations) {
        PyBuffer_Release(&mask);
        return PyErr_Format(PyExc_ValueError, "the mask has %zd bytes for %u locations",
                            mask.len, earl_reading_defs(rd)->n_locations);
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_read(rd, mask.buf, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&mask);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* export(part_of, n_parts, self) -> (offsets: bytes of n_parts + 1 uint64,
 * records: bytes of earl_ghost records) */
static PyObject *reading_export(PyObject *self, PyObject *args)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    PyObject *part_obj;
    Py_ssize_t n_parts;
    int me;
    if (!PyArg_ParseTuple(args, "Oni", &part_obj, &n_parts, &me))
        return NULL;
    earlc_buffers held = {0};
    size_t n = earl_reading_defs(rd)->n_locations;
    const int32_t *part_of = earlc_buffer_array(&held, part_obj, 'i', 0, &n, "part_of");
    if (!part_of)
        return NULL;
    earl_ghosts out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_part_export(rd, part_of, (size_t)n_parts, me, &out, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    PyObject *offsets = PyBytes_FromStringAndSize((const char *)out.offset,
                                                  (Py_ssize_t)((out.n_parts + 1) * sizeof(size_t)));
    PyObject *records = PyBytes_FromStringAndSize(
        (const char *)out.records, (Py_ssize_t)(out.offset[out.n_parts] * sizeof(earl_ghost)));
    earl_ghosts_free(&out);
    if (!offsets || !records) {
        Py_XDECREF(offsets);
        Py_XDECREF(records);
        return NULL;
    }
    return Py_BuildValue("(NN)", offsets, records);
}

/* add_ghosts(records): earl_ghost records as bytes (or any buffer) */
static PyObject *reading_add_ghosts(PyObject *self, PyObject *arg)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    if (buf.len % (Py_ssize_t)sizeof(earl_ghost)) {
        PyBuffer_Release(&buf);
        return PyErr_Format(PyExc_ValueError, "ghost records come in %zu bytes each, not %zd "
                            "bytes in all", sizeof(earl_ghost), buf.len);
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_part_add_ghosts(rd, buf.buf, (size_t)buf.len / sizeof(earl_ghost), &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* finish() -> _core.Trace; the reading is consumed */
static PyObject *reading_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    ReadingObject *r = (ReadingObject *)self;
    earl_reading *rd = reading_of(r);
    if (!rd)
        return NULL;
    r->reading = NULL;
    earl_trace *tr = NULL;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_finish(rd, &tr, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    return earlc_trace_new(tr);
}

static PyMethodDef reading_methods[] = {
    {"n_locations", reading_n_locations, METH_NOARGS, "locations the definitions name"},
    {"definitions", reading_definitions, METH_NOARGS, "the definitions, as Trace.definitions"},
    {"read", reading_read, METH_O, "read the events of the locations in a bytes mask"},
    {"export", reading_export, METH_VARARGS, "ghost records for each part"},
    {"add_ghosts", reading_add_ghosts, METH_O, "add ghost records of other parts"},
    {"finish", reading_finish, METH_NOARGS, "order the events: a _core.Trace"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReadingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.Reading",
    .tp_basicsize = sizeof(ReadingObject),
    .tp_dealloc = reading_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A trace read in stages (earl_reading_*, earl_part_*).",
    .tp_methods = reading_methods,
    .tp_new = reading_new,
};

int earlc_add_reading_type(PyObject *module)
{
    if (PyType_Ready(&ReadingType) < 0)
        return -1;
    Py_INCREF(&ReadingType);
    if (PyModule_AddObject(module, "Reading", (PyObject *)&ReadingType) < 0)
        return -1;
    return PyModule_AddIntConstant(module, "GHOST_RECORD_BYTES", (long)sizeof(earl_ghost));
}
