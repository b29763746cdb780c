/*
 * races_part.c - _core.PartRaces: the Python face of earl_races_part, the
 * race analysis of one part of a trace, step by step (earl_races.h, "the
 * race analysis of a part").  The steps are those of _core.PartClocks
 * (hb_part.c), wrapped once for both in part_steps.c; what crosses parts
 * travels as bytes, and earlc.parts.replay drives both.
 *
 *   PartRaces(trace, states, requested_source=None, requested_tag=None,
 *             lamport=False, clocked=None, progress=None)
 *   .needs() -> (Column of uint8 kinds, Column of int64 ghost ids)
 *   .export(to, kinds, events, tickets)
 *   .export_crossing() -> n             to part 0, ticket = event id x 4 + kind
 *   .run(), .take(n_parts) -> (offsets, records), .receive(records)
 *   .unfinished(), .waiting(), .force(event)
 *   .finish() -> _core.Races of the own wildcard receives and locations
 */
#include "ext.h"

#include "earl_races.h"

typedef struct {
    earlc_part_object base; /* the handle (an earl_races_part) and its steps */
    PyObject *trace_obj;
    PyObject *states_obj;
    earlc_progress_bridge bridge;
    PyObject *progress;
} PartRacesObject;

/* The steps part_steps.c wraps: earl_races_part's functions. */
static earl_status export_crossing(void *p, size_t *n, earl_error *err)
{
    return earl_races_part_export_crossing(p, n, err);
}
static earl_status run(void *p, earl_error *err) { return earl_races_part_run(p, err); }
static earl_status take(void *p, size_t n_parts, earl_outbox *out, earl_error *err)
{
    return earl_races_part_take(p, n_parts, out, err);
}
static earl_status receive(void *p, const void *records, size_t bytes, earl_error *err)
{
    return earl_races_part_receive(p, records, bytes, err);
}
static size_t unfinished(const void *p) { return earl_races_part_unfinished(p); }
static earl_eid waiting(void *p) { return earl_races_part_waiting(p); }
static earl_status force(void *p, earl_eid e, earl_error *err)
{
    return earl_races_part_force(p, e, err);
}
static const earlc_part_ops races_ops = {"this race analysis was finished already",
                                         export_crossing, run, take, receive, unfinished,
                                         waiting, force};

static void part_races_dealloc(PyObject *self)
{
    PartRacesObject *r = (PartRacesObject *)self;
    earl_races_part_free(r->base.part);
    Py_XDECREF(r->trace_obj);
    Py_XDECREF(r->states_obj);
    Py_XDECREF(r->progress);
    Py_TYPE(self)->tp_free(self);
}

static earl_races_part *part_of(PyObject *self)
{
    return earlc_part_handle(self);
}

static PyObject *part_races_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"trace", "states", "requested_source", "requested_tag", "lamport",
                             "clocked", "progress", NULL};
    PyObject *trace_obj, *states_obj, *source_obj = Py_None, *tag_obj = Py_None;
    PyObject *clocked_obj = Py_None, *progress = Py_None;
    int lamport = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOpOO", kwlist, &trace_obj, &states_obj,
                                     &source_obj, &tag_obj, &lamport, &clocked_obj, &progress))
        return NULL;
    earl_trace *tr = earlc_trace_of(trace_obj);
    earl_states *st = tr ? earlc_states_of(states_obj, NULL) : NULL;
    if (!st)
        return NULL;
    size_t rows = earl_trace_events(tr)->msg.count;
    Py_buffer source = {0}, tag = {0};
    int has_source = earlc_races_rows(source_obj, &source, rows, "requested_source");
    int has_tag = has_source >= 0 ? earlc_races_rows(tag_obj, &tag, rows, "requested_tag") : -1;
    earlc_buffers held = {0};
    const uint8_t *clocked = NULL;
    if (has_tag >= 0 && clocked_obj != Py_None) {
        size_t n = earl_trace_defs(tr)->n_locations;
        clocked = earlc_buffer_array(&held, clocked_obj, 'B', 0, &n, "clocked");
    }
    PartRacesObject *r = NULL;
    if (has_tag >= 0 && (clocked || clocked_obj == Py_None))
        r = (PartRacesObject *)type->tp_alloc(type, 0);
    earl_status rc = EARL_OK;
    earl_error err;
    if (r) {
        r->base.ops = &races_ops;
        Py_INCREF(progress);
        r->progress = progress;
        r->bridge = (earlc_progress_bridge){progress, 0};
        earl_races_options opts = {
            .requested_source = has_source > 0 ? source.buf : NULL,
            .requested_tag = has_tag > 0 ? tag.buf : NULL,
            .clocks = lamport ? EARL_RACES_LAMPORT : EARL_RACES_VECTOR,
            .progress = progress != Py_None ? earlc_call_progress : NULL,
            .progress_data = &r->bridge,
            .clocked = clocked,
        };
        Py_BEGIN_ALLOW_THREADS
        earl_races_part *part = NULL;
        rc = earl_races_part_new(tr, st, &opts, &part, &err);
        r->base.part = part;
        Py_END_ALLOW_THREADS
    }
    if (has_source > 0)
        PyBuffer_Release(&source);
    if (has_tag > 0)
        PyBuffer_Release(&tag);
    earlc_buffers_release(&held);
    if (!r)
        return NULL;
    if (rc != EARL_OK) {
        Py_DECREF(r);
        return earlc_raise(&err);
    }
    Py_INCREF(trace_obj);
    Py_INCREF(states_obj);
    r->trace_obj = trace_obj;
    r->states_obj = states_obj;
    return (PyObject *)r;
}

