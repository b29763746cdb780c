/*
 * rootcause.c - _core.rc_*: the Python face of the root-cause subsystem
 * (csrc/rootcause/earl_rootcause.h).
 *
 * The functions take C-contiguous int64 and float64 arrays (numpy arrays,
 * through the buffer protocol), run the C work with the GIL released and
 * return their results as buffers for properties/rootcause/ to view with
 * numpy: the large ones (time chunks, call-path maps) as _core.Column over
 * the C result itself, kept alive by a capsule that frees it; small ones as
 * bytes.  A call-path map travels as a tuple (offset, cnode, value).
 */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

#include "earl_rootcause.h"

/* The items of obj, a contiguous array of the struct-module format `format`:
 * earlc_buffer_array, read-only. */
static const void *rc_typed_array(earlc_buffers *a, PyObject *obj, char format, size_t *count,
                                  const char *name)
{
    return earlc_buffer_array(a, obj, format, 0, count, name);
}

/* int64 ('i') or float64 ('f') arrays, the common case. */
static const void *rc_array(earlc_buffers *a, PyObject *obj, char kind, size_t *count,
                            const char *name)
{
    return rc_typed_array(a, obj, kind == 'i' ? 'q' : 'd', count, name);
}

static PyObject *bytes_of(const void *data, size_t n, size_t item)
{
    return PyBytes_FromStringAndSize(n ? (const char *)data : "", (Py_ssize_t)(n * item));
}

/* ---- results handed over without a copy ------------------------------------ */

typedef void (*result_free_fn)(void *result);

/* What a capsule owns: a C result and the function that frees it. */
typedef struct owned_result {
    void *result;
    result_free_fn free_result;
} owned_result;

static void result_capsule_free(PyObject *capsule)
{
    owned_result *o = PyCapsule_GetPointer(capsule, "earlc.rootcause.result");
    o->free_result(o->result);
    free(o);
}

/* A capsule owning result (heap-allocated; freed with f when the last column
 * over it goes); NULL, with result freed, on failure. */
static PyObject *result_owner(void *result, result_free_fn f)
{
    owned_result *o = malloc(sizeof *o);
    PyObject *c = o ? PyCapsule_New(o, "earlc.rootcause.result", result_capsule_free) : NULL;
    if (!c) {
        free(o);
        f(result);
        return o ? NULL : PyErr_NoMemory();
    }
    o->result = result;
    o->free_result = f;
    return c;
}

static PyObject *column_of(PyObject *owner, const void *data, size_t n, size_t item,
                           const char *format)
{
    static const int64_t empty = 0;
    return earlc_column_new(owner, n ? data : &empty, n, item, format);
}

static void map_result_free(void *p)
{
    earl_rc_map_free(p);
    free(p);
}

/* (offset, cnode, value) columns of a map, which they take over (*m is
 * emptied); NULL on failure (the map freed). */
static PyObject *map_tuple(earl_rc_map *m)
{
    earl_rc_map *own = malloc(sizeof *own);
    if (!own) {
        earl_rc_map_free(m);
        return PyErr_NoMemory();
    }
    *own = *m;
    memset(m, 0, sizeof *m);
    PyObject *owner = result_owner(own, map_result_free);
    if (!owner)
        return NULL;
    size_t entries = (size_t)own->offset[own->queries];
    PyObject *r = Py_BuildValue("(NNN)", column_of(owner, own->offset, own->queries + 1,
                                                   sizeof(int64_t), "q"),
                                column_of(owner, own->cnode, entries, sizeof(int64_t), "q"),
                                column_of(owner, own->value, entries, sizeof(double), "d"));
    Py_DECREF(owner);
    return r;
}

/* A map from a tuple (offset, cnode, value); the arrays stay in a. */
static int map_arg(earlc_buffers *a, PyObject *obj, earl_rc_map *m, const char *name)
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

/* The chunks of the events: rc_event_chunks' tuple (offset, slot, cnode,
 * ticks, far_chunk, far_ticks), or None for none. */
