/*
 * writer.c - earlc._core.TraceWriter: the glue over earl_writer.
 *
 * One method per earl_writer call; arguments are converted, the call is
 * delegated, an earl_error becomes earlc.TraceError.  No logic lives here:
 * the readable API (names, inference of roles, ranks) is earlc/writer.py.
 * The GIL is released around close, which writes the definitions and flushes
 * every event file.
 */
#include "ext.h"

#include "earl_writer.h"

typedef struct {
    PyObject_HEAD
    earl_writer *w;
} WriterObject;

static int check_open(WriterObject *self)
{
    if (!self->w) {
        PyErr_SetString(PyExc_ValueError, "the trace writer is closed");
        return -1;
    }
    return 0;
}

/* None -> EARL_UNDEFINED_REF, an int -> a 32-bit reference. */
static int ref_converter(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(uint32_t *)out = EARL_UNDEFINED_REF;
        return 1;
    }
    unsigned long v = PyLong_AsUnsignedLong(o);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return 0;
    if (v > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a reference must fit in 32 bits");
        return 0;
    }
    *(uint32_t *)out = (uint32_t)v;
    return 1;
}

/* A sequence of ints into a new array of n items of 4 or 8 bytes. */
static void *int_array(PyObject *seq, size_t itemsize, int is_signed, uint32_t *n, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > (Py_ssize_t)UINT32_MAX) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: too many items", what);
        return NULL;
    }
    void *out = PyMem_Malloc((size_t)(len ? len : 1) * itemsize);
    if (!out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (is_signed) {
            long long v = PyLong_AsLongLong(item);
            if (v == -1 && PyErr_Occurred())
                goto fail;
            if (itemsize == 4)
                ((int32_t *)out)[i] = (int32_t)v;
            else
                ((int64_t *)out)[i] = v;
        } else {
            unsigned long long v = PyLong_AsUnsignedLongLong(item);
            if (v == (unsigned long long)-1 && PyErr_Occurred())
                goto fail;
            if (itemsize == 4) {
                if (v > UINT32_MAX) {
                    PyErr_Format(PyExc_OverflowError, "%s: item %zd does not fit in 32 bits", what, i);
                    goto fail;
                }
                ((uint32_t *)out)[i] = (uint32_t)v;
            } else {
                ((uint64_t *)out)[i] = v;
            }
        }
    }
    *n = (uint32_t)len;
    Py_DECREF(fast);
    return out;
fail:
    PyMem_Free(out);
    Py_DECREF(fast);
    return NULL;
}

static PyObject *ref_result(earl_status st, const earl_error *err, uint64_t ref)
{
    if (st != EARL_OK)
        return earlc_raise(err);
    return PyLong_FromUnsignedLongLong(ref);
}

/* ------------------------------------------------------------------------ */

static int Writer_init(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "path", "name", "resolution", "overwrite", NULL };
    PyObject *path = NULL;
    const char *name = NULL;
    unsigned long long resolution = 1000000000ull;
    int overwrite = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|zKp", kwlist, PyUnicode_FSConverter, &path,
                                     &name, &resolution, &overwrite))
        return -1;
    if (self->w) {
        earl_writer_abort(self->w);
        self->w = NULL;
    }
    earl_error err = { 0 };
    earl_status st = earl_writer_open(PyBytes_AS_STRING(path), name, resolution,
                                      overwrite ? EARL_WRITER_OVERWRITE : 0, &self->w, &err);
    Py_DECREF(path);
    if (st != EARL_OK) {
        earlc_raise(&err);
        return -1;
    }
    return 0;
}