static PyObject *part_races_needs(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_races_part *p = part_of(self);
    if (!p)
        return NULL;
    const uint8_t *kinds;
    const earl_eid *events;
    size_t n = earl_races_part_needs(p, &kinds, &events);
    return Py_BuildValue("(NN)", earlc_column_new(self, kinds, n, 1, "B"),
                         earlc_column_new(self, events, n, sizeof(earl_eid), "q"));
}

static PyObject *part_races_export(PyObject *self, PyObject *args)
{
    earl_races_part *p = part_of(self);
    int to;
    PyObject *kinds_obj, *events_obj, *tickets_obj;
    if (!p || !PyArg_ParseTuple(args, "iOOO", &to, &kinds_obj, &events_obj, &tickets_obj))
        return NULL;
    earlc_buffers held = {0};
    size_t n = (size_t)-1;
    const uint8_t *kinds = earlc_buffer_array(&held, kinds_obj, 'B', 0, &n, "kinds");
    const earl_eid *events = kinds ? earlc_buffer_array(&held, events_obj, 'q', 0, &n, "events")
                                   : NULL;
    const uint64_t *tickets = events ? earlc_buffer_array(&held, tickets_obj, 'Q', 0, &n,
                                                          "tickets") : NULL;
    if (!tickets) {
        earlc_buffers_release(&held);
        return NULL;
    }
    earl_error err;
    earl_status st = earl_races_part_export(p, to, kinds, events, tickets, n, &err);
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *part_races_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    PartRacesObject *r = (PartRacesObject *)self;
    earl_races_part *p = part_of(self);
    if (!p)
        return NULL;
    earl_races *races;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_races_part_finish(p, &races, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    earl_races_part_free(p);
    r->base.part = NULL;
    return earlc_races_new(races, r->trace_obj, r->states_obj);
}

static PyMethodDef part_races_methods[] = {
    {"needs", part_races_needs, METH_NOARGS, "(kinds, ghost events) waited for"},
    {"export", part_races_export, METH_VARARGS, "export(to, kinds, events, tickets)"},
    {"export_crossing", earlc_part_export_crossing, METH_NOARGS,
     "export to part 0 every clock another part may wait for (ticket: the key)"},
    EARLC_PART_STEP_METHODS,
    {"finish", part_races_finish, METH_NOARGS, "the result: a _core.Races"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PartRacesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.PartRaces",
    .tp_basicsize = sizeof(PartRacesObject),
    .tp_dealloc = part_races_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The race analysis of a part of a trace (earl_races_part_*).",
    .tp_methods = part_races_methods,
    .tp_new = part_races_new,
};

int earlc_add_part_races_type(PyObject *module)
{
    if (PyType_Ready(&PartRacesType) < 0)
        return -1;
    Py_INCREF(&PartRacesType);
    return PyModule_AddObject(module, "PartRaces", (PyObject *)&PartRacesType);
}
