/*
 * hb_part.c - _core.PartClocks: the Python face of earl_hb_part, the
 * happened-before replay of one part of a trace, step by step (earl_hb.h,
 * "the replay of a part").  What crosses parts travels as bytes, which the
 * Python driver (earlc.parts.replay) hands to the other parts as they are.
 * The steps shared with _core.PartRaces (run, take, receive, ...) are
 * wrapped once in part_steps.c; this file gives them earl_hb_part's.
 *
 *   PartClocks(states, stamped, threads=0, progress=None)
 *   .needs() -> Column of int64 ghost ids (a ticket is an index)
 *   .export(to, events, tickets)        own int64 ids, uint64 tickets
 *   .export_crossing() -> n             to part 0, ticket = event id
 *   .run()                              the GIL released
 *   .take(n_parts) -> (offsets bytes of n_parts + 1 uint64, records bytes)
 *   .receive(records)
 *   .unfinished() -> int, .waiting() -> int (-1), .force(event)
 *   .record_bytes() -> int, .finish() -> _core.VectorClocks
 *
 *   frontier_solve(clocks, width, src, dst) -> solved   (earl_hb_frontier_solve)
 *   frontier_fold(next, width, rows, row_of, location, position) -> cycle
 *                                                       (earl_hb_frontier_fold)
 */
#include "ext.h"

#include "earl_hb.h"

typedef struct {
    earlc_part_object base; /* the handle (an earl_hb_part) and its steps */
    PyObject *states_obj;
    earlc_progress_bridge bridge;
    PyObject *progress;
} PartClocksObject;

/* The steps part_steps.c wraps: earl_hb_part's functions. */
static earl_status export_crossing(void *p, size_t *n, earl_error *err)
{
    return earl_hb_part_export_crossing(p, n, err);
}
static earl_status run(void *p, earl_error *err) { return earl_hb_part_run(p, err); }
static earl_status take(void *p, size_t n_parts, earl_outbox *out, earl_error *err)
{
    return earl_hb_part_take(p, n_parts, out, err);
}
static earl_status receive(void *p, const void *records, size_t bytes, earl_error *err)
{
    return earl_hb_part_receive(p, records, bytes, err);
}
static size_t unfinished(const void *p) { return earl_hb_part_unfinished(p); }
static earl_eid waiting(void *p) { return earl_hb_part_waiting(p); }
static earl_status force(void *p, earl_eid e, earl_error *err)
{
    return earl_hb_part_force(p, e, err);
}
static const earlc_part_ops clocks_ops = {"this replay was finished already", export_crossing,
                                          run, take, receive, unfinished, waiting, force};

static void part_clocks_dealloc(PyObject *self)
{
    PartClocksObject *c = (PartClocksObject *)self;
    earl_hb_part_free(c->base.part);
    Py_XDECREF(c->states_obj);
    Py_XDECREF(c->progress);
    Py_TYPE(self)->tp_free(self);
}

static earl_hb_part *part_of(PyObject *self)
{
    return earlc_part_handle(self);
}

static PyObject *part_clocks_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"states", "stamped", "threads", "progress", NULL};
    PyObject *states_obj, *stamped_obj, *progress = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|iO", kwlist, &states_obj, &stamped_obj,
                                     &threads, &progress))
        return NULL;
    PyObject *trace_obj;
    earl_states *st = earlc_states_of(states_obj, &trace_obj);
    earl_trace *tr = st ? earlc_trace_of(trace_obj) : NULL;
    if (!tr)
        return NULL;
    earlc_buffers held = {0};
    size_t n = (size_t)-1;
    const earl_eid *stamped = earlc_buffer_array(&held, stamped_obj, 'q', 0, &n, "stamped");
    if (!stamped)
        return NULL;
    PartClocksObject *c = (PartClocksObject *)type->tp_alloc(type, 0);
    if (!c) {
        earlc_buffers_release(&held);
        return NULL;
    }
    c->base.ops = &clocks_ops;
    Py_INCREF(progress);
    c->progress = progress;
    c->bridge = (earlc_progress_bridge){progress, 0};
    earl_hb_options opts = {threads, progress != Py_None ? earlc_call_progress : NULL,
                            &c->bridge};
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    earl_hb_part *part = NULL;
    rc = earl_hb_part_new(tr, st, stamped, n, &opts, &part, &err);
    c->base.part = part;
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (rc != EARL_OK) {
        Py_DECREF(c);
        return earlc_raise(&err);
    }
    Py_INCREF(states_obj);
    c->states_obj = states_obj;
    return (PyObject *)c;
}

static PyObject *part_clocks_needs(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_hb_part *p = part_of(self);
    if (!p)
        return NULL;
    const earl_eid *ghosts;
    size_t n = earl_hb_part_needs(p, &ghosts);
    return earlc_column_new(self, ghosts, n, sizeof(earl_eid), "q");
}

