/*
 * module.c - the earlc._core extension module: earlc's exceptions (Error,
 * the base of every error earlc raises, and the two the C core raises:
 * TraceError and OutOfMemoryError), the vocabulary of the C core (kind,
 * family and warning names), and the registration of the glue types (Trace,
 * Column, TraceWriter).
 */
#include "earl_mem.h"
#include "ext.h"
#include <otf2/OTF2_GeneralDefinitions.h>

PyObject *earlc_Error;
PyObject *earlc_TraceError;
PyObject *earlc_OutOfMemoryError;

PyObject *earlc_open(PyObject *module, PyObject *args, PyObject *kwargs); /* trace.c */

PyObject *earlc_raise(const earl_error *err)
{
    /* the message is the only argument, so str(exc) is the message; the
     * category travels as attributes (status: its name, code: its number).
     * Out of memory is no fault of the trace: a MemoryError of its own. */
    PyObject *type = err->code == EARL_ERR_NOMEM ? earlc_OutOfMemoryError : earlc_TraceError;
    PyObject *exc = PyObject_CallFunction(type, "s", err->message);
    if (exc) {
        PyObject *status = PyUnicode_FromString(earl_status_name(err->code));
        PyObject *code = PyLong_FromLong((long)err->code);
        if (status)
            PyObject_SetAttrString(exc, "status", status);
        if (code)
            PyObject_SetAttrString(exc, "code", code);
        Py_XDECREF(status);
        Py_XDECREF(code);
        PyErr_SetObject(type, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* Error, TraceError(Error) and OutOfMemoryError(Error, MemoryError), added
 * to the module. */
static int add_exceptions(PyObject *m)
{
    earlc_Error = PyErr_NewExceptionWithDoc(
        "earlc.Error",
        "The base of every error earlc raises: a trace that cannot be read or written, a "
        "pattern, a plugin or a command line that is wrong, a recording that failed, memory "
        "that ran out (docs/python.md, \"Errors\").",
        PyExc_Exception, NULL);
    if (!earlc_Error)
        return -1;
    earlc_TraceError = PyErr_NewExceptionWithDoc(
        "earlc.TraceError",
        "A trace cannot be read or written: the message names the file and the problem.",
        earlc_Error, NULL);
    PyObject *bases = earlc_TraceError ? PyTuple_Pack(2, earlc_Error, PyExc_MemoryError) : NULL;
    earlc_OutOfMemoryError = bases ? PyErr_NewExceptionWithDoc(
        "earlc.OutOfMemoryError",
        "The C core ran out of memory (a MemoryError, never a fault of the trace): the "
        "message says what it was doing.",
        bases, NULL) : NULL;
    Py_XDECREF(bases);
    if (!earlc_OutOfMemoryError)
        return -1;
    PyObject *const types[] = {earlc_Error, earlc_TraceError, earlc_OutOfMemoryError};
    const char *const names[] = {"Error", "TraceError", "OutOfMemoryError"};
    for (int k = 0; k < 3; k++) {
        Py_INCREF(types[k]); /* one reference stays with the C globals */
        if (PyModule_AddObject(m, names[k], types[k]) < 0) {
            Py_DECREF(types[k]);
            return -1;
        }
    }
    return 0;
}

/* release_memory(): earl_mem_release; returns the bytes that were kept. */
static PyObject *release_memory(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    size_t kept = earl_mem_get_stats().kept_bytes;
    earl_mem_release();
    return PyLong_FromSize_t(kept);
}

/* memory_stats() -> dict of earl_mem_get_stats. */
static PyObject *memory_stats(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    earl_mem_stats s = earl_mem_get_stats();
    return Py_BuildValue("{s:K,s:K,s:n,s:n,s:K}", "mapped", (unsigned long long)s.mapped,
                         "reused", (unsigned long long)s.reused,
                         "kept_blocks", (Py_ssize_t)s.kept_blocks,
                         "kept_bytes", (Py_ssize_t)s.kept_bytes,
                         "moved_bytes", (unsigned long long)s.moved_bytes);
}

static PyMethodDef module_methods[] = {
    {"open", (PyCFunction)(void (*)(void))earlc_open, METH_VARARGS | METH_KEYWORDS,
     "open(path, threads=0, progress=None) -> Trace"},
    {"release_memory", release_memory, METH_NOARGS,
     "release_memory() -> bytes: give the memory kept for the next trace back now"},
    {"memory_stats", memory_stats, METH_NOARGS,
     "memory_stats() -> dict: large blocks mapped, reused and kept, bytes moved"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "earlc._core",
    "C core of earlc: the OTF2 trace model (see the earlc package).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static int add_names(PyObject *m)
{
    PyObject *kinds = PyTuple_New(EARL_KIND_COUNT), *families = PyTuple_New(EARL_KIND_COUNT);
    PyObject *warnings = PyTuple_New(EARL_WARNING_CODE_COUNT);
    if (!kinds || !families || !warnings)
        goto fail;
    for (int k = 0; k < EARL_KIND_COUNT; k++) {
        PyTuple_SET_ITEM(kinds, k, PyUnicode_FromString(earl_kind_name((earl_kind)k)));
        PyTuple_SET_ITEM(families, k, PyLong_FromLong(earl_kind_family((earl_kind)k)));
    }
    for (int c = 0; c < EARL_WARNING_CODE_COUNT; c++)
        PyTuple_SET_ITEM(warnings, c,
                         PyUnicode_FromString(earl_warning_code_name((earl_warning_code)c)));
    if (PyModule_AddObject(m, "KIND_NAMES", kinds) < 0)
        goto fail;
    kinds = NULL;
    if (PyModule_AddObject(m, "KIND_FAMILIES", families) < 0)
        goto fail;
    families = NULL;
    if (PyModule_AddObject(m, "WARNING_NAMES", warnings) < 0)
        goto fail;
    /* the libotf2 earlc was built against (earlc --version) */
    if (PyModule_AddStringConstant(m, "OTF2_VERSION", OTF2_VERSION) < 0)
        return -1;
    return 0;
fail:
    Py_XDECREF(kinds);
    Py_XDECREF(families);
    Py_XDECREF(warnings);
    return -1;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&core_module);
    if (!m)
        return NULL;
    /* before the analysis's threads exist: they share one malloc heap */
    earl_mem_one_heap();
    if (add_exceptions(m) < 0)
        goto fail;
    if (add_names(m) < 0 || earlc_add_column_type(m) < 0 || earlc_add_trace_type(m) < 0 ||
        earlc_add_writer_type(m) < 0 || earlc_add_states_type(m) < 0 ||
        earlc_add_calltree_type(m) < 0 || earlc_add_hb_type(m) < 0 ||
        earlc_add_races_type(m) < 0)
        goto fail;
    if (earlc_add_numpy_memory(m) < 0)
        goto fail;
    if (earlc_add_synth(m) < 0)
        goto fail;
    if (earlc_add_profile(m) < 0)
        goto fail;
    if (earlc_add_overview(m) < 0)
        goto fail;
    if (earlc_add_search(m) < 0 || earlc_add_search_query_type(m) < 0)
        goto fail;
    if (earlc_add_reading_type(m) < 0 || earlc_add_part_clocks_type(m) < 0 ||
        earlc_add_part_races_type(m) < 0)
        goto fail;
    if (earlc_add_rootcause(m) < 0)
        goto fail;
    if (earlc_add_catalog(m) < 0)
        goto fail;
    if (earlc_add_logical_type(m) < 0)
        goto fail;
    if (earlc_add_markers(m) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
