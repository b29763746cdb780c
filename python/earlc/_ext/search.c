/*
 * search.c - _core.SearchProgram and _core.search: the Python face of the
 * causal pattern search (earl_search.h).
 *
 * _core.SearchProgram(text) parses a pattern text (earlc.TraceError with the
 * line, column and what was expected when it is malformed).
 * _core.search(states, program, name=None, limit=0, threads=0, progress=None,
 * teams=1, pruning=True) binds the program to the trace of a _core.States and runs the search with
 * the GIL released; the matches come back as a dict holding the event ids
 * as int64 bytes (rows x columns), the column names and the statistics, for
 * python/earlc/search.py to wrap.
 */
#include "ext.h"

#include "earl_search.h"

typedef struct {
    PyObject_HEAD
    earl_search_program *program;
} ProgramObject;

static void program_dealloc(PyObject *self)
{
    earl_search_program_free(((ProgramObject *)self)->program);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"text", NULL};
    const char *text;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s", kwlist, &text))
        return NULL;
    earl_search_program *p = NULL;
    earl_error err;
    if (earl_search_parse(text, &p, &err) != EARL_OK)
        return earlc_raise(&err);
    ProgramObject *o = (ProgramObject *)type->tp_alloc(type, 0);
    if (!o) {
        earl_search_program_free(p);
        return NULL;
    }
    o->program = p;
    return (PyObject *)o;
}

static PyObject *program_patterns(PyObject *self, PyObject *unused)
{
    (void)unused;
    const earl_search_program *p = ((ProgramObject *)self)->program;
    size_t n = earl_search_pattern_count(p);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t k = 0; t && k < n; k++) {
        PyObject *s = PyUnicode_FromString(earl_search_pattern_name(p, k));
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)k, s);
    }
    return t;
}

static PyMethodDef program_methods[] = {
    {"patterns", program_patterns, METH_NOARGS, "names of the patterns defined, in text order"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.SearchProgram",
    .tp_basicsize = sizeof(ProgramObject),
    .tp_dealloc = program_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SearchProgram(text): a parsed pattern text (see earlc.search).",
    .tp_methods = program_methods,
    .tp_new = program_new,
};

static PyObject *variables_list(const earl_search_query *q)
{
    size_t n = earl_search_query_variables(q);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list && k < n; k++) {
        earl_search_variable_info info;
        earl_search_query_variable(q, k, &info);
        PyObject *t = Py_BuildValue("{s:s,s:C,s:I,s:n,s:O}", "name", info.name, "quantifier",
                                    (int)info.quantifier, "arity", info.arity, "domain",
                                    (Py_ssize_t)info.domain, "single_location",
                                    info.single_location ? Py_True : Py_False);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, t);
    }
    return list;
}