static PyObject *part_clocks_export(PyObject *self, PyObject *args)
{
    earl_hb_part *p = part_of(self);
    int to;
    PyObject *events_obj, *tickets_obj;
    if (!p || !PyArg_ParseTuple(args, "iOO", &to, &events_obj, &tickets_obj))
        return NULL;
    earlc_buffers held = {0};
    size_t n = (size_t)-1;
    const earl_eid *events = earlc_buffer_array(&held, events_obj, 'q', 0, &n, "events");
    const uint64_t *tickets = events ? earlc_buffer_array(&held, tickets_obj, 'Q', 0, &n,
                                                          "tickets") : NULL;
    if (!tickets) {
        earlc_buffers_release(&held);
        return NULL;
    }
    earl_error err;
    earl_status st = earl_hb_part_export(p, to, events, tickets, n, &err);
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *part_clocks_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    PartClocksObject *c = (PartClocksObject *)self;
    earl_hb_part *p = part_of(self);
    if (!p)
        return NULL;
    earl_hb *hb;
    earl_error err;
    if (earl_hb_part_finish(p, &hb, &err) != EARL_OK)
        return earlc_raise(&err);
    earl_hb_part_free(p);
    c->base.part = NULL;
    return earlc_clocks_new(hb, c->states_obj);
}

static PyMethodDef part_clocks_methods[] = {
    {"needs", part_clocks_needs, METH_NOARGS, "ghost events waited for: Column of int64"},
    {"export", part_clocks_export, METH_VARARGS, "export(to, events, tickets)"},
    {"export_crossing", earlc_part_export_crossing, METH_NOARGS,
     "export every own event another part may wait for, to part 0, ticket = event id"},
    EARLC_PART_STEP_METHODS,
    {"finish", part_clocks_finish, METH_NOARGS, "the stamps: a VectorClocks"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PartClocksType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.PartClocks",
    .tp_basicsize = sizeof(PartClocksObject),
    .tp_dealloc = part_clocks_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The happened-before replay of a part of a trace (earl_hb_part_*).",
    .tp_methods = part_clocks_methods,
    .tp_new = part_clocks_new,
};

/* frontier_solve(clocks, src, dst) -> solved: earl_hb_frontier_solve on a
 * writable C-contiguous uint32 (n, width) array, in place. */
static PyObject *frontier_solve(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *clocks_obj, *src_obj, *dst_obj;
    unsigned int width;
    if (!PyArg_ParseTuple(args, "OIOO", &clocks_obj, &width, &src_obj, &dst_obj))
        return NULL;
    if (!width)
        return PyErr_Format(PyExc_ValueError, "frontier_solve: width 0");
    earlc_buffers held = {0};
    size_t entries = (size_t)-1, edges = (size_t)-1;
    uint32_t *clocks = earlc_buffer_array(&held, clocks_obj, 'I', 1, &entries, "clocks");
    const int64_t *src = clocks ? earlc_buffer_array(&held, src_obj, 'q', 0, &edges, "src")
                                : NULL;
    const int64_t *dst = src ? earlc_buffer_array(&held, dst_obj, 'q', 0, &edges, "dst") : NULL;
    if (!dst || entries % width) {
        earlc_buffers_release(&held);
        return dst ? PyErr_Format(PyExc_ValueError, "frontier_solve: %zu entries are no "
                                  "clocks of %u", entries, width) : NULL;
    }
    size_t solved = 0;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_hb_frontier_solve(clocks, entries / width, width, src, dst, edges, &solved, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return PyLong_FromSize_t(solved);
}

/* frontier_fold(next, width, rows, row_of, location, position) -> cycle:
 * earl_hb_frontier_fold, next (uint32, n x width) in place. */
static PyObject *frontier_fold(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *next_obj, *rows_obj, *row_of_obj, *loc_obj, *pos_obj;
    unsigned int width;
    if (!PyArg_ParseTuple(args, "OIOOOO", &next_obj, &width, &rows_obj, &row_of_obj, &loc_obj,
                          &pos_obj))
        return NULL;
    if (!width)
        return PyErr_Format(PyExc_ValueError, "frontier_fold: width 0");
    earlc_buffers held = {0};
    size_t entries = (size_t)-1, row_entries = (size_t)-1, n = (size_t)-1;
    uint32_t *next = earlc_buffer_array(&held, next_obj, 'I', 1, &entries, "next");
    const uint32_t *rows = next ? earlc_buffer_array(&held, rows_obj, 'I', 0, &row_entries,
                                                     "rows") : NULL;
    const int64_t *row_of = rows ? earlc_buffer_array(&held, row_of_obj, 'q', 0, &n, "row_of")
                                 : NULL;
    const int32_t *loc = row_of ? earlc_buffer_array(&held, loc_obj, 'i', 0, &n, "location")
                                : NULL;
    const int64_t *pos = loc ? earlc_buffer_array(&held, pos_obj, 'q', 0, &n, "position") : NULL;
    if (!pos || entries != n * width || row_entries % width) {
        earlc_buffers_release(&held);
        return pos ? PyErr_Format(PyExc_ValueError, "frontier_fold: %zu and %zu entries are "
                                  "no clocks of %u for %zu events", entries, row_entries, width,
                                  n) : NULL;
    }
    int cycle = 0;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_hb_frontier_fold(next, n, width, rows, row_entries / width, row_of, loc, pos,
                               &cycle, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return PyBool_FromLong(cycle);
}

static PyMethodDef part_clocks_functions[] = {
    {"frontier_solve", frontier_solve, METH_VARARGS,
     "frontier_solve(clocks, width, src, dst) -> solved (in place)"},
    {"frontier_fold", frontier_fold, METH_VARARGS,
     "frontier_fold(next, width, rows, row_of, location, position) -> cycle (in place)"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_part_clocks_type(PyObject *module)
{
    if (PyType_Ready(&PartClocksType) < 0)
        return -1;
    Py_INCREF(&PartClocksType);
    if (PyModule_AddObject(module, "PartClocks", (PyObject *)&PartClocksType) < 0)
        return -1;
    return PyModule_AddFunctions(module, part_clocks_functions);
}
