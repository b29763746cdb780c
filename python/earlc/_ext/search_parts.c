/*
 * search_parts.c - the pattern search of a trace in parts (earl_search.h,
 * "a trace in parts"): the values a part holds of a pattern's classes, and
 * _core.SearchQuery, a query prepared from every part's values and stamps
 * gathered by the Python driver (earlc.parts.search), whose sub-patterns and
 * pattern each part then searches its block of.
 *
 *   search_part_values(states, program, name=None)
 *       -> [(first, second, arity, int64 bytes of part event ids)]
 *   SearchQuery(program, name, classes, values, width, events, location,
 *               position, stamps, threads=0, progress=None)
 *       classes: [(first, second, arity, rows)], values: their rows one after
 *       the other (int64, the whole trace's ids); the stamps of every event
 *       (events ascending) with its location and position
 *   .pending() -> name | None, .solved(rows: int64, the pending one's rows x columns)
 *   .execute(limit=0, threads=0, teams=1, pruning=True, progress=None,
 *            tasks=0, block=0, blocks=0, subpattern=False) -> dict (as _core.search)
 */
#include "ext.h"

#include "earl_hb.h"
#include "earl_search.h"

typedef struct {
    PyObject_HEAD
    PyObject *program_obj;
    earl_search_query *query;
    earlc_progress_bridge bridge;
    PyObject *progress;
} QueryObject;

static void query_dealloc(PyObject *self)
{
    QueryObject *q = (QueryObject *)self;
    earl_search_query_free(q->query);
    Py_XDECREF(q->program_obj);
    Py_XDECREF(q->progress);
    Py_TYPE(self)->tp_free(self);
}

/* search_part_values(states, program, name=None) */
static PyObject *part_values(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = {"states", "program", "name", NULL};
    PyObject *states_obj, *program_obj;
    const char *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|z", kwlist, &states_obj, &program_obj,
                                     &name))
        return NULL;
    earl_search_program *prog = earlc_program_of(program_obj);
    PyObject *trace_obj;
    earl_states *st = prog ? earlc_states_of(states_obj, &trace_obj) : NULL;
    earl_trace *tr = st ? earlc_trace_of(trace_obj) : NULL;
    if (!tr)
        return NULL;
    earl_search_values *v = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_search_part_values(prog, name, tr, st, &v, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK)
        return earlc_raise(&err);
    size_t n = earl_search_values_count(v);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list && k < n; k++) {
        earl_search_given_class c = earl_search_values_class(v, k);
        PyObject *t = Py_BuildValue("(iiIy#)", (int)c.first, (int)c.second, (unsigned)c.arity,
                                    (const char *)c.values,
                                    (Py_ssize_t)(c.n * c.arity * sizeof(earl_eid)));
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, t);
    }
    earl_search_values_free(v);
    return list;
}

static PyObject *query_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"program", "name", "classes", "values", "width", "events",
                             "location", "position", "stamps", "threads", "progress", NULL};
    PyObject *program_obj, *classes, *values_obj, *events_obj, *loc_obj, *pos_obj, *stamps_obj;
    PyObject *progress = Py_None;
    const char *name = NULL;
    unsigned width;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OzO!OIOOOO|iO", kwlist, &program_obj, &name,
                                     &PyList_Type, &classes, &values_obj, &width, &events_obj,
                                     &loc_obj, &pos_obj, &stamps_obj, &threads, &progress))
        return NULL;
    earl_search_program *prog = earlc_program_of(program_obj);
    if (!prog)
        return NULL;
    Py_ssize_t nc = PyList_GET_SIZE(classes);
    earl_search_given_class *given_classes = PyMem_Malloc((size_t)(nc + 1) * sizeof *given_classes);
    if (!given_classes)
        return PyErr_NoMemory();
    earlc_buffers held = {0};
    size_t n = (size_t)-1, entries = (size_t)-1, n_values = (size_t)-1, at = 0;
    const earl_eid *values = earlc_buffer_array(&held, values_obj, 'q', 0, &n_values, "values");
    const earl_eid *events = values ? earlc_buffer_array(&held, events_obj, 'q', 0, &n, "events")
                                    : NULL;
    const int32_t *loc = events ? earlc_buffer_array(&held, loc_obj, 'i', 0, &n, "location") : NULL;
    const uint32_t *pos = loc ? earlc_buffer_array(&held, pos_obj, 'I', 0, &n, "position") : NULL;
    const uint32_t *stamps = pos ? earlc_buffer_array(&held, stamps_obj, 'I', 0, &entries,
                                                      "stamps") : NULL;
    for (Py_ssize_t k = 0; stamps && k < nc; k++) {
        int first, second;
        unsigned arity;
        Py_ssize_t rows;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(classes, k), "iiIn", &first, &second, &arity,
                              &rows)) {
            stamps = NULL;
            break;
        }
        if (rows < 0 || !arity || (size_t)rows * arity > n_values - at) {
            PyErr_SetString(PyExc_ValueError, "classes: more rows than values");
            stamps = NULL;
            break;
        }
        given_classes[k] = (earl_search_given_class){first, second, arity, (size_t)rows,
                                                     values + at};
        at += (size_t)rows * arity;
    }
    if (stamps && entries != n * (size_t)width) {
        PyErr_Format(PyExc_ValueError, "stamps: %zu entries for %zu events of %u", entries, n,
                     width);
        stamps = NULL;
    }
    if (!stamps) {
        earlc_buffers_release(&held);
        PyMem_Free(given_classes);
        return NULL;
    }
    QueryObject *q = (QueryObject *)type->tp_alloc(type, 0);
    if (!q) {
        earlc_buffers_release(&held);
        PyMem_Free(given_classes);
        return NULL;
    }
    Py_INCREF(program_obj);
    q->program_obj = program_obj;
    Py_INCREF(progress);
    q->progress = progress;
    q->bridge = (earlc_progress_bridge){progress, 0};
    earl_hb *hb = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_hb_from_stamps(width, n, events, loc, pos, stamps, &hb, &err);
    if (rc == EARL_OK) {
        earl_search_given given = {(size_t)nc, given_classes, hb};
        earl_search_prepare_options o = {name, threads,
                                         progress != Py_None ? earlc_call_progress : NULL,
                                         &q->bridge, &given, 1};
        rc = earl_search_prepare(prog, NULL, NULL, &o, &q->query, &err);
        if (rc != EARL_OK)
            earl_hb_free(hb);
    }
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    PyMem_Free(given_classes);
    if (rc != EARL_OK) {
        Py_DECREF(q);
        return earlc_raise(&err);
    }
    return (PyObject *)q;
}