static PyObject *result_dict(const earl_search_query *q, const earl_search_result *r)
{
    size_t rows = earl_search_result_rows(r), cols = earl_search_result_columns(r);
    PyObject *names = PyTuple_New((Py_ssize_t)cols);
    for (size_t j = 0; names && j < cols; j++) {
        PyObject *s = PyUnicode_FromString(earl_search_result_column(r, j));
        if (!s) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, (Py_ssize_t)j, s);
    }
    PyObject *events = PyBytes_FromStringAndSize((const char *)earl_search_result_events(r),
                                                 (Py_ssize_t)(rows * cols * sizeof(earl_eid)));
    PyObject *vars = variables_list(q);
    if (!names || !events || !vars) {
        Py_XDECREF(names);
        Py_XDECREF(events);
        Py_XDECREF(vars);
        return NULL;
    }
    earl_search_stats st = earl_search_result_stats(r);
    size_t bytes = 0, stamped = earl_search_query_stamped(q, &bytes);
    size_t nt = earl_search_result_threads(r);
    PyObject *threads = PyList_New((Py_ssize_t)nt);
    for (size_t k = 0; threads && k < nt; k++) {
        earl_search_thread_stats ts = earl_search_result_thread(r, k);
        PyObject *t = Py_BuildValue("{s:K,s:K,s:K,s:d,s:i}", "nodes",
                                    (unsigned long long)ts.nodes, "checks",
                                    (unsigned long long)ts.checks, "tasks",
                                    (unsigned long long)ts.tasks, "idle_seconds",
                                    ts.idle_seconds, "team", ts.team);
        if (!t) {
            Py_CLEAR(threads);
            break;
        }
        PyList_SET_ITEM(threads, (Py_ssize_t)k, t);
    }
    if (!threads) {
        Py_DECREF(names);
        Py_DECREF(events);
        Py_DECREF(vars);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:N,s:n,s:O,s:N,s:{s:K,s:K,s:K,s:d,s:n,s:n,s:K,s:K,s:N}}",
                         "columns", names, "events", events, "rows", (Py_ssize_t)rows,
                         "truncated", earl_search_result_truncated(r) ? Py_True : Py_False,
                         "variables", vars, "stats", "nodes", (unsigned long long)st.nodes,
                         "checks", (unsigned long long)st.checks, "pruned",
                         (unsigned long long)st.pruned, "seconds", st.seconds, "stamped",
                         (Py_ssize_t)stamped, "stamp_bytes", (Py_ssize_t)bytes, "tasks",
                         (unsigned long long)st.tasks, "stolen", (unsigned long long)st.stolen,
                         "threads", threads);
}

/* search(states, program, name=None, limit=0, threads=0, progress=None) -> dict */
static PyObject *search_run(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = {"states", "program", "name", "limit", "threads", "progress",
                             "teams", "pruning", NULL};
    PyObject *states_obj, *program_obj, *progress = Py_None;
    const char *name = NULL;
    unsigned long long limit = 0;
    int threads = 0, teams = 1, pruning = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!|zKiOip", kwlist, &states_obj,
                                     &ProgramType, &program_obj, &name, &limit, &threads,
                                     &progress, &teams, &pruning))
        return NULL;
    PyObject *trace_obj;
    earl_states *st = earlc_states_of(states_obj, &trace_obj);
    earl_trace *tr = st ? earlc_trace_of(trace_obj) : NULL;
    if (!tr)
        return NULL;
    const earl_search_program *prog = ((ProgramObject *)program_obj)->program;
    earlc_progress_bridge bridge = {progress, 0};
    earl_progress_fn fn = progress != Py_None ? earlc_call_progress : NULL;
    earl_search_prepare_options popt = {name, threads, fn, &bridge};
    earl_search_options xopt = {limit, fn, &bridge, 0, 0, threads, teams, !pruning};
    earl_search_query *q = NULL;
    earl_search_result *r = NULL;
    earl_error err;
    earl_status rc;
    /* the states object (and through it the trace) outlives the call: we hold
     * a reference through the arguments */
    Py_BEGIN_ALLOW_THREADS
    rc = earl_search_prepare(prog, tr, st, &popt, &q, &err);
    if (rc == EARL_OK)
        rc = earl_search_execute(q, &xopt, &r, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK) {
        earl_search_query_free(q);
        return earlc_raise(&err);
    }
    PyObject *d = result_dict(q, r);
    earl_search_result_free(r);
    earl_search_query_free(q);
    return d;
}

static PyMethodDef search_functions[] = {
    {"search", (PyCFunction)(void (*)(void))search_run, METH_VARARGS | METH_KEYWORDS,
     "search(states, program, name=None, limit=0, threads=0, progress=None, teams=1, "
     "pruning=True) -> dict of the matches (see earlc.search)"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_search(PyObject *module)
{
    if (PyType_Ready(&ProgramType) < 0)
        return -1;
    Py_INCREF(&ProgramType);
    if (PyModule_AddObject(module, "SearchProgram", (PyObject *)&ProgramType) < 0)
        return -1;
    return PyModule_AddFunctions(module, search_functions);
}