static void Writer_dealloc(WriterObject *self)
{
    earl_writer_abort(self->w); /* never closed: discard */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Writer_close(WriterObject *self, PyObject *unused)
{
    (void)unused;
    if (check_open(self))
        return NULL;
    earl_writer *w = self->w;
    self->w = NULL;
    earl_error err = { 0 };
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_writer_close(w, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *Writer_abort(WriterObject *self, PyObject *unused)
{
    (void)unused;
    earl_writer_abort(self->w);
    self->w = NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_string(WriterObject *self, PyObject *args)
{
    const char *text;
    if (check_open(self) || !PyArg_ParseTuple(args, "s", &text))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_string(self->w, text, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_system_node(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "class_name", "parent", NULL };
    const char *name, *class_name;
    uint32_t parent = EARL_UNDEFINED_REF;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "ss|O&", kwlist, &name,
                                                         &class_name, ref_converter, &parent))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_system_node(self->w, name, class_name, parent, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_location_group(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "type", "system_node", "creator", "rank", NULL };
    const char *name;
    unsigned char type;
    uint32_t node, creator = EARL_UNDEFINED_REF;
    int rank = -1;
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "sbO&|O&i", kwlist, &name, &type, ref_converter,
                                     &node, ref_converter, &creator, &rank))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_location_group(self->w, name, type, node, creator, rank, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_location(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "group", "name", "type", "id", NULL };
    uint32_t group;
    const char *name;
    unsigned char type;
    PyObject *id_obj = Py_None;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "O&sb|O", kwlist,
                                                         ref_converter, &group, &name, &type, &id_obj))
        return NULL;
    uint64_t id = EARL_WRITER_AUTO_ID;
    if (id_obj != Py_None) {
        id = PyLong_AsUnsignedLongLong(id_obj);
        if (id == (uint64_t)-1 && PyErr_Occurred())
            return NULL;
    }
    earl_error err = { 0 };
    earl_loc loc = -1;
    earl_status st = earl_writer_location(self->w, group, name, type, id, &loc, &err);
    return ref_result(st, &err, (uint64_t)loc);
}

static PyObject *Writer_region(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "canonical_name", "description", "source_file", "role",
                              "paradigm", "flags", "begin_line", "end_line", NULL };
    earl_writer_region_def d = { 0 };
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "s|zzzbbIII", kwlist, &d.name, &d.canonical_name,
                                     &d.description, &d.source_file, &d.role, &d.paradigm, &d.flags,
                                     &d.begin_line, &d.end_line))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_region(self->w, &d, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_group(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "type", "paradigm", "flags", "members", NULL };
    const char *name;
    unsigned char type, paradigm;
    unsigned int flags;
    PyObject *members_obj;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "sbbIO", kwlist, &name, &type,
                                                         &paradigm, &flags, &members_obj))
        return NULL;
    uint32_t n = 0;
    uint64_t *members = int_array(members_obj, 8, 0, &n, "members");
    if (!members)
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_group(self->w, name, type, paradigm, flags, n, members, &ref, &err);
    PyMem_Free(members);
    return ref_result(st, &err, ref);
}

