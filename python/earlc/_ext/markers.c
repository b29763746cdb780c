/*
 * markers.c - _core.read_markers and _core.update_markers: the Python face
 * of earl_markers (csrc/markers), the marker file of an OTF2 archive.
 * Definitions and markers cross as lists of tuples (markers are few next to
 * events); the file work runs with the GIL released.
 *
 *   read_markers(anchor) -> (defs, markers)
 *       defs    [(group, category, severity)]
 *       markers [(time, duration, def index or -1, scope, scope_ref, text)]
 *   update_markers(anchor, drop, defs, markers) -> markers kept
 */
#include <stdlib.h>

#include "ext.h"
#include "earl_markers.h"

static PyObject *read_markers(PyObject *self, PyObject *args)
{
    (void)self;
    const char *anchor;
    if (!PyArg_ParseTuple(args, "s", &anchor))
        return NULL;
    earl_markers *m = NULL;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_markers_read(anchor, &m, &err);
    Py_END_ALLOW_THREADS
    if (rc != EARL_OK)
        return earlc_raise(&err);
    const earl_marker_set *set = earl_markers_get(m);
    PyObject *defs = PyList_New((Py_ssize_t)set->n_defs);
    PyObject *markers = defs ? PyList_New((Py_ssize_t)set->n_markers) : NULL;
    for (size_t k = 0; markers && k < set->n_defs; k++) {
        const earl_marker_def *d = &set->defs[k];
        PyObject *t = Py_BuildValue("(ssi)", d->group, d->category, (int)d->severity);
        if (!t)
            goto fail;
        PyList_SET_ITEM(defs, (Py_ssize_t)k, t);
    }
    for (size_t k = 0; markers && k < set->n_markers; k++) {
        const earl_marker *mk = &set->markers[k];
        PyObject *t = Py_BuildValue("(KKliKs)", (unsigned long long)mk->time,
                                    (unsigned long long)mk->duration,
                                    mk->def == UINT32_MAX ? -1L : (long)mk->def, (int)mk->scope,
                                    (unsigned long long)mk->scope_ref, mk->text);
        if (!t)
            goto fail;
        PyList_SET_ITEM(markers, (Py_ssize_t)k, t);
    }
    if (!markers)
        goto fail;
    earl_markers_free(m);
    return Py_BuildValue("(NN)", defs, markers);
fail:
    Py_XDECREF(defs);
    Py_XDECREF(markers);
    earl_markers_free(m);
    return NULL;
}

/* The strings of a tuple's items stay valid while the lists hold them: the
 * C arrays borrow them until the call returns. */
static PyObject *update_markers(PyObject *self, PyObject *args)
{
    (void)self;
    const char *anchor;
    PyObject *drop_list, *def_list, *marker_list;
    if (!PyArg_ParseTuple(args, "sO!O!O!", &anchor, &PyList_Type, &drop_list, &PyList_Type,
                          &def_list, &PyList_Type, &marker_list))
        return NULL;
    size_t n_drop = (size_t)PyList_GET_SIZE(drop_list);
    size_t n_defs = (size_t)PyList_GET_SIZE(def_list);
    size_t n_markers = (size_t)PyList_GET_SIZE(marker_list);
    const char **drop = malloc((n_drop + 1) * sizeof *drop);
    earl_marker_def *defs = malloc((n_defs + 1) * sizeof *defs);
    earl_marker *markers = malloc((n_markers + 1) * sizeof *markers);
    PyObject *result = NULL;
    if (!drop || !defs || !markers) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0; k < n_drop; k++)
        if (!(drop[k] = PyUnicode_AsUTF8(PyList_GET_ITEM(drop_list, (Py_ssize_t)k))))
            goto done;
    for (size_t k = 0; k < n_defs; k++) {
        int severity;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(def_list, (Py_ssize_t)k), "ssi", &defs[k].group,
                              &defs[k].category, &severity))
            goto done;
        defs[k].severity = (uint8_t)severity;
    }
    for (size_t k = 0; k < n_markers; k++) {
        unsigned long long time, duration, scope_ref;
        unsigned int def;
        int scope;
        earl_marker *mk = &markers[k];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(marker_list, (Py_ssize_t)k), "KKIiKs", &time,
                              &duration, &def, &scope, &scope_ref, &mk->text))
            goto done;
        mk->time = time;
        mk->duration = duration;
        mk->def = def;
        mk->scope = (uint8_t)scope;
        mk->scope_ref = scope_ref;
    }
    earl_marker_set add = {n_defs, defs, n_markers, markers};
    size_t kept = 0;
    earl_error err;
    earl_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = earl_markers_update(anchor, drop, n_drop, &add, &kept, &err);
    Py_END_ALLOW_THREADS
    result = rc == EARL_OK ? PyLong_FromSize_t(kept) : earlc_raise(&err);
done:
    free(drop);
    free(defs);
    free(markers);
    return result;
}

static PyMethodDef marker_functions[] = {
    {"read_markers", read_markers, METH_VARARGS,
     "read_markers(anchor) -> (defs, markers): the archive's marker file"},
    {"update_markers", update_markers, METH_VARARGS,
     "update_markers(anchor, drop, defs, markers) -> kept: rewrite the marker file without "
     "the groups in drop, with defs and markers added"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_markers(PyObject *module)
{
    return PyModule_AddFunctions(module, marker_functions);
}
