/*
 * search.c - _core.SearchProgram and _core.search: the Python face of the
 * causal pattern search (earl_search.h).
 *
 * _core.SearchProgram(text) parses a pattern text (earlc.TraceError with the
 * line, column and what was expected when it is malformed).
 * _core.search(states, program, name=None, limit=0, threads=0, progress=None,
 * teams=1, pruning=True) binds the program to the trace of a _core.States and
 * runs the search with the GIL released, on a helper thread while the calling
 * thread looks for Ctrl-C every 100 ms (a signal stops the search and its
 * exception is raised); the matches come back as a dict holding the event ids
 * as int64 bytes (rows x columns), the column names and the statistics, for
 * python/earlc/search.py to wrap.
 */
#include "ext.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
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

static PyObject *warnings_list(const earl_search_query *q)
{
    size_t n = earl_search_query_warnings(q);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list && k < n; k++) {
        PyObject *s = PyUnicode_FromString(earl_search_query_warning(q, k));
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, s);
    }
    return list;
}

static void free_result_capsule(PyObject *capsule)
{
    earl_search_result_free(PyCapsule_GetPointer(capsule, "earlc.search_result"));
}

/* The matches as a read-only int64 buffer over the result's own memory (no
 * copy: numpy views it); the buffer frees the result when the last view
 * goes.  On success the buffer owns r, on failure r is freed. */
static PyObject *matches_buffer(earl_search_result *r)
{
    PyObject *owner = PyCapsule_New(r, "earlc.search_result", free_result_capsule);
    if (!owner) {
        earl_search_result_free(r);
        return NULL;
    }
    const earl_eid *ev = earl_search_result_events(r);
    static const earl_eid none = 0;
    PyObject *buf = earlc_column_new(owner, ev ? ev : &none,
                                     earl_search_result_rows(r) * earl_search_result_columns(r),
                                     sizeof(earl_eid), "q");
    Py_DECREF(owner);
    return buf;
}

/* The matches and what the search says about them; takes r over (freed
 * with the last view of its matches).  prepare_seconds: the wall time of
 * earl_search_prepare (0 when the query was prepared elsewhere). */
PyObject *earlc_search_result_dict(const earl_search_query *q, earl_search_result *r,
                                   double prepare_seconds)
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
    PyObject *vars = variables_list(q);
    PyObject *warnings = warnings_list(q);
    if (!names || !vars || !warnings) {
        Py_XDECREF(names);
        Py_XDECREF(vars);
        Py_XDECREF(warnings);
        earl_search_result_free(r);
        return NULL;
    }
    earl_search_stats st = earl_search_result_stats(r);
    size_t bytes = 0, stamped = earl_search_query_stamped(q, &bytes);
    size_t nt = earl_search_result_threads(r);
    PyObject *threads = PyList_New((Py_ssize_t)nt);
    for (size_t k = 0; threads && k < nt; k++) {
        earl_search_thread_stats ts = earl_search_result_thread(r, k);
        PyObject *t = Py_BuildValue("{s:K,s:K,s:K,s:d,s:d,s:i}", "nodes",
                                    (unsigned long long)ts.nodes, "checks",
                                    (unsigned long long)ts.checks, "tasks",
                                    (unsigned long long)ts.tasks, "idle_seconds",
                                    ts.idle_seconds, "cpu_seconds", ts.cpu_seconds, "team",
                                    ts.team);
        if (!t) {
            Py_CLEAR(threads);
            break;
        }
        PyList_SET_ITEM(threads, (Py_ssize_t)k, t);
    }
    PyObject *events = threads ? matches_buffer(r) : (earl_search_result_free(r), NULL);
    if (!threads || !events) {
        Py_XDECREF(threads);
        Py_DECREF(names);
        Py_DECREF(vars);
        Py_DECREF(warnings);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:N,s:n,s:O,s:N,s:N,s:{s:K,s:K,s:K,s:d,s:d,s:d,s:n,s:n,s:K,s:K,"
                         "s:N}}",
                         "columns", names, "events", events, "rows", (Py_ssize_t)rows,
                         "truncated", earl_search_result_truncated(r) ? Py_True : Py_False,
                         "variables", vars, "warnings", warnings, "stats", "nodes",
                         (unsigned long long)st.nodes,
                         "checks", (unsigned long long)st.checks, "pruned",
                         (unsigned long long)st.pruned, "seconds", st.seconds,
                         "prepare_seconds", prepare_seconds, "merge_seconds", st.merge_seconds,
                         "stamped",
                         (Py_ssize_t)stamped, "stamp_bytes", (Py_ssize_t)bytes, "tasks",
                         (unsigned long long)st.tasks, "stolen", (unsigned long long)st.stolen,
                         "threads", threads);
}

/* One search, run by a helper thread so that the calling thread can look
 * for Ctrl-C (PyErr_CheckSignals works on the main thread only) while the
 * search runs without the GIL. */
