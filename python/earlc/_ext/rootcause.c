/*
 * rootcause.c - _core.rc_*: the Python face of the root-cause subsystem
 * (csrc/rootcause/earl_rootcause.h).
 *
 * The functions take C-contiguous int64 and float64 arrays (numpy arrays,
 * through the buffer protocol), run the C work with the GIL released and
 * return their results as tuples of bytes for properties/rootcause/ to view
 * with numpy.  A call-path map travels as a tuple (offset, cnode, value).
 */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

#include "earl_rootcause.h"

/* Arguments held as buffers until the call returns. */
#define RC_MAX_BUFFERS 24
typedef struct rc_args {
    Py_buffer buf[RC_MAX_BUFFERS];
    int n;
} rc_args;

static void rc_args_release(rc_args *a)
{
    for (int i = 0; i < a->n; i++)
        PyBuffer_Release(&a->buf[i]);
    a->n = 0;
}

/* The items of obj, a contiguous array of 8-byte items of kind 'i' (int64)
 * or 'f' (float64); *count gets their number, or must equal it when it is
 * not (size_t)-1.  NULL with ValueError naming the argument otherwise. */
static const void *rc_array(rc_args *a, PyObject *obj, char kind, size_t *count,
                            const char *name)
{
    Py_buffer *b = &a->buf[a->n];
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    a->n++;
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    int ok = b->itemsize == 8 &&
             (kind == 'i' ? (*f == 'q' || *f == 'l') : *f == 'd') && f[1] == '\0';
    size_t n = (size_t)b->len / 8;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous %s array", name,
                     kind == 'i' ? "int64" : "float64");
        return NULL;
    }
    if (*count != (size_t)-1 && n != *count) {
        PyErr_Format(PyExc_ValueError, "%s holds %zu values, %zu expected", name, n, *count);
        return NULL;
    }
    *count = n;
    return b->buf;
}

static PyObject *rc_raise(const earl_error *err)
{
    return earlc_raise(err);
}

static PyObject *bytes_of(const void *data, size_t n, size_t item)
{
    return PyBytes_FromStringAndSize(n ? (const char *)data : "", (Py_ssize_t)(n * item));
}

/* (offset, cnode, value) bytes of a map. */
static PyObject *map_tuple(const earl_rc_map *m)
{
    size_t entries = m->offset ? (size_t)m->offset[m->queries] : 0;
    return Py_BuildValue("(NNN)", bytes_of(m->offset, m->queries + 1, sizeof(int64_t)),
                         bytes_of(m->cnode, entries, sizeof(int64_t)),
                         bytes_of(m->value, entries, sizeof(double)));
}

/* A map from a tuple (offset, cnode, value); the arrays stay in a. */
static int map_arg(rc_args *a, PyObject *obj, earl_rc_map *m, const char *name)
{
    PyObject *off, *cn, *val;
    if (!PyArg_ParseTuple(obj, "OOO", &off, &cn, &val)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple (offset, cnode, value)", name);
        return -1;
    }
    size_t n_off = (size_t)-1, n = (size_t)-1;
    m->offset = (int64_t *)rc_array(a, off, 'i', &n_off, name);
    if (!m->offset)
        return -1;
    if (n_off < 1) {
        PyErr_Format(PyExc_ValueError, "%s: offsets must hold queries + 1 values", name);
        return -1;
    }
    m->queries = n_off - 1;
    if (!(m->cnode = (int64_t *)rc_array(a, cn, 'i', &n, name)) ||
        !(m->value = (double *)rc_array(a, val, 'f', &n, name)))
        return -1;
    for (size_t q = 0; q < m->queries; q++)
        if (m->offset[q] < 0 || m->offset[q] > m->offset[q + 1] || (size_t)m->offset[q + 1] > n) {
            PyErr_Format(PyExc_ValueError, "%s: offsets are not ascending within its entries",
                         name);
            return -1;
        }
    return 0;
}

/* The chunk columns (key, cnode, ticks) into c. */
static int chunks_arg(rc_args *a, PyObject *key, PyObject *cnode, PyObject *ticks,
                      earl_rc_chunks *c)
{
    size_t n = (size_t)-1;
    c->key = rc_array(a, key, 'i', &n, "chunk_key");
    c->cnode = c->key ? rc_array(a, cnode, 'i', &n, "chunk_cnode") : NULL;
    c->ticks = c->cnode ? rc_array(a, ticks, 'i', &n, "chunk_ticks") : NULL;
    c->count = n;
    return c->ticks ? 0 : -1;
}

/* rc_chunk_sums(chunk_key, chunk_cnode, chunk_ticks, stride, n_cnodes, loc, lo, hi)
 * -> map tuple */
static PyObject *py_chunk_sums(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ck, *cc, *ct, *lo_o, *hi_o, *loc_o;
    long long stride, n_cnodes;
    if (!PyArg_ParseTuple(args, "OOOLLOOO", &ck, &cc, &ct, &stride, &n_cnodes, &loc_o, &lo_o,
                          &hi_o))
        return NULL;
    rc_args a = {.n = 0};
    earl_rc_chunks chunks;
    size_t nq = (size_t)-1;
    const int64_t *loc, *lo, *hi;
    PyObject *r = NULL;
    if (chunks_arg(&a, ck, cc, ct, &chunks) < 0 || !(loc = rc_array(&a, loc_o, 'i', &nq, "loc")) ||
        !(lo = rc_array(&a, lo_o, 'i', &nq, "lo")) || !(hi = rc_array(&a, hi_o, 'i', &nq, "hi")))
        goto done;
    earl_rc_map out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_chunk_sums(&chunks, stride, n_cnodes, loc, lo, hi, nq, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        rc_raise(&err);
        goto done;
    }
    r = map_tuple(&out);
    earl_rc_map_free(&out);
done:
    rc_args_release(&a);
    return r;
}