static int event_chunks_arg(earlc_buffers *a, PyObject *obj, earl_rc_event_chunks *ev)
{
    memset(ev, 0, sizeof *ev);
    if (obj == Py_None)
        return 0;
    PyObject *off_o, *slot_o, *cn_o, *ticks_o, *far_o, *far_ticks_o;
    if (!PyTuple_Check(obj) || !PyArg_ParseTuple(obj, "OOOOOO", &off_o, &slot_o, &cn_o,
                                                 &ticks_o, &far_o, &far_ticks_o)) {
        PyErr_SetString(PyExc_TypeError, "event chunks must be None or a tuple (offset, slot, "
                                         "cnode, ticks, far_chunk, far_ticks)");
        return -1;
    }
    size_t n_offsets = (size_t)-1, n_chunks = (size_t)-1, n_far = (size_t)-1;
    if (!(ev->offset = rc_typed_array(a, off_o, 'Q', &n_offsets, "chunk offset")) ||
        !(ev->slot = rc_typed_array(a, slot_o, 'I', &n_chunks, "chunk slot")) ||
        !(ev->cnode = rc_typed_array(a, cn_o, 'i', &n_chunks, "chunk cnode")) ||
        !(ev->ticks = rc_typed_array(a, ticks_o, 'i', &n_chunks, "chunk ticks")) ||
        !(ev->far_chunk = rc_typed_array(a, far_o, 'Q', &n_far, "far chunk")) ||
        !(ev->far_ticks = rc_typed_array(a, far_ticks_o, 'q', &n_far, "far chunk ticks")))
        return -1;
    ev->n_far = n_far;
    if (n_offsets < 1 || ev->offset[0] != 0 || ev->offset[n_offsets - 1] != n_chunks) {
        PyErr_SetString(PyExc_ValueError,
                        "the chunk offsets must hold locations + 1 values from 0 to the chunks");
        return -1;
    }
    ev->n_locations = n_offsets - 1;
    return 0;
}

/* The chunks: a tuple (event chunks, (key, cnode, ticks) of the table). */
static int chunks_arg(earlc_buffers *a, PyObject *obj, earl_rc_chunks *c)
{
    PyObject *events, *key, *cnode, *ticks;
    if (!PyTuple_Check(obj) || !PyArg_ParseTuple(obj, "O(OOO)", &events, &key, &cnode, &ticks)) {
        PyErr_SetString(PyExc_TypeError,
                        "chunks must be a tuple (event chunks or None, (key, cnode, ticks))");
        return -1;
    }
    if (event_chunks_arg(a, events, &c->events) < 0)
        return -1;
    size_t n = (size_t)-1;
    c->table.key = rc_array(a, key, 'i', &n, "chunk_key");
    c->table.cnode = c->table.key ? rc_array(a, cnode, 'i', &n, "chunk_cnode") : NULL;
    c->table.ticks = c->table.cnode ? rc_array(a, ticks, 'i', &n, "chunk_ticks") : NULL;
    c->table.count = n;
    return c->table.ticks ? 0 : -1;
}