/* comm_world(name=None) and comm_self(name=None): the predefined communicators. */
static PyObject *predefined_comm(WriterObject *self, PyObject *args, PyObject *kwargs,
                                 earl_status (*define)(earl_writer *, const char *, uint32_t *,
                                                       earl_error *))
{
    static char *kwlist[] = { "name", NULL };
    const char *name = NULL;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "|z", kwlist, &name))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = define(self->w, name, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_comm_world(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    return predefined_comm(self, args, kwargs, earl_writer_comm_world);
}

static PyObject *Writer_comm_self(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    return predefined_comm(self, args, kwargs, earl_writer_comm_self);
}

static PyObject *Writer_comm(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "parent", "ranks", NULL };
    const char *name;
    uint32_t parent;
    PyObject *ranks_obj;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "zO&O", kwlist, &name,
                                                         ref_converter, &parent, &ranks_obj))
        return NULL;
    uint32_t n = 0;
    uint32_t *ranks = int_array(ranks_obj, 4, 0, &n, "ranks");
    if (!ranks)
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_comm(self->w, name, parent, n, ranks, &ref, &err);
    PyMem_Free(ranks);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_thread_team(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "paradigm", "parent", "threads", NULL };
    const char *name;
    unsigned char paradigm;
    uint32_t parent;
    PyObject *threads_obj;
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "zbO&O", kwlist, &name, &paradigm, ref_converter,
                                     &parent, &threads_obj))
        return NULL;
    uint32_t n = 0;
    earl_loc *threads = int_array(threads_obj, sizeof(earl_loc), 1, &n, "threads");
    if (!threads)
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_thread_team(self->w, name, paradigm, parent, n, threads, &ref, &err);
    PyMem_Free(threads);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_rma_win(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "comm", NULL };
    const char *name;
    uint32_t comm;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "zO&", kwlist, &name,
                                                         ref_converter, &comm))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_rma_win(self->w, name, comm, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_attribute(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "description", "type", NULL };
    const char *name, *description;
    unsigned char type;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "szb", kwlist, &name,
                                                         &description, &type))
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_attribute(self->w, name, description, type, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_clock_offset(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "loc", "time", "offset", "stddev", NULL };
    int loc;
    unsigned long long time;
    long long offset;
    double stddev = 0.0;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "iKL|d", kwlist, &loc, &time,
                                                         &offset, &stddev))
        return NULL;
    earl_error err = { 0 };
    if (earl_writer_clock_offset(self->w, loc, time, offset, stddev, &err) != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *Writer_location_property(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "loc", "name", "value", NULL };
    int loc;
    const char *name, *value;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "iss", kwlist, &loc, &name,
                                                         &value))
        return NULL;
    earl_error err = { 0 };
    if (earl_writer_location_property(self->w, loc, name, value, &err) != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* attributes=[(ref, value), ...] of event(): a PyMem array, NULL with an
 * exception set. */
static earl_writer_attr_value *attribute_array(PyObject *obj, uint32_t *n_out)
{
    PyObject *fast = PySequence_Fast(obj, "attributes must be a sequence of (ref, value)");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    earl_writer_attr_value *a = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *a);
    if (!a) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned int ref;
        long long value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "IL", &ref, &value)) {
            Py_DECREF(fast);
            PyMem_Free(a);
            return NULL;
        }
        a[i] = (earl_writer_attr_value){ ref, (uint64_t)value };
    }
    Py_DECREF(fast);
    *n_out = (uint32_t)n;
    return a;
}

static PyObject *Writer_metric_member(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "name", "description", "unit", "metric_type", "mode", "value_type",
                              "base", "exponent", NULL };
    earl_writer_metric_member_def d = { 0 };
    long long exponent = 0;
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "s|zzbbbbL", kwlist, &d.name, &d.description,
                                     &d.unit, &d.metric_type, &d.mode, &d.value_type, &d.base,
                                     &exponent))
        return NULL;
    d.exponent = exponent;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_metric_member(self->w, &d, &ref, &err);
    return ref_result(st, &err, ref);
}

static PyObject *Writer_metric_class(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "members", "occurrence", "recorder_kind", NULL };
    PyObject *members_obj;
    unsigned char occurrence = 0, recorder = 0;
    if (check_open(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "O|bb", kwlist, &members_obj,
                                                         &occurrence, &recorder))
        return NULL;
    uint32_t n = 0;
    uint32_t *members = int_array(members_obj, 4, 0, &n, "members");
    if (!members)
        return NULL;
    earl_error err = { 0 };
    uint32_t ref = 0;
    earl_status st = earl_writer_metric_class(self->w, n, members, occurrence, recorder, &ref, &err);
    PyMem_Free(members);
    return ref_result(st, &err, ref);
}

/* event(kind, loc, time, ref=0, peer=0, tag=0, count=0, bytes=0, bytes2=0,
 *       id=0, op=0, sync_level=0, model=0, exit_status=0, values=None,
 *       args=None).  values: ints (two's complement 64 bits) or floats (the
 * bits of a double), as the metric class's member types want. */