/* rc_interval_times(chunk_key, chunk_cnode, chunk_ticks, point_key, point_row,
 * point_cnode, point_wait, point_cut, stride, n_cnodes, loc, prev, at)
 * -> (map tuple, wait_sum, between_offset, between_row) */
static PyObject *py_interval_times(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ck, *cc, *ct, *pk, *pr, *pc, *pw, *pcut, *loc_o, *prev_o, *at_o;
    long long stride, n_cnodes;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLLOOO", &ck, &cc, &ct, &pk, &pr, &pc, &pw, &pcut,
                          &stride, &n_cnodes, &loc_o, &prev_o, &at_o))
        return NULL;
    rc_args a = {.n = 0};
    earl_rc_chunks chunks;
    earl_rc_points points;
    size_t np_ = (size_t)-1, nq = (size_t)-1;
    const int64_t *loc, *prev, *at;
    PyObject *r = NULL;
    if (chunks_arg(&a, ck, cc, ct, &chunks) < 0 ||
        !(points.key = rc_array(&a, pk, 'i', &np_, "point_key")) ||
        !(points.row = rc_array(&a, pr, 'i', &np_, "point_row")) ||
        !(points.cnode = rc_array(&a, pc, 'i', &np_, "point_cnode")) ||
        !(points.wait = rc_array(&a, pw, 'f', &np_, "point_wait")) ||
        !(points.cut = rc_array(&a, pcut, 'f', &np_, "point_cut")) ||
        !(loc = rc_array(&a, loc_o, 'i', &nq, "loc")) ||
        !(prev = rc_array(&a, prev_o, 'i', &nq, "prev")) ||
        !(at = rc_array(&a, at_o, 'i', &nq, "at")))
        goto done;
    points.count = np_;
    earl_rc_intervals out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_interval_times(&chunks, &points, stride, n_cnodes, loc, prev, at, nq, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        rc_raise(&err);
        goto done;
    }
    size_t nb = (size_t)out.between_offset[nq];
    r = Py_BuildValue("(NNNN)", map_tuple(&out.time), bytes_of(out.wait_sum, nq, sizeof(double)),
                      bytes_of(out.between_offset, nq + 1, sizeof(int64_t)),
                      bytes_of(out.between_row, nb, sizeof(int64_t)));
    earl_rc_intervals_free(&out);
done:
    rc_args_release(&a);
    return r;
}

/* rc_excess(late, late_q, early, early_q, within, within_q) -> (map tuple, sum);
 * within and within_q may be None. */
static PyObject *py_excess(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *late_o, *lq_o, *early_o, *eq_o, *within_o, *wq_o;
    if (!PyArg_ParseTuple(args, "OOOOOO", &late_o, &lq_o, &early_o, &eq_o, &within_o, &wq_o))
        return NULL;
    rc_args a = {.n = 0};
    earl_rc_map late, early, within;
    size_t n = (size_t)-1;
    const int64_t *lq, *eq, *wq = NULL;
    PyObject *r = NULL;
    double *sum = NULL;
    if (map_arg(&a, late_o, &late, "late") < 0 || map_arg(&a, early_o, &early, "early") < 0 ||
        !(lq = rc_array(&a, lq_o, 'i', &n, "late_q")) ||
        !(eq = rc_array(&a, eq_o, 'i', &n, "early_q")))
        goto done;
    if (within_o != Py_None &&
        (map_arg(&a, within_o, &within, "within") < 0 ||
         !(wq = rc_array(&a, wq_o, 'i', &n, "within_q"))))
        goto done;
    sum = malloc((n ? n : 1) * sizeof *sum);
    if (!sum) {
        PyErr_NoMemory();
        goto done;
    }
    earl_rc_map out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_excess(&late, lq, &early, eq, wq ? &within : NULL, wq, n, &out, sum, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        rc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(NN)", map_tuple(&out), bytes_of(sum, n, sizeof(double)));
    earl_rc_map_free(&out);
done:
    free(sum);
    rc_args_release(&a);
    return r;
}

static PyMethodDef rootcause_functions[] = {
    {"rc_chunk_sums", py_chunk_sums, METH_VARARGS,
     "rc_chunk_sums(chunk_key, chunk_cnode, chunk_ticks, stride, n_cnodes, loc, lo, hi): raw "
     "time per call path between two events of a location, per query."},
    {"rc_interval_times", py_interval_times, METH_VARARGS,
     "rc_interval_times(chunk_key, chunk_cnode, chunk_ticks, point_key, point_row, point_cnode, "
     "point_wait, point_cut, stride, n_cnodes, loc, prev, at): synchronisation intervals."},
    {"rc_excess", py_excess, METH_VARARGS,
     "rc_excess(late, late_q, early, early_q, within, within_q): positive excess per call path "
     "of one map's queries over another's."},
    {NULL, NULL, 0, NULL},
};

int earlc_add_rootcause(PyObject *module)
{
    return PyModule_AddFunctions(module, rootcause_functions);
}