static PyObject *query_pending(PyObject *self, PyObject *unused)
{
    (void)unused;
    const char *name = earl_search_query_pending(((QueryObject *)self)->query, NULL);
    if (!name)
        Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *query_solved(PyObject *self, PyObject *arg)
{
    earlc_buffers held = {0};
    size_t n = (size_t)-1;
    const earl_eid *rows = earlc_buffer_array(&held, arg, 'q', 0, &n, "rows");
    if (!rows)
        return NULL;
    earl_search_query *q = ((QueryObject *)self)->query;
    uint32_t columns;
    if (!earl_search_query_pending(q, &columns) || !columns || n % columns) {
        earlc_buffers_release(&held);
        return PyErr_Format(PyExc_ValueError, "solved: %zu event ids for rows of %u", n,
                            (unsigned)columns);
    }
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_search_query_solved(q, rows, n / columns, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (rc != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *query_execute(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"limit", "threads", "teams", "pruning", "progress", "tasks", "block",
                             "blocks", "subpattern", NULL};
    QueryObject *q = (QueryObject *)self;
    unsigned long long limit = 0;
    Py_ssize_t tasks = 0;
    int threads = 0, teams = 1, pruning = 1, block = 0, blocks = 0, subpattern = 0;
    PyObject *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|KiipOniip", kwlist, &limit, &threads, &teams,
                                     &pruning, &progress, &tasks, &block, &blocks, &subpattern))
        return NULL;
    earlc_progress_bridge bridge = {progress, 0};
    earl_search_options o = {.limit = limit, .threads = threads, .teams = teams,
                             .no_pruning = !pruning,
                             .progress = progress != Py_None ? earlc_call_progress : NULL,
                             .progress_data = &bridge, .tasks = (size_t)(tasks > 0 ? tasks : 0),
                             .block = block, .blocks = blocks, .subpattern = subpattern};
    return earlc_search_execute(q->query, &o);
}

static PyMethodDef query_methods[] = {
    {"pending", query_pending, METH_NOARGS, "the sub-pattern to solve next, or None"},
    {"solved", query_solved, METH_O, "solved(rows): the pending sub-pattern's whole answer"},
    {"execute", (PyCFunction)(void (*)(void))query_execute, METH_VARARGS | METH_KEYWORDS,
     "execute(limit=0, threads=0, teams=1, pruning=True, progress=None, tasks=0, block=0, "
     "blocks=0, subpattern=False) -> dict"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject QueryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.SearchQuery",
    .tp_basicsize = sizeof(QueryObject),
    .tp_dealloc = query_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A pattern prepared from the gathered values of a trace in parts.",
    .tp_methods = query_methods,
    .tp_new = query_new,
};

static PyMethodDef functions[] = {
    {"search_part_values", (PyCFunction)(void (*)(void))part_values,
     METH_VARARGS | METH_KEYWORDS,
     "search_part_values(states, program, name=None) -> [(first, second, arity, values)]"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_search_query_type(PyObject *module)
{
    if (PyType_Ready(&QueryType) < 0)
        return -1;
    Py_INCREF(&QueryType);
    if (PyModule_AddObject(module, "SearchQuery", (PyObject *)&QueryType) < 0)
        return -1;
    return PyModule_AddFunctions(module, functions);
}