static PyObject *Writer_event(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "kind", "loc", "time", "ref", "peer", "tag", "count", "bytes",
                              "bytes2", "id", "op", "sync_level", "model", "exit_status",
                              "values", "args", "attributes", NULL };
    int kind, loc;
    unsigned long long time, bytes = 0, bytes2 = 0, id = 0;
    earl_writer_record r = { 0 };
    long long exit_status = 0;
    PyObject *values_obj = Py_None, *args_obj = Py_None, *attrs_obj = Py_None;
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "iiK|O&O&IIKKKbbbLOOO", kwlist, &kind, &loc, &time,
                                     ref_converter, &r.ref, ref_converter, &r.peer, &r.tag, &r.count,
                                     &bytes, &bytes2, &id, &r.op, &r.sync_level, &r.model,
                                     &exit_status, &values_obj, &args_obj, &attrs_obj))
        return NULL;
    earl_writer_attr_value *attrs = NULL;
    if (attrs_obj != Py_None) {
        if (!(attrs = attribute_array(attrs_obj, &r.n_attributes)))
            return NULL;
        r.attributes = attrs;
    }
    r.bytes = bytes;
    r.bytes2 = bytes2;
    r.id = id;
    r.exit_status = exit_status;
    uint64_t *values = NULL;
    uint32_t *strs = NULL;
    if (values_obj != Py_None) {
        PyObject *fast = PySequence_Fast(values_obj, "values must be a sequence");
        if (!fast)
            return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        values = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *values);
        if (!values) {
            Py_DECREF(fast);
            PyMem_Free(attrs);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(fast, i);
            if (PyFloat_Check(v)) {
                double d = PyFloat_AS_DOUBLE(v);
                memcpy(&values[i], &d, sizeof d);
            } else {
                int overflow = 0;
                long long s = PyLong_AsLongLongAndOverflow(v, &overflow);
                if (overflow > 0)
                    values[i] = PyLong_AsUnsignedLongLong(v);
                else
                    values[i] = (uint64_t)s;
                if (PyErr_Occurred()) {
                    Py_DECREF(fast);
                    PyMem_Free(values);
                    PyMem_Free(attrs);
                    return NULL;
                }
            }
        }
        r.n_values = (uint32_t)n;
        r.values = values;
        Py_DECREF(fast);
    }
    if (args_obj != Py_None) {
        strs = int_array(args_obj, 4, 0, &r.n_args, "args");
        if (!strs) {
            PyMem_Free(values);
            PyMem_Free(attrs);
            return NULL;
        }
        r.args = strs;
    }
    earl_error err = { 0 };
    earl_status st = earl_writer_event(self->w, (earl_kind)kind, loc, time, &r, &err);
    PyMem_Free(values);
    PyMem_Free(strs);
    PyMem_Free(attrs);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* events(loc, kind, time, ref, peer, tag, bytes, bytes2, id, op, attributes=()):
 * many events of one location at once, from contiguous arrays of n entries
 * (numpy's uint8 kind and op, uint64 time, bytes, bytes2 and id, uint32 ref,
 * peer and tag); attributes: (attribute ref, int64 array) pairs, where
 * INT64_MIN means "not on this event".  Stops at the first rejected event
 * with its error (the events before it are written). */
enum { BULK_COLUMNS = 9, BULK_MAX_ATTRIBUTES = 8 };