typedef struct search_job {
    const earl_search_program *prog;
    const earl_trace *trace;
    earl_states *states;
    earl_search_prepare_options popt;
    earl_search_options xopt;
    earl_search_query *query;
    earl_search_result *result;
    earl_error err;
    earl_status rc;
    double prepare_seconds;    /* wall time of earl_search_prepare */
    _Atomic int stop;
    int done;
    pthread_mutex_t lock;
    pthread_cond_t finished;
} search_job;

static int job_interrupted(void *data)
{
    return atomic_load_explicit(&((search_job *)data)->stop, memory_order_relaxed);
}

static void job_run(search_job *j)
{
    j->rc = EARL_OK;
    if (!j->query) { /* else prepared already (a trace in parts, search_parts.c) */
        double t0 = earl_now_seconds();
        j->rc = earl_search_prepare(j->prog, j->trace, j->states, &j->popt, &j->query, &j->err);
        j->prepare_seconds = earl_now_seconds() - t0;
    }
    if (j->rc == EARL_OK)
        j->rc = earl_search_execute(j->query, &j->xopt, &j->result, &j->err);
}

static void *job_thread(void *arg)
{
    search_job *j = arg;
    job_run(j);
    pthread_mutex_lock(&j->lock);
    j->done = 1;
    pthread_cond_signal(&j->finished);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* Run the job; returns -1 with KeyboardInterrupt (or the signal handler's
 * exception) set when a signal stopped it.  Called with the GIL held. */
static int job_run_interruptible(search_job *j)
{
    int interrupted = 0;
    pthread_t thread;
    Py_BEGIN_ALLOW_THREADS
    if (pthread_create(&thread, NULL, job_thread, j) != 0) {
        job_run(j); /* no thread: search here, without looking for signals */
    } else {
        pthread_mutex_lock(&j->lock);
        while (!j->done) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&j->finished, &j->lock, &until);
            if (j->done || interrupted)
                continue;
            pthread_mutex_unlock(&j->lock);
            Py_BLOCK_THREADS
            interrupted = PyErr_CheckSignals() < 0;
            Py_UNBLOCK_THREADS
            if (interrupted)
                atomic_store(&j->stop, 1);
            pthread_mutex_lock(&j->lock);
        }
        pthread_mutex_unlock(&j->lock);
        pthread_join(thread, NULL);
    }
    Py_END_ALLOW_THREADS
    return interrupted ? -1 : 0;
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
    earlc_progress_bridge bridge = {progress, 0};
    earl_progress_fn fn = progress != Py_None ? earlc_call_progress : NULL;
    search_job j;
    memset(&j, 0, sizeof j);
    j.prog = ((ProgramObject *)program_obj)->program;
    j.trace = tr;
    j.states = st;
    j.popt = (earl_search_prepare_options){name, threads, fn, &bridge};
    j.xopt = (earl_search_options){limit, fn, &bridge, 0, 0, threads, teams, !pruning,
                                   job_interrupted, &j};
    atomic_init(&j.stop, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.finished, NULL);
    /* the states object (and through it the trace) outlives the call: the
     * arguments hold a reference */
    int interrupted = job_run_interruptible(&j);
    pthread_cond_destroy(&j.finished);
    pthread_mutex_destroy(&j.lock);
    PyObject *d = NULL;
    if (interrupted) {
        /* the exception of the signal is set */
    } else if (j.rc != EARL_OK) {
        earlc_raise(&j.err);
    } else {
        /* which takes the result over */
        d = earlc_search_result_dict(j.query, j.result, j.prepare_seconds);
        j.result = NULL;
    }
    earl_search_result_free(j.result);
    earl_search_query_free(j.query);
    return d;
}

earl_search_program *earlc_program_of(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &ProgramType)) {
        PyErr_SetString(PyExc_TypeError, "a _core.SearchProgram is needed");
        return NULL;
    }
    return ((ProgramObject *)obj)->program;
}

PyObject *earlc_search_execute(earl_search_query *q, const earl_search_options *options)
{
    search_job j;
    memset(&j, 0, sizeof j);
    j.query = q;
    j.xopt = *options;
    j.xopt.interrupt = job_interrupted;
    j.xopt.interrupt_data = &j;
    atomic_init(&j.stop, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.finished, NULL);
    int interrupted = job_run_interruptible(&j);
    pthread_cond_destroy(&j.finished);
    pthread_mutex_destroy(&j.lock);
    PyObject *d = NULL;
    if (interrupted) {
        /* the exception of the signal is set */
    } else if (j.rc != EARL_OK) {
        earlc_raise(&j.err);
    } else {
        d = earlc_search_result_dict(q, j.result, 0.0); /* which takes the result over */
        j.result = NULL;
    }
    earl_search_result_free(j.result);
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
