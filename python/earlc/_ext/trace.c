/*
 * trace.c - _core.open and _core.Trace: the Python face of earl_trace.
 *
 * Opening releases the GIL for the whole read; progress reports re-acquire
 * it only to call the Python callback.  Columns are handed out as
 * _core.Column buffers (zero copy); definitions and warnings, which are
 * small, are converted to tuples and dicts for python/earlc to wrap.
 */
#include "ext.h"

typedef struct {
    PyObject_HEAD
    earl_trace *trace;
} TraceObject;

static void trace_dealloc(PyObject *self)
{
    TraceObject *t = (TraceObject *)self;
    if (t->trace) {
        earl_trace *tr = t->trace;
        t->trace = NULL;
        Py_BEGIN_ALLOW_THREADS
        earl_trace_close(tr);
        Py_END_ALLOW_THREADS
    }
    Py_TYPE(self)->tp_free(self);
}

/* ---- columns ---------------------------------------------------------------------- */

typedef struct column_desc {
    const char *name;
    const char *format; /* struct module format of one item */
    size_t itemsize;
} column_desc;

/* Resolve a column name ("time", "msg.peer", ...) to its memory. */
static int find_column(const earl_trace *tr, const char *name, const void **data, size_t *n,
                       column_desc *desc)
{
    const earl_events *e = earl_trace_events(tr);
    const earl_defs *d = earl_trace_defs(tr);
#define C(nm, ptr, count, fmt)                                                        \
    if (strcmp(name, nm) == 0) {                                                      \
        *data = (ptr); *n = (count);                                                  \
        *desc = (column_desc){nm, fmt, sizeof(*(ptr))};                               \
        return 0;                                                                     \
    }
    C("time", e->time, e->count, "Q")
    C("location", e->location, e->count, "i")
    C("kind", e->kind, e->count, "B")
    C("payload", e->payload, e->count, "I")
    C("loc_start", e->loc_start, (size_t)d->n_locations + 1, "N")
    C("loc_events", e->loc_events, e->count, "I")
    C("msg.event", e->msg.event, e->msg.count, "I")
    C("msg.peer", e->msg.peer, e->msg.count, "i")
    C("msg.peer_rank", e->msg.peer_rank, e->msg.count, "I")
    C("msg.comm", e->msg.comm, e->msg.count, "I")
    C("msg.tag", e->msg.tag, e->msg.count, "I")
    C("msg.bytes", e->msg.bytes, e->msg.count, "Q")
    C("msg.request", e->msg.request, e->msg.count, "Q")
    C("msg.partner", e->msg.partner, e->msg.count, "I")
    /* absent (NULL) in a trace without the attributes: an empty column */
    C("msg.requested_source", e->msg.requested_source,
      e->msg.requested_source ? e->msg.count : 0, "i")
    C("msg.requested_tag", e->msg.requested_tag, e->msg.requested_tag ? e->msg.count : 0, "i")
    C("coll.event", e->coll.event, e->coll.count, "I")
    C("coll.op", e->coll.op, e->coll.count, "B")
    C("coll.comm", e->coll.comm, e->coll.count, "I")
    C("coll.root_rank", e->coll.root_rank, e->coll.count, "I")
    C("coll.root", e->coll.root, e->coll.count, "i")
    C("coll.sent", e->coll.sent, e->coll.count, "Q")
    C("coll.received", e->coll.received, e->coll.count, "Q")
    C("sync.event", e->sync.event, e->sync.count, "I")
    C("sync.model", e->sync.model, e->sync.count, "B")
    C("sync.comm", e->sync.comm, e->sync.count, "I")
    C("sync.id", e->sync.id, e->sync.count, "Q")
    C("sync.count", e->sync.count_, e->sync.count, "I")
    C("program.event", e->program.event, e->program.count, "I")
    C("program.name", e->program.name, e->program.count, "I")
    C("program.exit_status", e->program.exit_status, e->program.count, "q")
    C("metric.event", e->metric.event, e->metric.count, "I")
    C("metric.metric", e->metric.metric, e->metric.count, "I")
    C("metric.first", e->metric.first, e->metric.count, "I")
    C("metric.n", e->metric.n, e->metric.count, "B")
    C("metric.values", e->metric.values, e->metric.n_values, "Q")
    C("metric.value_types", e->metric.value_types, e->metric.n_values, "B")
    C("rma.event", e->rma.event, e->rma.count, "I")
    C("rma.win", e->rma.win, e->rma.count, "I")
    C("rma.remote", e->rma.remote, e->rma.count, "I")
    C("rma.bytes", e->rma.bytes, e->rma.count, "Q")
    C("rma.matching", e->rma.matching, e->rma.count, "Q")
#undef C
    return -1;
}