static PyObject *Writer_events(WriterObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "loc", "kind", "time", "ref", "peer", "tag", "bytes", "bytes2",
                              "id", "op", "attributes", NULL };
    static const size_t item[BULK_COLUMNS] = { 1, 8, 4, 4, 4, 8, 8, 8, 1 };
    int loc;
    PyObject *cols[BULK_COLUMNS], *attrs_obj = NULL;
    if (check_open(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "iOOOOOOOOO|O", kwlist, &loc, &cols[0], &cols[1],
                                     &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7],
                                     &cols[8], &attrs_obj))
        return NULL;
    Py_buffer buf[BULK_COLUMNS + BULK_MAX_ATTRIBUTES];
    uint32_t attr_ref[BULK_MAX_ATTRIBUTES];
    int held = 0, n_attrs = 0;
    PyObject *result = NULL, *fast = NULL;
    Py_ssize_t n = -1;
    for (; held < BULK_COLUMNS; held++) {
        if (PyObject_GetBuffer(cols[held], &buf[held], PyBUF_C_CONTIGUOUS) != 0)
            goto out;
        Py_ssize_t len = buf[held].len / (Py_ssize_t)item[held];
        if (buf[held].len % (Py_ssize_t)item[held] || (n >= 0 && len != n)) {
            held++;
            PyErr_SetString(PyExc_ValueError, "events(): columns of different lengths or types");
            goto out;
        }
        n = len;
    }
    if (attrs_obj) {
        fast = PySequence_Fast(attrs_obj, "attributes must be a sequence of (ref, int64 array)");
        if (!fast)
            goto out;
        if (PySequence_Fast_GET_SIZE(fast) > BULK_MAX_ATTRIBUTES) {
            PyErr_SetString(PyExc_ValueError, "events(): too many attribute columns");
            goto out;
        }
        for (; n_attrs < PySequence_Fast_GET_SIZE(fast); n_attrs++) {
            PyObject *column;
            unsigned int ref;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, n_attrs), "IO", &ref, &column) ||
                PyObject_GetBuffer(column, &buf[held], PyBUF_C_CONTIGUOUS) != 0)
                goto out;
            held++;
            if (buf[held - 1].len != n * 8) {
                PyErr_SetString(PyExc_ValueError, "events(): an attribute column's length differs");
                goto out;
            }
            attr_ref[n_attrs] = ref;
        }
    }
    const uint8_t *kind = buf[0].buf, *op = buf[8].buf;
    const uint64_t *time = buf[1].buf, *bytes = buf[5].buf, *bytes2 = buf[6].buf, *id = buf[7].buf;
    const uint32_t *ref = buf[2].buf, *peer = buf[3].buf, *tag = buf[4].buf;
    earl_error err = { 0 };
    earl_writer_attr_value attrs[BULK_MAX_ATTRIBUTES];
    for (Py_ssize_t i = 0; i < n; i++) {
        earl_writer_record r = { .ref = ref[i], .peer = peer[i], .tag = tag[i], .bytes = bytes[i],
                                 .bytes2 = bytes2[i], .id = id[i], .op = op[i],
                                 .attributes = attrs };
        for (int a = 0; a < n_attrs; a++) {
            int64_t v = ((const int64_t *)buf[BULK_COLUMNS + a].buf)[i];
            if (v != INT64_MIN)
                attrs[r.n_attributes++] = (earl_writer_attr_value){ attr_ref[a], (uint64_t)v };
        }
        if (earl_writer_event(self->w, (earl_kind)kind[i], loc, time[i], &r, &err) != EARL_OK) {
            earlc_raise(&err);
            goto out;
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
out:
    Py_XDECREF(fast);
    for (int k = 0; k < held; k++)
        PyBuffer_Release(&buf[k]);
    return result;
}

/* enter(loc, time, region) and leave(...): the frequent pair, positional. */
static PyObject *enter_leave(WriterObject *self, PyObject *const *args, Py_ssize_t nargs, int enter)
{
    if (check_open(self))
        return NULL;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (loc, time, region)");
        return NULL;
    }
    long loc = PyLong_AsLong(args[0]);
    unsigned long long t = PyLong_AsUnsignedLongLong(args[1]);
    unsigned long region = PyLong_AsUnsignedLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    earl_error err = { 0 };
    earl_status st = enter ? earl_writer_enter(self->w, (earl_loc)loc, t, (uint32_t)region, &err)
                           : earl_writer_leave(self->w, (earl_loc)loc, t, (uint32_t)region, &err);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *Writer_enter(WriterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return enter_leave(self, args, nargs, 1);
}

static PyObject *Writer_leave(WriterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return enter_leave(self, args, nargs, 0);
}

static PyObject *Writer_set_creator(WriterObject *self, PyObject *args)
{
    const char *s;
    if (check_open(self) || !PyArg_ParseTuple(args, "s", &s))
        return NULL;
    earl_error err = { 0 };
    if (earl_writer_set_creator(self->w, s, &err) != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *Writer_set_description(WriterObject *self, PyObject *args)
{
    const char *s;
    if (check_open(self) || !PyArg_ParseTuple(args, "z", &s))
        return NULL;
    earl_error err = { 0 };
    if (earl_writer_set_description(self->w, s, &err) != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *Writer_set_realtime(WriterObject *self, PyObject *args)
{
    unsigned long long ns;
    if (check_open(self) || !PyArg_ParseTuple(args, "K", &ns))
        return NULL;
    earl_writer_set_realtime(self->w, ns);
    Py_RETURN_NONE;
}

static PyObject *Writer_set_quirks(WriterObject *self, PyObject *args)
{
    int omit_clock = 0;
    PyObject *announced = Py_None;
    if (check_open(self) || !PyArg_ParseTuple(args, "pO", &omit_clock, &announced))
        return NULL;
    earl_writer_quirks q = {omit_clock, announced != Py_None, 0};
    if (q.announce_events) {
        q.announced_events = PyLong_AsUnsignedLongLong(announced);
        if (PyErr_Occurred())
            return NULL;
    }
    earl_writer_set_quirks(self->w, &q);
    Py_RETURN_NONE;
}

static PyObject *Writer_set_memory_limit(WriterObject *self, PyObject *args)
{
    Py_ssize_t bytes;
    if (check_open(self) || !PyArg_ParseTuple(args, "n", &bytes))
        return NULL;
    earl_writer_set_memory_limit(self->w, bytes < 0 ? 0 : (size_t)bytes);
    Py_RETURN_NONE;
}

static PyObject *Writer_event_count(WriterObject *self, PyObject *args)
{
    int loc = -1;
    if (check_open(self) || !PyArg_ParseTuple(args, "|i", &loc))
        return NULL;
    return PyLong_FromUnsignedLongLong(earl_writer_event_count(self->w, loc));
}

static PyObject *Writer_get_anchor(WriterObject *self, void *closure)
{
    (void)closure;
    if (check_open(self))
        return NULL;
    return PyUnicode_DecodeFSDefault(earl_writer_anchor_path(self->w));
}

static PyObject *Writer_get_tmp_dir(WriterObject *self, void *closure)
{
    (void)closure;
    if (check_open(self))
        return NULL;
    return PyUnicode_DecodeFSDefault(earl_writer_tmp_dir(self->w));
}

static PyObject *Writer_get_closed(WriterObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->w == NULL);
}

static PyObject *Writer_get_location_count(WriterObject *self, void *closure)
{
    (void)closure;
    if (check_open(self))
        return NULL;
    return PyLong_FromUnsignedLong(earl_writer_location_count(self->w));
}

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

static PyMethodDef Writer_methods[] = {
    { "close", FN(Writer_close), METH_NOARGS, "close(): write the definitions, move the archive into place" },
    { "abort", FN(Writer_abort), METH_NOARGS, "abort(): discard everything" },
    { "string", FN(Writer_string), METH_VARARGS, "string(text) -> ref" },
    { "system_node", FN(Writer_system_node), KW, "system_node(name, class_name, parent=None) -> ref" },
    { "location_group", FN(Writer_location_group), KW,
      "location_group(name, type, system_node, creator=None, rank=-1) -> ref" },
    { "location", FN(Writer_location), KW, "location(group, name, type, id=None) -> loc" },
    { "region", FN(Writer_region), KW,
      "region(name, canonical_name=None, description=None, source_file=None, role=0, paradigm=0, "
      "flags=0, begin_line=0, end_line=0) -> ref" },
    { "group", FN(Writer_group), KW, "group(name, type, paradigm, flags, members) -> ref" },
    { "comm_world", FN(Writer_comm_world), KW, "comm_world(name=None) -> ref" },
    { "comm_self", FN(Writer_comm_self), KW, "comm_self(name=None) -> ref" },
    { "comm", FN(Writer_comm), KW, "comm(name, parent, ranks) -> ref" },
    { "thread_team", FN(Writer_thread_team), KW, "thread_team(name, paradigm, parent, threads) -> ref" },
    { "rma_win", FN(Writer_rma_win), KW, "rma_win(name, comm) -> ref" },
    { "metric_member", FN(Writer_metric_member), KW,
      "metric_member(name, description=None, unit=None, metric_type=0, mode=0, value_type=0, "
      "base=0, exponent=0) -> ref" },
    { "metric_class", FN(Writer_metric_class), KW,
      "metric_class(members, occurrence=0, recorder_kind=0) -> ref" },
    { "event", FN(Writer_event), KW,
      "event(kind, loc, time, ref=0, peer=0, tag=0, count=0, bytes=0, bytes2=0, id=0, op=0, "
      "sync_level=0, model=0, exit_status=0, values=None, args=None, attributes=None)" },
    { "events", FN(Writer_events), KW,
      "events(loc, kind, time, ref, peer, tag, bytes, bytes2, id, op, attributes=()): many "
      "events of one location from arrays" },
    { "attribute", FN(Writer_attribute), KW, "attribute(name, description, type) -> ref" },
    { "clock_offset", FN(Writer_clock_offset), KW,
      "clock_offset(loc, time, offset, stddev=0.0): global minus local time at time" },
    { "location_property", FN(Writer_location_property), KW,
      "location_property(loc, name, value): a string-valued location property" },
    { "enter", FN(Writer_enter), METH_FASTCALL, "enter(loc, time, region)" },
    { "leave", FN(Writer_leave), METH_FASTCALL, "leave(loc, time, region)" },
    { "set_creator", FN(Writer_set_creator), METH_VARARGS, "set_creator(text)" },
    { "set_description", FN(Writer_set_description), METH_VARARGS, "set_description(text)" },
    { "set_realtime", FN(Writer_set_realtime), METH_VARARGS, "set_realtime(ns_since_epoch)" },
    { "set_memory_limit", FN(Writer_set_memory_limit), METH_VARARGS, "set_memory_limit(bytes)" },
    { "set_quirks", FN(Writer_set_quirks), METH_VARARGS,
      "set_quirks(omit_clock, announced_events or None): untruthful definitions, for tests" },
    { "event_count", FN(Writer_event_count), METH_VARARGS, "event_count(loc=-1) -> int" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef Writer_getset[] = {
    { "anchor_path", (getter)Writer_get_anchor, NULL, "DIR/NAME.otf2 once closed", NULL },
    { "tmp_dir", (getter)Writer_get_tmp_dir, NULL, "the folder being written", NULL },
    { "closed", (getter)Writer_get_closed, NULL, "closed or aborted", NULL },
    { "location_count", (getter)Writer_get_location_count, NULL, "locations defined", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject WriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.TraceWriter",
    .tp_basicsize = sizeof(WriterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "TraceWriter(path, name='traces', resolution=1000000000, overwrite=False)\n\n"
              "Low-level OTF2 archive writer (earl_writer); see earlc.TraceWriter.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Writer_init,
    .tp_dealloc = (destructor)Writer_dealloc,
    .tp_methods = Writer_methods,
    .tp_getset = Writer_getset,
};

int earlc_add_writer_type(PyObject *module)
{
    if (PyType_Ready(&WriterType) < 0)
        return -1;
    Py_INCREF(&WriterType);
    if (PyModule_AddObject(module, "TraceWriter", (PyObject *)&WriterType) < 0) {
        Py_DECREF(&WriterType);
        return -1;
    }
    return 0;
}