/* rc_chunk_sums(chunks, stride, n_cnodes, loc, lo, hi) -> map tuple */
static PyObject *py_chunk_sums(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *chunks_o, *lo_o, *hi_o, *loc_o;
    long long stride, n_cnodes;
    if (!PyArg_ParseTuple(args, "OLLOOO", &chunks_o, &stride, &n_cnodes, &loc_o, &lo_o, &hi_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    earl_rc_chunks chunks;
    size_t nq = (size_t)-1;
    const int64_t *loc, *lo, *hi;
    PyObject *r = NULL;
    if (chunks_arg(&a, chunks_o, &chunks) < 0 ||
        !(loc = rc_array(&a, loc_o, 'i', &nq, "loc")) ||
        !(lo = rc_array(&a, lo_o, 'i', &nq, "lo")) || !(hi = rc_array(&a, hi_o, 'i', &nq, "hi")))
        goto done;
    earl_rc_map out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_chunk_sums(&chunks, stride, n_cnodes, loc, lo, hi, nq, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = map_tuple(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_interval_times(chunks, point_key, point_row, point_cnode, point_wait,
 * point_cut, stride, n_cnodes, loc, prev, at)
 * -> (map tuple, wait_sum, between_offset, between_row) */
static PyObject *py_interval_times(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *chunks_o, *pk, *pr, *pc, *pw, *pcut, *loc_o, *prev_o, *at_o;
    long long stride, n_cnodes;
    if (!PyArg_ParseTuple(args, "OOOOOOLLOOO", &chunks_o, &pk, &pr, &pc, &pw, &pcut, &stride,
                          &n_cnodes, &loc_o, &prev_o, &at_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    earl_rc_chunks chunks;
    earl_rc_points points;
    size_t np_ = (size_t)-1, nq = (size_t)-1;
    const int64_t *loc, *prev, *at;
    PyObject *r = NULL;
    if (chunks_arg(&a, chunks_o, &chunks) < 0 ||
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
        earlc_raise(&err);
        goto done;
    }
    size_t nb = (size_t)out.between_offset[nq];
    r = Py_BuildValue("(NNNN)", map_tuple(&out.time), bytes_of(out.wait_sum, nq, sizeof(double)),
                      bytes_of(out.between_offset, nq + 1, sizeof(int64_t)),
                      bytes_of(out.between_row, nb, sizeof(int64_t)));
    earl_rc_intervals_free(&out);
done:
    earlc_buffers_release(&a);
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
    earlc_buffers a = {.n = 0};
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
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(NN)", map_tuple(&out), bytes_of(sum, n, sizeof(double)));
done:
    free(sum);
    earlc_buffers_release(&a);
    return r;
}

static void event_chunks_free(void *p)
{
    earl_rc_event_chunk_table_free(p);
    free(p);
}

/* rc_event_chunks(n_locations, location, kind, time, event_cnode, parent, roles,
 * program_cnode) -> (offset, slot, cnode, ticks, far_chunk, far_ticks) */
static PyObject *py_event_chunks(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *loc_o, *kind_o, *time_o, *ec_o, *parent_o, *roles_o;
    Py_ssize_t n_locations;
    long long program;
    if (!PyArg_ParseTuple(args, "nOOOOOOL", &n_locations, &loc_o, &kind_o, &time_o, &ec_o,
                          &parent_o, &roles_o, &program))
        return NULL;
    if (n_locations < 0) {
        PyErr_SetString(PyExc_ValueError, "n_locations must not be negative");
        return NULL;
    }
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    size_t n_events = (size_t)-1, n_cnodes = (size_t)-1, n_roles = 256;
    const uint64_t *time;
    const int32_t *location, *event_cnode, *parent;
    const uint8_t *kind, *roles;
    if (!(location = rc_typed_array(&a, loc_o, 'i', &n_events, "location")) ||
        !(kind = rc_typed_array(&a, kind_o, 'B', &n_events, "kind")) ||
        !(time = rc_typed_array(&a, time_o, 'Q', &n_events, "time")) ||
        !(event_cnode = rc_typed_array(&a, ec_o, 'i', &n_events, "event_cnode")) ||
        !(parent = rc_typed_array(&a, parent_o, 'i', &n_cnodes, "parent")) ||
        !(roles = rc_typed_array(&a, roles_o, 'B', &n_roles, "roles")))
        goto done;
    earl_rc_event_chunk_table *table = malloc(sizeof *table);
    if (!table) {
        PyErr_NoMemory();
        goto done;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_event_chunks_build((size_t)n_locations, n_events, location, kind, time,
                                    event_cnode, parent, n_cnodes, roles, program, table, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        free(table);
        earlc_raise(&err);
        goto done;
    }
    PyObject *owner = result_owner(table, event_chunks_free);
    if (!owner)
        goto done;
    r = Py_BuildValue("(NNNNNN)",
                      column_of(owner, table->offset, table->n_locations + 1, sizeof(uint64_t),
                                "Q"),
                      column_of(owner, table->slot, table->count, sizeof(uint32_t), "I"),
                      column_of(owner, table->cnode, table->count, sizeof(int32_t), "i"),
                      column_of(owner, table->ticks, table->count, sizeof(int32_t), "i"),
                      column_of(owner, table->far_chunk, table->n_far, sizeof(uint64_t), "Q"),
                      column_of(owner, table->far_ticks, table->n_far, sizeof(int64_t), "q"));
    Py_DECREF(owner);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_previous_points(n_locations, pair_key, member_offset, member_location,
 * key_offset, group_key, stride, loc, partner, at) -> prev (int64 bytes) */
static PyObject *py_previous_points(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t n_locations;
    PyObject *pk_o, *mo_o, *ml_o, *ko_o, *gk_o, *loc_o, *partner_o, *at_o;
    long long stride;
    if (!PyArg_ParseTuple(args, "nOOOOOLOOO", &n_locations, &pk_o, &mo_o, &ml_o, &ko_o, &gk_o,
                          &stride, &loc_o, &partner_o, &at_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    int64_t *out = NULL;
    earl_rc_pair_points pp;
    size_t n_pairs = (size_t)-1, n_off = (size_t)-1, n_members = (size_t)-1, n_keys = (size_t)-1,
           nq = (size_t)-1;
    const int64_t *loc, *partner, *at;
    if (!(pp.pair_key = rc_array(&a, pk_o, 'i', &n_pairs, "pair_key")) ||
        !(pp.member_offset = rc_array(&a, mo_o, 'i', &n_off, "member_offset")) ||
        !(pp.member_location = rc_array(&a, ml_o, 'i', &n_members, "member_location")) ||
        !(pp.key_offset = rc_array(&a, ko_o, 'i', &n_off, "key_offset")) ||
        !(pp.group_key = rc_array(&a, gk_o, 'i', &n_keys, "group_key")) ||
        !(loc = rc_array(&a, loc_o, 'i', &nq, "loc")) ||
        !(partner = rc_array(&a, partner_o, 'i', &nq, "partner")) ||
        !(at = rc_array(&a, at_o, 'i', &nq, "at")))
        goto done;
    int ok = n_locations >= 0 && n_off >= 1 && pp.member_offset[0] == 0 && pp.key_offset[0] == 0;
    for (size_t g = 0; ok && g + 1 < n_off; g++)
        ok = pp.member_offset[g] <= pp.member_offset[g + 1] &&
             pp.key_offset[g] <= pp.key_offset[g + 1];
    if (!ok || (size_t)pp.member_offset[n_off - 1] > n_members ||
        (size_t)pp.key_offset[n_off - 1] > n_keys) {
        PyErr_SetString(PyExc_ValueError, "rc_previous_points: group offsets do not fit");
        goto done;
    }
    pp.n_locations = (size_t)n_locations;
    pp.n_pairs = n_pairs;
    pp.n_groups = n_off - 1;
    out = malloc((nq ? nq : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_previous_points(&pp, stride, nq, loc, partner, at, out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = bytes_of(out, nq, sizeof(int64_t));
done:
    free(out);
    earlc_buffers_release(&a);
    return r;
}

/* rc_group_starts(point_key, point_set, partner_key, partner_location,
 * set_offset, set_location, n_locations, stride, delayer_location,
 * delayer_event, member_set) -> (start, met_instance, met_location, met_event) */
static PyObject *py_group_starts(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pk, *ps, *ptk, *pl, *so, *sl, *dl_o, *de_o, *ms_o;
    long long n_locations, stride;
    if (!PyArg_ParseTuple(args, "OOOOOOLLOOO", &pk, &ps, &ptk, &pl, &so, &sl, &n_locations,
                          &stride, &dl_o, &de_o, &ms_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    earl_rc_meetings m;
    size_t np_ = (size_t)-1, n_partner = (size_t)-1, n_set_off = (size_t)-1,
           n_set_loc = (size_t)-1, ni = (size_t)-1;
    const int64_t *d_loc, *d_ev, *member_set;
    if (!(m.point_key = rc_array(&a, pk, 'i', &np_, "point_key")) ||
        !(m.point_set = rc_array(&a, ps, 'i', &np_, "point_set")) ||
        !(m.partner_key = rc_array(&a, ptk, 'i', &n_partner, "partner_key")) ||
        !(m.partner_location = rc_array(&a, pl, 'i', &n_partner, "partner_location")) ||
        !(m.set_offset = rc_array(&a, so, 'i', &n_set_off, "set_offset")) ||
        !(m.set_location = rc_array(&a, sl, 'i', &n_set_loc, "set_location")) ||
        !(d_loc = rc_array(&a, dl_o, 'i', &ni, "delayer_location")) ||
        !(d_ev = rc_array(&a, de_o, 'i', &ni, "delayer_event")) ||
        !(member_set = rc_array(&a, ms_o, 'i', &ni, "member_set")))
        goto done;
    if (n_set_off < 1 || n_locations < 0 || m.set_offset[0] != 0 ||
        (size_t)m.set_offset[n_set_off - 1] > n_set_loc) {
        PyErr_SetString(PyExc_ValueError, "rc_group_starts: set_offset does not fit set_location");
        goto done;
    }
    for (size_t k = 0; k + 1 < n_set_off; k++)
        if (m.set_offset[k] > m.set_offset[k + 1]) {
            PyErr_SetString(PyExc_ValueError, "rc_group_starts: set_offset is not ascending");
            goto done;
        }
    m.n_points = np_;
    m.n_partners = n_partner;
    m.n_sets = n_set_off - 1;
    m.n_locations = (size_t)n_locations;
    earl_rc_group_starts out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_find_group_starts(&m, stride, ni, d_loc, d_ev, member_set, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(NNNN)", bytes_of(out.start, ni, sizeof(int64_t)),
                      bytes_of(out.met_instance, out.n_met, sizeof(int64_t)),
                      bytes_of(out.met_location, out.n_met, sizeof(int64_t)),
                      bytes_of(out.met_event, out.n_met, sizeof(int64_t)));
    earl_rc_group_starts_free(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_critical_walk(location, init_event, wait_key, wait_partner, omp_key,
 * omp_next_offset, omp_next_event, stride, start_event) -> (location, from, to) */
static PyObject *py_critical_walk(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *loc_o, *init_o, *wk, *wp, *ok, *oo, *oe;
    long long stride, start;
    if (!PyArg_ParseTuple(args, "OOOOOOOLL", &loc_o, &init_o, &wk, &wp, &ok, &oo, &oe, &stride,
                          &start))
        return NULL;
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    earl_rc_path_graph g = {.stride = stride};
    size_t n_events = (size_t)-1, n_loc = (size_t)-1, n_waits = (size_t)-1, n_omp = (size_t)-1,
           n_off = (size_t)-1, n_next = (size_t)-1;
    if (!(g.location = rc_typed_array(&a, loc_o, 'i', &n_events, "location")) ||
        !(g.init_event = rc_array(&a, init_o, 'i', &n_loc, "init_event")) ||
        !(g.wait_key = rc_array(&a, wk, 'i', &n_waits, "wait_key")) ||
        !(g.wait_partner = rc_array(&a, wp, 'i', &n_waits, "wait_partner")) ||
        !(g.omp_key = rc_array(&a, ok, 'i', &n_omp, "omp_key")) ||
        !(g.omp_next_offset = rc_array(&a, oo, 'i', &n_off, "omp_next_offset")) ||
        !(g.omp_next_event = rc_array(&a, oe, 'i', &n_next, "omp_next_event")))
        goto done;
    if (n_off != n_omp + 1 || g.omp_next_offset[0] != 0 ||
        (size_t)g.omp_next_offset[n_omp] > n_next) {
        PyErr_SetString(PyExc_ValueError, "rc_critical_walk: omp_next_offset does not fit");
        goto done;
    }
    for (size_t i = 0; i < n_omp; i++)
        if (g.omp_next_offset[i] > g.omp_next_offset[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "rc_critical_walk: omp_next_offset not ascending");
            goto done;
        }
    g.n_events = n_events;
    g.n_locations = n_loc;
    g.n_waits = n_waits;
    g.n_omp = n_omp;
    earl_rc_stretches out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_critical_walk(&g, start, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(NNN)", bytes_of(out.location, out.count, sizeof(int64_t)),
                      bytes_of(out.from, out.count, sizeof(int64_t)),
                      bytes_of(out.to, out.count, sizeof(int64_t)));
    earl_rc_stretches_free(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* One batch of point-to-point wait states: (source, event, row,
 * delayer_location, scale, denominator, delays, between_offset, between_row).
 * The replay keeps pointers into the arrays: their buffers stay in `held`
 * until it is freed. */
static int add_wait_batch(earl_rc_replay *replay, PyObject *batch, earlc_buffers *held,
                          earl_error *err, int *c_failed)
{
    PyObject *ev_o, *row_o, *dl_o, *sc_o, *den_o, *delays_o, *bo_o, *br_o;
    Py_ssize_t source;
    if (!PyArg_ParseTuple(batch, "nOOOOOOOO", &source, &ev_o, &row_o, &dl_o, &sc_o, &den_o,
                          &delays_o, &bo_o, &br_o))
        return -1;
    size_t n = (size_t)-1, nb1 = (size_t)-1, nb = (size_t)-1;
    const int64_t *ev, *row, *dl, *bo, *br;
    const double *sc, *den;
    earl_rc_map delays;
    if (source < 0) {
        PyErr_SetString(PyExc_ValueError, "rc_long_term: a negative source");
        return -1;
    }
    if (!(ev = rc_array(held, ev_o, 'i', &n, "event")) ||
        !(row = rc_array(held, row_o, 'i', &n, "row")) ||
        !(dl = rc_array(held, dl_o, 'i', &n, "delayer_location")) ||
        !(sc = rc_array(held, sc_o, 'f', &n, "scale")) ||
        !(den = rc_array(held, den_o, 'f', &n, "denominator")) ||
        map_arg(held, delays_o, &delays, "delays") < 0 ||
        !(bo = rc_array(held, bo_o, 'i', &nb1, "between_offset")) ||
        !(br = rc_array(held, br_o, 'i', &nb, "between_row")))
        return -1;
    if (nb1 != n + 1 || bo[n] < 0 || (size_t)bo[n] > nb) {
        PyErr_SetString(PyExc_ValueError, "rc_long_term: between_offset does not fit");
        return -1;
    }
    if (earl_rc_replay_add_waits(replay, (size_t)source, n, ev, row, dl, sc, den, &delays, bo, br,
                                 err) != EARL_OK) {
        *c_failed = 1;
        return -1;
    }
    return 0;
}

/* The collective instances: (kind, delayer_location, member_offset,
 * between_offset, between_row, member_event, member_row, member_wait,
 * member_delay_sum, member_prop, member_met, member_delay_query, delays). */
static int add_collectives(earl_rc_replay *replay, PyObject *tuple, earlc_buffers *held,
                           earl_error *err, int *c_failed)
{
    PyObject *o[13];
    if (!PyArg_ParseTuple(tuple, "OOOOOOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12]))
        return -1;
    size_t n = (size_t)-1, n1 = (size_t)-1, nb = (size_t)-1, nm = (size_t)-1;
    earl_rc_map delays;
    earl_rc_collectives c;
    if (!(c.kind = rc_array(held, o[0], 'i', &n, "kind")) ||
        !(c.delayer_location = rc_array(held, o[1], 'i', &n, "delayer_location")) ||
        !(c.member_offset = rc_array(held, o[2], 'i', &n1, "member_offset")) ||
        !(c.between_offset = rc_array(held, o[3], 'i', &n1, "between_offset")) ||
        !(c.between_row = rc_array(held, o[4], 'i', &nb, "between_row")) ||
        !(c.member_event = rc_array(held, o[5], 'i', &nm, "member_event")) ||
        !(c.member_row = rc_array(held, o[6], 'i', &nm, "member_row")) ||
        !(c.member_wait = rc_array(held, o[7], 'f', &nm, "member_wait")) ||
        !(c.member_delay_sum = rc_array(held, o[8], 'f', &nm, "member_delay_sum")) ||
        !(c.member_prop = rc_array(held, o[9], 'f', &nm, "member_prop")) ||
        !(c.member_met = rc_array(held, o[10], 'i', &nm, "member_met")) ||
        !(c.member_delay_query = rc_array(held, o[11], 'i', &nm, "member_delay_query")) ||
        map_arg(held, o[12], &delays, "delays") < 0)
        return -1;
    if (n1 != n + 1 || c.between_offset[n] < 0 || (size_t)c.between_offset[n] > nb ||
        c.member_offset[n] < 0 || (size_t)c.member_offset[n] > nm) {
        PyErr_SetString(PyExc_ValueError, "rc_long_term: collective offsets do not fit");
        return -1;
    }
    c.n = n;
    c.n_members = nm;
    c.delays = &delays;
    if (earl_rc_replay_add_collectives(replay, &c, err) != EARL_OK) {
        *c_failed = 1;
        return -1;
    }
    return 0;
}

/* Known costs: (source, row, value); added (summed) at once. */
static int add_costs(earl_rc_replay *replay, PyObject *tuple, earl_error *err, int *c_failed)
{
    PyObject *row_o, *val_o;
    Py_ssize_t source;
    if (!PyArg_ParseTuple(tuple, "nOO", &source, &row_o, &val_o))
        return -1;
    earlc_buffers a = {.n = 0};
    size_t n = (size_t)-1;
    const int64_t *row;
    const double *val;
    int rc = -1;
    if (source < 0) {
        PyErr_SetString(PyExc_ValueError, "rc_long_term: a negative source");
        goto done;
    }
    if (!(row = rc_array(&a, row_o, 'i', &n, "row")) ||
        !(val = rc_array(&a, val_o, 'f', &n, "value")))
        goto done;
    if (earl_rc_replay_add_costs(replay, (size_t)source, n, row, val, err) != EARL_OK) {
        *c_failed = 1;
        goto done;
    }
    rc = 0;
done:
    earlc_buffers_release(&a);
    return rc;
}

/* rc_long_term(n_sources, point_event, point_wait, inputs, waits, collectives,
 * costs) -> [(location, cnode, value) per source]; inputs: n_sources**2 bytes
 * ([kind * n_sources + source]: EARL_RC_INPUT_* bits), waits, collectives and
 * costs lists of batches (taken in that order where the replay meets ties). */
static PyObject *py_long_term(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t n_sources;
    PyObject *pe_o, *pw_o, *waits, *colls, *costs;
    Py_buffer inputs;
    if (!PyArg_ParseTuple(args, "nOOy*O!O!O!", &n_sources, &pe_o, &pw_o, &inputs, &PyList_Type,
                          &waits, &PyList_Type, &colls, &PyList_Type, &costs))
        return NULL;
    /* the arrays the replay points into, held until it is freed: one set for
     * the points, one per batch */
    Py_ssize_t n_held = 1 + PyList_GET_SIZE(waits) + PyList_GET_SIZE(colls);
    earlc_buffers *held = calloc((size_t)n_held, sizeof *held);
    size_t np_ = (size_t)-1;
    const int64_t *pe;
    const double *pw;
    earl_rc_replay *replay = NULL;
    earl_rc_severity *sev = NULL;
    earl_error err;
    int c_failed = 0;
    PyObject *r = NULL;
    if (!held) {
        PyErr_NoMemory();
        goto done;
    }
    if (n_sources < 1 || inputs.len != n_sources * n_sources) {
        PyErr_SetString(PyExc_ValueError, "rc_long_term: inputs must hold n_sources**2 bytes");
        goto done;
    }
    if (!(pe = rc_array(&held[0], pe_o, 'i', &np_, "point_event")) ||
        !(pw = rc_array(&held[0], pw_o, 'f', &np_, "point_wait")))
        goto done;
    if (earl_rc_replay_new((size_t)n_sources, np_, pe, pw, &replay, &err) != EARL_OK) {
        c_failed = 1;
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_sources; k++)
        for (Py_ssize_t s = 0; s < n_sources; s++)
            if (earl_rc_replay_set_input(replay, (size_t)k, (size_t)s,
                                         ((const uint8_t *)inputs.buf)[k * n_sources + s],
                                         &err) != EARL_OK) {
                c_failed = 1;
                goto done;
            }
    Py_ssize_t h = 1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(waits); i++)
        if (add_wait_batch(replay, PyList_GET_ITEM(waits, i), &held[h++], &err, &c_failed) < 0)
            goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(colls); i++)
        if (add_collectives(replay, PyList_GET_ITEM(colls, i), &held[h++], &err, &c_failed) < 0)
            goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(costs); i++)
        if (add_costs(replay, PyList_GET_ITEM(costs, i), &err, &c_failed) < 0)
            goto done;
    sev = calloc((size_t)n_sources, sizeof *sev);
    if (!sev) {
        PyErr_NoMemory();
        goto done;
    }
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_replay_run(replay, sev, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        c_failed = 1;
        goto done;
    }
    r = PyList_New(n_sources);
    for (Py_ssize_t s = 0; r && s < n_sources; s++) {
        PyObject *t = Py_BuildValue("(NNN)",
                                    bytes_of(sev[s].location, sev[s].count, sizeof(int64_t)),
                                    bytes_of(sev[s].cnode, sev[s].count, sizeof(int64_t)),
                                    bytes_of(sev[s].value, sev[s].count, sizeof(double)));
        if (!t) {
            Py_CLEAR(r);
            break;
        }
        PyList_SET_ITEM(r, s, t);
    }
done:
    if (c_failed)
        earlc_raise(&err);
    if (sev)
        for (Py_ssize_t s = 0; s < n_sources; s++)
            earl_rc_severity_free(&sev[s]);
    free(sev);
    earl_rc_replay_free(replay);
    for (Py_ssize_t i = 0; held && i < n_held; i++)
        earlc_buffers_release(&held[i]);
    free(held);
    PyBuffer_Release(&inputs);
    return r;
}

static PyMethodDef rootcause_functions[] = {
    {"rc_previous_points", py_previous_points, METH_VARARGS,
     "rc_previous_points(n_locations, pair_key, member_offset, member_location, key_offset, "
     "group_key, stride, loc, partner, at): where each pair of locations last met before an "
     "event."},
    {"rc_long_term", py_long_term, METH_VARARGS,
     "rc_long_term(n_sources, point_event, point_wait, inputs, waits, collectives, costs): the "
     "long-term delay costs per source, by Scalasca's backward replay."},
    {"rc_critical_walk", py_critical_walk, METH_VARARGS,
     "rc_critical_walk(location, init_event, wait_key, wait_partner, omp_key, omp_next_offset, "
     "omp_next_event, stride, start_event): the critical path's stretches."},
    {"rc_group_starts", py_group_starts, METH_VARARGS,
     "rc_group_starts(point_key, point_set, partner_key, partner_location, set_offset, "
     "set_location, n_locations, stride, delayer_location, delayer_event, member_set): where "
     "each collective's delayer last met its communicator."},
    {"rc_event_chunks", py_event_chunks, METH_VARARGS,
     "rc_event_chunks(n_locations, location, kind, time, event_cnode, parent, roles, "
     "program_cnode): the time chunks of the events (offset, slot, cnode, ticks, far_chunk, "
     "far_ticks)."},
    {"rc_chunk_sums", py_chunk_sums, METH_VARARGS,
     "rc_chunk_sums(chunks, stride, n_cnodes, loc, lo, hi): raw "
     "time per call path between two events of a location, per query."},
    {"rc_interval_times", py_interval_times, METH_VARARGS,
     "rc_interval_times(chunks, point_key, point_row, point_cnode, point_wait, point_cut, "
     "stride, n_cnodes, loc, prev, at): synchronisation intervals; chunks is (None or "
     "(offset, slot, cnode, ticks, far_chunk, far_ticks), (key, cnode, ticks))."},
    {"rc_excess", py_excess, METH_VARARGS,
     "rc_excess(late, late_q, early, early_q, within, within_q): positive excess per call path "
     "of one map's queries over another's."},
    {NULL, NULL, 0, NULL},
};

int earlc_add_rootcause(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "RC_CHUNK_ENTER", EARL_RC_CHUNK_ENTER) < 0 ||
        PyModule_AddIntConstant(module, "RC_CHUNK_LEAVE", EARL_RC_CHUNK_LEAVE) < 0 ||
        PyModule_AddIntConstant(module, "RC_CHUNK_JOIN", EARL_RC_CHUNK_JOIN) < 0 ||
        PyModule_AddIntConstant(module, "RC_CHUNK_PROGRAM_END", EARL_RC_CHUNK_PROGRAM_END) < 0 ||
        PyModule_AddIntConstant(module, "RC_INPUT_COST", EARL_RC_INPUT_COST) < 0 ||
        PyModule_AddIntConstant(module, "RC_INPUT_WAIT", EARL_RC_INPUT_WAIT) < 0)
        return -1;
    return PyModule_AddFunctions(module, rootcause_functions);
}