static PyObject *trace_column(PyObject *self, PyObject *arg)
{
    TraceObject *t = (TraceObject *)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    const void *data;
    size_t n;
    column_desc desc;
    if (find_column(t->trace, name, &data, &n, &desc) != 0)
        return PyErr_Format(PyExc_KeyError, "no column named %R", arg);
    /* "N" (size_t) is not a struct format numpy knows everywhere: use Q */
    return earlc_column_new(self, data, n, desc.itemsize,
                            strcmp(desc.format, "N") == 0 ? "Q" : desc.format);
}

/* ---- definitions ------------------------------------------------------------------ */

static PyObject *u64_list(const uint64_t *v, uint32_t n)
{
    PyObject *l = PyList_New(n);
    for (uint32_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *u32_list(const uint32_t *v, uint32_t n)
{
    PyObject *l = PyList_New(n);
    for (uint32_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLong(v[i]);
        if (!x) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *loc_list(const earl_loc *v, uint32_t n)
{
    PyObject *l = PyList_New(n);
    for (uint32_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromLong(v ? v[i] : -1);
        if (!x) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

PyObject *earlc_definitions(const earl_defs *d, const char *path)
{
    PyObject *out = PyDict_New();
    if (!out)
        return NULL;
    PyObject *v;
#define PUT(key, expr)                                              \
    do {                                                            \
        v = (expr);                                                 \
        if (!v || PyDict_SetItemString(out, key, v) != 0) {         \
            Py_XDECREF(v);                                          \
            Py_DECREF(out);                                         \
            return NULL;                                            \
        }                                                           \
        Py_DECREF(v);                                               \
    } while (0)
#define LIST(n, build)                                              \
    ({                                                              \
        PyObject *l_ = PyList_New((Py_ssize_t)(n));                 \
        for (uint32_t i = 0; l_ && i < (n); i++) {                  \
            PyObject *x_ = (build);                                 \
            if (!x_) { Py_CLEAR(l_); break; }                       \
            PyList_SET_ITEM(l_, i, x_);                             \
        }                                                           \
        l_;                                                         \
    })

    PUT("path", PyUnicode_DecodeFSDefault(path));
    PUT("creator", PyUnicode_DecodeUTF8(d->creator, (Py_ssize_t)strlen(d->creator), "replace"));
    PUT("version", Py_BuildValue("(iii)", d->version[0], d->version[1], d->version[2]));
    PUT("n_defs_read", PyLong_FromUnsignedLong(d->n_defs_read));
    PUT("clock", Py_BuildValue("(KKKK)", (unsigned long long)d->clock.resolution,
                               (unsigned long long)d->clock.global_offset,
                               (unsigned long long)d->clock.length,
                               (unsigned long long)d->clock.realtime));
    PUT("strings", LIST(d->strings.count,
                        PyUnicode_DecodeUTF8(d->strings.text[i],
                                             (Py_ssize_t)strlen(d->strings.text[i]), "replace")));
    /* (defined, name, canonical, description, role, paradigm, flags, file, begin, end) */
    PUT("regions", LIST(d->n_regions,
                        Py_BuildValue("(iIIIiiIIII)", d->regions[i].defined, d->regions[i].name,
                                      d->regions[i].canonical_name, d->regions[i].description,
                                      d->regions[i].role, d->regions[i].paradigm,
                                      d->regions[i].flags, d->regions[i].source_file,
                                      d->regions[i].begin_line, d->regions[i].end_line)));
    /* (defined, name, class, parent) */
    PUT("system_nodes", LIST(d->n_system_nodes,
                             Py_BuildValue("(iIII)", d->system_nodes[i].defined,
                                           d->system_nodes[i].name, d->system_nodes[i].class_name,
                                           d->system_nodes[i].parent)));
    /* (defined, name, type, system parent, creator, rank) */
    PUT("location_groups", LIST(d->n_location_groups,
                                Py_BuildValue("(iIiIIi)", d->location_groups[i].defined,
                                              d->location_groups[i].name,
                                              d->location_groups[i].type,
                                              d->location_groups[i].system_parent,
                                              d->location_groups[i].creator,
                                              d->location_groups[i].rank)));
    /* (id, name, type, group, declared, events, other, thread, incomplete, reason) */
    PUT("locations", LIST(d->n_locations,
                          Py_BuildValue("(KIiIKKKiiI)", (unsigned long long)d->locations[i].id,
                                        d->locations[i].name, d->locations[i].type,
                                        d->locations[i].group,
                                        (unsigned long long)d->locations[i].declared_events,
                                        (unsigned long long)d->locations[i].events,
                                        (unsigned long long)d->locations[i].other_records,
                                        d->locations[i].thread, d->locations[i].incomplete,
                                        d->locations[i].incomplete_reason)));
    /* per location, what the trace holds of its events (earl_held) */
    {
        PyObject *held = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)d->n_locations);
        for (uint32_t i = 0; held && i < d->n_locations; i++)
            PyBytes_AS_STRING(held)[i] = (char)d->locations[i].held;
        PUT("held", held);
    }
    /* (location, name, value): string-valued location properties */
    PUT("location_properties", LIST(d->n_location_properties,
                                    Py_BuildValue("(iII)", d->location_properties[i].location,
                                                  d->location_properties[i].name,
                                                  d->location_properties[i].value)));
    /* (defined, name, type, paradigm, flags, members) */
    PUT("groups", LIST(d->n_groups,
                       Py_BuildValue("(iIiiIN)", d->groups[i].defined, d->groups[i].name,
                                     d->groups[i].type, d->groups[i].paradigm,
                                     d->groups[i].flags,
                                     u64_list(d->groups[i].members, d->groups[i].n_members))));
    /* (defined, name, group, parent, flags, paradigm, is_inter, is_self, member locations) */
    PUT("comms", LIST(d->n_comms,
                      Py_BuildValue("(iIIIIiiiN)", d->comms[i].defined, d->comms[i].name,
                                    d->comms[i].group, d->comms[i].parent, d->comms[i].flags,
                                    d->comms[i].paradigm, d->comms[i].is_inter,
                                    d->comms[i].is_self,
                                    d->comms[i].is_self
                                        ? loc_list(NULL, 1)
                                        : loc_list(d->comms[i].member_locations,
                                                   d->comms[i].member_locations
                                                       ? d->comms[i].size : 0))));
    /* (defined, name, description, unit, value type, metric type, mode, base, exponent) */
    PUT("metric_members", LIST(d->n_metric_members,
                               Py_BuildValue("(iIIIiiiiL)", d->metric_members[i].defined,
                                             d->metric_members[i].name,
                                             d->metric_members[i].description,
                                             d->metric_members[i].unit,
                                             d->metric_members[i].value_type,
                                             d->metric_members[i].metric_type,
                                             d->metric_members[i].mode,
                                             d->metric_members[i].base,
                                             (long long)d->metric_members[i].exponent)));
    PUT("metric_classes", LIST(d->n_metric_classes,
                               Py_BuildValue("(iN)", d->metric_classes[i].defined,
                                             u32_list(d->metric_classes[i].members,
                                                      d->metric_classes[i].n_members))));
    PUT("paradigm_names", u32_list(d->paradigm_names, d->n_paradigms));
    return out;
#undef PUT
#undef LIST
}

static PyObject *trace_definitions(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_trace *tr = ((TraceObject *)self)->trace;
    return earlc_definitions(earl_trace_defs(tr), earl_trace_path(tr));
}

/* ---- warnings, counts, memory ---------------------------------------------------------- */

static PyObject *trace_warnings(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_warnings *w = earl_trace_warnings(((TraceObject *)self)->trace);
    PyObject *counts = PyDict_New(), *details = PyList_New(0), *other = PyDict_New();
    if (!counts || !details || !other)
        goto fail;
    for (int c = 0; c < EARL_WARNING_CODE_COUNT; c++) {
        PyObject *n = PyLong_FromUnsignedLongLong(w->counts[c]);
        if (!n || PyDict_SetItemString(counts, earl_warning_code_name((earl_warning_code)c), n)) {
            Py_XDECREF(n);
            goto fail;
        }
        Py_DECREF(n);
    }
    for (size_t i = 0; i < w->n_details; i++) {
        const earl_warning *it = &w->details[i];
        PyObject *x = Py_BuildValue("(siKLs)", earl_warning_code_name(it->code), it->location,
                                    (unsigned long long)it->position, (long long)it->event,
                                    it->detail);
        if (!x || PyList_Append(details, x) != 0) {
            Py_XDECREF(x);
            goto fail;
        }
        Py_DECREF(x);
    }
    for (size_t i = 0; i < w->n_other_types; i++) {
        PyObject *n = PyLong_FromUnsignedLongLong(w->other_type_counts[i]);
        if (!n || PyDict_SetItemString(other, w->other_type_names[i], n)) {
            Py_XDECREF(n);
            goto fail;
        }
        Py_DECREF(n);
    }
    return Py_BuildValue("{sNsNsN}", "counts", counts, "details", details, "other_records", other);
fail:
    Py_XDECREF(counts);
    Py_XDECREF(details);
    Py_XDECREF(other);
    return NULL;
}

static PyObject *trace_kind_counts(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_events *e = earl_trace_events(((TraceObject *)self)->trace);
    PyObject *t = PyTuple_New(EARL_KIND_COUNT);
    for (int k = 0; t && k < EARL_KIND_COUNT; k++) {
        PyObject *n = PyLong_FromUnsignedLongLong(e->kind_counts[k]);
        if (!n) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, k, n);
    }
    return t;
}

static PyObject *trace_memory(PyObject *self, PyObject *unused)
{
    (void)unused;
    size_t core = 0;
    size_t total = earl_trace_event_bytes(((TraceObject *)self)->trace, &core);
    return Py_BuildValue("(nn)", (Py_ssize_t)total, (Py_ssize_t)core);
}

static Py_ssize_t trace_length(PyObject *self)
{
    return (Py_ssize_t)earl_trace_events(((TraceObject *)self)->trace)->count;
}

static PyMethodDef trace_methods[] = {
    {"column", trace_column, METH_O, "column(name) -> Column: zero-copy buffer of one column"},
    {"definitions", trace_definitions, METH_NOARGS, "all definitions as plain tuples"},
    {"warnings", trace_warnings, METH_NOARGS, "counted warnings and records not kept"},
    {"kind_counts", trace_kind_counts, METH_NOARGS, "events per kind, indexed by kind"},
    {"memory", trace_memory, METH_NOARGS, "(event store bytes, core column bytes)"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods trace_as_sequence = {.sq_length = trace_length};

static PyTypeObject TraceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.Trace",
    .tp_basicsize = sizeof(TraceObject),
    .tp_dealloc = trace_dealloc,
    .tp_as_sequence = &trace_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An OTF2 trace read into the earlc C store (see earlc.Trace).",
    .tp_methods = trace_methods,
};

/* ---- opening ---------------------------------------------------------------------------- */

void earlc_call_progress(void *data, const char *phase, uint64_t done, uint64_t total)
{
    earlc_progress_bridge *b = data;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!b->failed) {
        PyObject *r = PyObject_CallFunction(b->callback, "sKK", phase, (unsigned long long)done,
                                            (unsigned long long)total);
        if (r) {
            Py_DECREF(r);
        } else {
            b->failed = 1;
            if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt) && !b->pending) {
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                PyErr_NormalizeException(&type, &value, &tb);
                if (tb)
                    PyException_SetTraceback(value, tb);
                b->pending = value;
                Py_XDECREF(type);
                Py_XDECREF(tb);
            }
            PyErr_Clear(); /* a broken progress display must not stop the read */
        }
    }
    PyGILState_Release(g);
}

int earlc_progress_interrupted(earlc_progress_bridge *b)
{
    if (!b->pending)
        return 0;
    PyObject *e = b->pending;
    b->pending = NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return 1;
}

PyObject *earlc_trace_new(earl_trace *tr)
{
    TraceObject *t = PyObject_New(TraceObject, &TraceType);
    if (!t) {
        earl_trace_close(tr);
        return NULL;
    }
    t->trace = tr;
    return (PyObject *)t;
}

PyObject *earlc_open(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = {"path", "threads", "progress", "salvage", NULL};
    PyObject *path_obj = NULL, *progress = Py_None;
    int threads = 0, salvage = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|iOp", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &threads, &progress, &salvage))
        return NULL;
    earlc_progress_bridge bridge = {progress, 0};
    earl_open_options opts = {threads, progress != Py_None ? earlc_call_progress : NULL, &bridge,
                              salvage, NULL};
    earl_trace *tr = NULL;
    earl_error err;
    earl_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = earl_trace_open(path, &opts, &tr, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (earlc_progress_interrupted(&bridge)) {
        earl_trace_close(tr);
        return NULL;
    }
    if (st != EARL_OK)
        return earlc_raise(&err);
    return earlc_trace_new(tr);
}

earl_trace *earlc_trace_of(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &TraceType)) {
        PyErr_Format(PyExc_TypeError, "expected an earlc._core.Trace, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return ((TraceObject *)obj)->trace;
}

int earlc_add_trace_type(PyObject *module)
{
    if (PyType_Ready(&TraceType) < 0)
        return -1;
    Py_INCREF(&TraceType);
    return PyModule_AddObject(module, "Trace", (PyObject *)&TraceType);
}
