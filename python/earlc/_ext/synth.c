/*
 * synth.c - glue of the workload generator: _core.synth(kind, out_dir,
 * options, progress=None) converts a dict of options into
 * earl_synth_options, runs earl_synth_run with the GIL released (taken back
 * only for the progress callback) and returns the result as a dict.
 */
#include "ext.h"

#include "earl_synth.h"

typedef struct progress_ctx {
    PyObject *callable;
    PyThreadState *saved;
    int failed;
} progress_ctx;

static int call_progress(void *data, uint64_t done, uint64_t total)
{
    progress_ctx *ctx = data;
    PyEval_RestoreThread(ctx->saved);
    int stop = 0;
    PyObject *r = PyObject_CallFunction(ctx->callable, "sKK", "synth", (unsigned long long)done,
                                        (unsigned long long)total);
    if (!r || PyErr_CheckSignals() < 0) {
        ctx->failed = 1;
        stop = 1;
    }
    Py_XDECREF(r);
    ctx->saved = PyEval_SaveThread();
    return stop;
}

typedef struct field {
    const char *name;
    size_t offset;
    char type; /* 'u' uint32, 'U' uint64, 'i' int32, 'I' int64 */
} field;

#define F(name, type) { #name, offsetof(earl_synth_options, name), type }
static const field fields[] = {
    F(ranks, 'u'),       F(threads, 'u'),      F(iterations, 'U'), F(events, 'U'),
    F(seed, 'U'),        F(compute, 'I'),      F(imbalance, 'u'),  F(latency, 'I'),
    F(bytes, 'U'),       F(eager_limit, 'U'),  F(delay, 'I'),      F(delay_rank, 'i'),
    F(delay_thread, 'i'), F(delay_every, 'u'), F(root, 'i'),       F(sub_root, 'i'),
    F(split, 'u'),       F(px, 'u'),           F(py, 'u'),         F(hold, 'I'),
    F(lock_rounds, 'u'), F(wrong_order, 'i'),  F(any_source, 'i'), F(resolution, 'U'),
    F(memory_limit, 'U'), F(overwrite, 'i'),
};
#undef F

static int set_field(earl_synth_options *o, const field *f, PyObject *value)
{
    char *p = (char *)o + f->offset;
    if (PyBool_Check(value) || PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred())
            return -1;
        int negative_ok = f->type == 'i' || f->type == 'I';
        if (v < 0 && !negative_ok) {
            PyErr_Format(earlc_TraceError, "synth: %s must not be negative (got %lld)", f->name, v);
            return -1;
        }
        if ((f->type == 'u' && v > (long long)UINT32_MAX) ||
            (f->type == 'i' && (v > INT32_MAX || v < INT32_MIN))) {
            PyErr_Format(earlc_TraceError, "synth: %s is out of range (got %lld)", f->name, v);
            return -1;
        }
        switch (f->type) {
        case 'u': *(uint32_t *)p = (uint32_t)v; break;
        case 'U': *(uint64_t *)p = (uint64_t)v; break;
        case 'i': *(int32_t *)p = (int32_t)v; break;
        default: *(int64_t *)p = (int64_t)v; break;
        }
        return 0;
    }
    PyErr_Format(earlc_TraceError, "synth: %s must be an integer, not %s", f->name,
                 Py_TYPE(value)->tp_name);
    return -1;
}

static PyObject *synth(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = { "kind", "out_dir", "options", "progress", NULL };
    const char *kind_name;
    PyObject *dir_obj, *options = NULL, *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|O!O", kwlist, &kind_name, &dir_obj,
                                     &PyDict_Type, &options, &progress))
        return NULL;
    int kind = earl_synth_kind_from_name(kind_name);
    if (kind < 0) {
        PyErr_Format(earlc_TraceError,
                     "synth: unknown kind '%s' (kinds: ping-pong, ring, halo, master-worker, "
                     "collectives, omp, hybrid)", kind_name);
        return NULL;
    }
    earl_synth_options o;
    earl_synth_defaults((earl_synth_kind)kind, &o);
    if (options) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(options, &pos, &key, &value)) {
            const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            if (!name) {
                PyErr_SetString(earlc_TraceError, "synth: option names must be strings");
                return NULL;
            }
            if (value == Py_None)
                continue;
            size_t i = 0, n = sizeof(fields) / sizeof(*fields);
            for (; i < n && strcmp(fields[i].name, name); i++)
                ;
            if (i == n) {
                PyErr_Format(earlc_TraceError, "synth: unknown option '%s'", name);
                return NULL;
            }
            if (set_field(&o, &fields[i], value) < 0)
                return NULL;
        }
    }
    PyObject *dir_bytes = NULL;
    if (!PyUnicode_FSConverter(dir_obj, &dir_bytes))
        return NULL;
    progress_ctx ctx = { .callable = progress, .saved = NULL, .failed = 0 };
    if (progress != Py_None) {
        o.progress = call_progress;
        o.progress_data = &ctx;
    }
    earl_synth_result res;
    earl_error err = { 0 };
    earl_status st;
    ctx.saved = PyEval_SaveThread();
    st = earl_synth_run(&o, PyBytes_AS_STRING(dir_bytes), &res, &err);
    PyEval_RestoreThread(ctx.saved);
    Py_DECREF(dir_bytes);
    if (ctx.failed) {
        if (!PyErr_Occurred())
            PyErr_SetString(earlc_TraceError, "synth: interrupted");
        return NULL;
    }
    if (st != EARL_OK)
        return earlc_raise(&err);
    PyObject *kinds = PyDict_New();
    if (!kinds)
        return NULL;
    for (int k = 0; k < EARL_KIND_COUNT; k++) {
        if (!res.kind_counts[k])
            continue;
        PyObject *v = PyLong_FromUnsignedLongLong(res.kind_counts[k]);
        if (!v || PyDict_SetItemString(kinds, earl_kind_name((earl_kind)k), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(kinds);
            return NULL;
        }
        Py_DECREF(v);
    }
    return Py_BuildValue("{s:K,s:K,s:K,s:d,s:N}", "events", (unsigned long long)res.events,
                         "iterations", (unsigned long long)res.iterations, "duration",
                         (unsigned long long)res.duration, "seconds", res.seconds, "by_kind",
                         kinds);
}

static PyMethodDef synth_methods[] = {
    {"synth", (PyCFunction)(void (*)(void))synth, METH_VARARGS | METH_KEYWORDS,
     "synth(kind, out_dir, options=None, progress=None) -> dict\n\n"
     "Simulate a program of the given kind and write its trace and expected.json."},
    {NULL, NULL, 0, NULL},
};

int earlc_add_synth(PyObject *module)
{
    PyObject *kinds = PyTuple_New(EARL_SYNTH_KIND_COUNT);
    if (!kinds)
        return -1;
    for (int k = 0; k < EARL_SYNTH_KIND_COUNT; k++)
        PyTuple_SET_ITEM(kinds, k, PyUnicode_FromString(earl_synth_kind_name((earl_synth_kind)k)));
    if (PyModule_AddObject(module, "SYNTH_KINDS", kinds) < 0) {
        Py_DECREF(kinds);
        return -1;
    }
    return PyModule_AddFunctions(module, synth_methods);
}
