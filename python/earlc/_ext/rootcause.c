/*
 * rootcause.c - _core.rc_*: the Python face of the root-cause subsystem
 * (csrc/include/earl_rootcause.h).
 *
 * Every function takes named records: Python objects whose attributes have
 * the names of the fields of earl_rootcause.h's structs (the dataclasses of
 * properties/rootcause/records.py), array fields as C-contiguous arrays
 * (numpy arrays, through the buffer protocol) of the struct's item type.
 * The glue reads them field by field into the structs, runs the C work with
 * the GIL released and returns the results as dicts named after the fields
 * of the C result: the large arrays (time chunks, call-path maps) as
 * _core.Column over the C result itself, kept alive by a capsule that frees
 * it; small ones as bytes.  An error names the record and its field
 * ("spans.start must be a contiguous int64 array").
 */
#include "ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "earl_rootcause.h"

/* ---- reading records -------------------------------------------------------- */

/* Attribute `field` of record obj (a new reference); NULL with a TypeError
 * naming both when obj has none. */
static PyObject *field_of(PyObject *obj, const char *record, const char *field)
{
    PyObject *v = PyObject_GetAttrString(obj, field);
    if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a record with a field %s", record, field);
    }
    return v;
}

/* Field `field` of record obj as a contiguous array of the struct-module
 * format `format` (earlc_buffer_array: held in a, its length into or checked
 * against *count), read-only. */
static const void *array_field(earlc_buffers *a, PyObject *obj, const char *record,
                               const char *field, char format, size_t *count)
{
    PyObject *v = field_of(obj, record, field);
    if (!v)
        return NULL;
    char name[128];
    snprintf(name, sizeof name, "%s.%s", record, field);
    /* the buffer view holds its own reference to the array */
    const void *p = earlc_buffer_array(a, v, format, 0, count, name);
    Py_DECREF(v);
    return p;
}

static const int64_t *i64_field(earlc_buffers *a, PyObject *obj, const char *record,
                                const char *field, size_t *count)
{
    return array_field(a, obj, record, field, 'q', count);
}

static const double *f64_field(earlc_buffers *a, PyObject *obj, const char *record,
                               const char *field, size_t *count)
{
    return array_field(a, obj, record, field, 'd', count);
}

/* An integer field; -1 with an exception when it is not one (or negative,
 * when non_negative). */
static int int_field(PyObject *obj, const char *record, const char *field, int non_negative,
                     long long *out)
{
    PyObject *v = field_of(obj, record, field);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s.%s must be an integer", record, field);
        return -1;
    }
    if (non_negative && *out < 0) {
        PyErr_Format(PyExc_ValueError, "%s.%s must not be negative", record, field);
        return -1;
    }
    return 0;
}

/* Whether field `field` of obj is None: 1, 0, or -1 with an exception. */
static int field_is_none(PyObject *obj, const char *record, const char *field)
{
    PyObject *v = field_of(obj, record, field);
    if (!v)
        return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

/* A sub-record: field `field` of obj (a new reference), named record.field
 * into name for the messages about its own fields. */
static PyObject *record_field(PyObject *obj, const char *record, const char *field, char *name,
                              size_t size)
{
    snprintf(name, size, "%s.%s", record, field);
    return field_of(obj, record, field);
}

/* Offsets of a CSR table: n + 1 ascending values from 0 (from_zero) or
 * more to at most `entries`. */
static int offsets_in(const int64_t *offset, size_t n, size_t entries, int from_zero,
                      const char *record, const char *field)
{
    int ok = (from_zero ? offset[0] == 0 : offset[0] >= 0) && offset[n] >= 0 &&
             (size_t)offset[n] <= entries;
    for (size_t k = 0; ok && k < n; k++)
        ok = offset[k] <= offset[k + 1];
    if (!ok)
        PyErr_Format(PyExc_ValueError, "%s.%s must ascend from %s to at most %zu", record, field,
                     from_zero ? "0" : "0 or more", entries);
    return ok ? 0 : -1;
}

static int offsets_fit(const int64_t *offset, size_t n, size_t entries, const char *record,
                       const char *field)
{
    return offsets_in(offset, n, entries, 1, record, field);
}

/* A call-path map (earl_rc_map: offset, cnode, value); the arrays stay in a. */
static int map_arg(earlc_buffers *a, PyObject *obj, const char *record, earl_rc_map *m)
{
    size_t n_off = (size_t)-1, n = (size_t)-1;
    if (!(m->offset = (int64_t *)i64_field(a, obj, record, "offset", &n_off)))
        return -1;
    if (n_off < 1) {
        PyErr_Format(PyExc_ValueError, "%s.offset must hold queries + 1 values", record);
        return -1;
    }
    m->queries = n_off - 1;
    if (!(m->cnode = (int64_t *)i64_field(a, obj, record, "cnode", &n)) ||
        !(m->value = (double *)f64_field(a, obj, record, "value", &n)))
        return -1;
    /* a query's entries may start anywhere (a map sliced from another) */
    return offsets_in(m->offset, m->queries, n, 0, record, "offset");
}

/* A map record in field `field` of obj. */
static int map_field(earlc_buffers *a, PyObject *obj, const char *record, const char *field,
                     earl_rc_map *m)
{
    char name[96];
    PyObject *v = record_field(obj, record, field, name, sizeof name);
    if (!v)
        return -1;
    int rc = map_arg(a, v, name, m);
    Py_DECREF(v);
    return rc;
}

/* The chunks of the events (earl_rc_event_chunks), or none for None. */
static int event_chunks_arg(earlc_buffers *a, PyObject *obj, const char *record,
                            earl_rc_event_chunks *ev)
{
    memset(ev, 0, sizeof *ev);
    if (obj == Py_None)
        return 0;
    size_t n_offsets = (size_t)-1, n_chunks = (size_t)-1, n_far = (size_t)-1;
    if (!(ev->offset = array_field(a, obj, record, "offset", 'Q', &n_offsets)) ||
        !(ev->slot = array_field(a, obj, record, "slot", 'I', &n_chunks)) ||
        !(ev->cnode = array_field(a, obj, record, "cnode", 'i', &n_chunks)) ||
        !(ev->ticks = array_field(a, obj, record, "ticks", 'i', &n_chunks)) ||
        !(ev->far_chunk = array_field(a, obj, record, "far_chunk", 'Q', &n_far)) ||
        !(ev->far_ticks = i64_field(a, obj, record, "far_ticks", &n_far)))
        return -1;
    ev->n_far = n_far;
    if (n_offsets < 1 || ev->offset[0] != 0 || ev->offset[n_offsets - 1] != n_chunks) {
        PyErr_Format(PyExc_ValueError,
                     "%s.offset must hold locations + 1 values from 0 to the chunks", record);
        return -1;
    }
    ev->n_locations = n_offsets - 1;
    /* where each location's chunks end, or None: at the next one's offset */
    PyObject *end = field_of(obj, record, "end");
    if (!end)
        return -1;
    int none = end == Py_None;
    Py_DECREF(end);
    size_t n_ends = ev->n_locations;
    if (!none && !(ev->end = array_field(a, obj, record, "end", 'Q', &n_ends)))
        return -1;
    return 0;
}

/* The time chunks (earl_rc_chunks: stride, n_cnodes, events, table). */
static int chunks_arg(earlc_buffers *a, PyObject *obj, earl_rc_chunks *c)
{
    const char *record = "chunks";
    long long stride, n_cnodes;
    char name[64];
    if (int_field(obj, record, "stride", 0, &stride) < 0 ||
        int_field(obj, record, "n_cnodes", 0, &n_cnodes) < 0)
        return -1;
    c->stride = stride;
    c->n_cnodes = n_cnodes;
    PyObject *events = record_field(obj, record, "events", name, sizeof name);
    if (!events)
        return -1;
    int rc = event_chunks_arg(a, events, name, &c->events);
    Py_DECREF(events);
    if (rc < 0)
        return -1;
    PyObject *table = record_field(obj, record, "table", name, sizeof name);
    if (!table)
        return -1;
    size_t n = (size_t)-1;
    c->table.key = i64_field(a, table, name, "key", &n);
    c->table.cnode = c->table.key ? i64_field(a, table, name, "cnode", &n) : NULL;
    c->table.ticks = c->table.cnode ? i64_field(a, table, name, "ticks", &n) : NULL;
    c->table.count = n;
    Py_DECREF(table);
    return c->table.ticks ? 0 : -1;
}

/* Spans (earl_rc_spans: location, start, end). */
static int spans_arg(earlc_buffers *a, PyObject *obj, earl_rc_spans *s)
{
    size_t n = (size_t)-1;
    if (!(s->location = i64_field(a, obj, "spans", "location", &n)) ||
        !(s->start = i64_field(a, obj, "spans", "start", &n)) ||
        !(s->end = i64_field(a, obj, "spans", "end", &n)))
        return -1;
    s->count = n;
    return 0;
}

/* ---- results ---------------------------------------------------------------- */

static PyObject *bytes_of(const void *data, size_t n, size_t item)
{
    return PyBytes_FromStringAndSize(n ? (const char *)data : "", (Py_ssize_t)(n * item));
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

/* A map as {offset, cnode, value} columns, which take it over (*m is
 * emptied); NULL on failure (the map freed). */
static PyObject *map_result(earl_rc_map *m)
{
    earl_rc_map *own = malloc(sizeof *own);
    if (!own) {
        earl_rc_map_free(m);
        return PyErr_NoMemory();
    }
    *own = *m;
    memset(m, 0, sizeof *m);
    PyObject *owner = earlc_owner_new(own, map_result_free);
    if (!owner)
        return NULL;
    size_t entries = (size_t)own->offset[own->queries];
    PyObject *r = Py_BuildValue(
        "{sNsNsN}", "offset",
        column_of(owner, own->offset, own->queries + 1, sizeof(int64_t), "q"), "cnode",
        column_of(owner, own->cnode, entries, sizeof(int64_t), "q"), "value",
        column_of(owner, own->value, entries, sizeof(double), "d"));
    Py_DECREF(owner);
    return r;
}

/* ---- the functions ------------------------------------------------------------ */

static void event_chunks_free(void *p)
{
    earl_rc_event_chunk_table_free(p);
    free(p);
}

/* rc_event_chunks(columns, threads=1)
 * -> {offset, end, slot, cnode, ticks, far_chunk, far_ticks} */
static PyObject *py_event_chunks(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"columns", "threads", NULL};
    PyObject *obj;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i", kwlist, &obj, &threads))
        return NULL;
    if (threads < 0) {
        PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: one per core)");
        return NULL;
    }
    const char *record = "columns";
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    earl_rc_event_columns in;
    long long n_locations, program;
    size_t n_events = (size_t)-1, n_cnodes = (size_t)-1, n_roles = 256;
    if (int_field(obj, record, "n_locations", 1, &n_locations) < 0 ||
        int_field(obj, record, "program_cnode", 0, &program) < 0 ||
        !(in.location = array_field(&a, obj, record, "location", 'i', &n_events)) ||
        !(in.kind = array_field(&a, obj, record, "kind", 'B', &n_events)) ||
        !(in.time = array_field(&a, obj, record, "time", 'Q', &n_events)) ||
        !(in.cnode = array_field(&a, obj, record, "cnode", 'i', &n_events)) ||
        !(in.parent = array_field(&a, obj, record, "parent", 'i', &n_cnodes)) ||
        !(in.role = array_field(&a, obj, record, "role", 'B', &n_roles)))
        goto done;
    in.n_locations = (size_t)n_locations;
    in.n_events = n_events;
    in.n_cnodes = n_cnodes;
    in.program_cnode = program;
    earl_rc_event_chunk_table *table = malloc(sizeof *table);
    if (!table) {
        PyErr_NoMemory();
        goto done;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_event_chunks_build(&in, threads, table, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        free(table);
        earlc_raise(&err);
        goto done;
    }
    PyObject *owner = earlc_owner_new(table, event_chunks_free);
    if (!owner)
        goto done;
    r = Py_BuildValue(
        "{sNsNsNsNsNsNsN}", "offset",
        column_of(owner, table->offset, table->n_locations + 1, sizeof(uint64_t), "Q"), "end",
        column_of(owner, table->end, table->n_locations, sizeof(uint64_t), "Q"), "slot",
        column_of(owner, table->slot, table->count, sizeof(uint32_t), "I"), "cnode",
        column_of(owner, table->cnode, table->count, sizeof(int32_t), "i"), "ticks",
        column_of(owner, table->ticks, table->count, sizeof(int32_t), "i"), "far_chunk",
        column_of(owner, table->far_chunk, table->n_far, sizeof(uint64_t), "Q"), "far_ticks",
        column_of(owner, table->far_ticks, table->n_far, sizeof(int64_t), "q"));
    Py_DECREF(owner);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_chunk_sums(chunks, spans) -> map {offset, cnode, value} */
static PyObject *py_chunk_sums(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *chunks_o, *spans_o;
    if (!PyArg_ParseTuple(args, "OO", &chunks_o, &spans_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    earl_rc_chunks chunks;
    earl_rc_spans spans;
    PyObject *r = NULL;
    if (chunks_arg(&a, chunks_o, &chunks) < 0 || spans_arg(&a, spans_o, &spans) < 0)
        goto done;
    earl_rc_map out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_chunk_sums(&chunks, &spans, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = map_result(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_interval_times(chunks, points, spans, threads=1)
 * -> {time: map, wait_sum, between_offset, between_row} */
static PyObject *py_interval_times(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"chunks", "points", "spans", "threads", NULL};
    PyObject *chunks_o, *points_o, *spans_o;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|i", kwlist, &chunks_o, &points_o,
                                     &spans_o, &threads))
        return NULL;
    if (threads < 0) {
        PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: one per core)");
        return NULL;
    }
    const char *record = "points";
    earlc_buffers a = {.n = 0};
    earl_rc_chunks chunks;
    earl_rc_points points;
    earl_rc_spans spans;
    size_t np_ = (size_t)-1;
    PyObject *r = NULL;
    if (chunks_arg(&a, chunks_o, &chunks) < 0 ||
        !(points.key = i64_field(&a, points_o, record, "key", &np_)) ||
        !(points.row = i64_field(&a, points_o, record, "row", &np_)) ||
        !(points.cnode = i64_field(&a, points_o, record, "cnode", &np_)) ||
        !(points.wait = f64_field(&a, points_o, record, "wait", &np_)) ||
        !(points.cut = f64_field(&a, points_o, record, "cut", &np_)) ||
        spans_arg(&a, spans_o, &spans) < 0)
        goto done;
    points.count = np_;
    earl_rc_intervals out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_interval_times(&chunks, &points, &spans, threads, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    size_t nq = spans.count, nb = (size_t)out.between_offset[nq];
    r = Py_BuildValue("{sNsNsNsN}", "time", map_result(&out.time), "wait_sum",
                      bytes_of(out.wait_sum, nq, sizeof(double)), "between_offset",
                      bytes_of(out.between_offset, nq + 1, sizeof(int64_t)), "between_row",
                      bytes_of(out.between_row, nb, sizeof(int64_t)));
    earl_rc_intervals_free(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_excess(pairs) -> {excess: map, sum}; pairs.within may be None (then
 * pairs.within_query is not read). */
static PyObject *py_excess(PyObject *self, PyObject *obj)
{
    (void)self;
    const char *record = "pairs";
    earlc_buffers a = {.n = 0};
    earl_rc_map late, early, within;
    earl_rc_excess_pairs p = {.late = &late, .early = &early};
    size_t n = (size_t)-1;
    PyObject *r = NULL;
    double *sum = NULL;
    int no_within;
    if (map_field(&a, obj, record, "late", &late) < 0 ||
        map_field(&a, obj, record, "early", &early) < 0 ||
        !(p.late_query = i64_field(&a, obj, record, "late_query", &n)) ||
        !(p.early_query = i64_field(&a, obj, record, "early_query", &n)) ||
        (no_within = field_is_none(obj, record, "within")) < 0)
        goto done;
    if (!no_within) {
        if (map_field(&a, obj, record, "within", &within) < 0 ||
            !(p.within_query = i64_field(&a, obj, record, "within_query", &n)))
            goto done;
        p.within = &within;
    }
    p.count = n;
    sum = malloc((n ? n : 1) * sizeof *sum);
    if (!sum) {
        PyErr_NoMemory();
        goto done;
    }
    earl_rc_map out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_excess(&p, &out, sum, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("{sNsN}", "excess", map_result(&out), "sum",
                      bytes_of(sum, n, sizeof(double)));
done:
    free(sum);
    earlc_buffers_release(&a);
    return r;
}

/* rc_previous_points(points, queries) -> previous point per query (int64 bytes) */
static PyObject *py_previous_points(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *points_o, *queries_o;
    if (!PyArg_ParseTuple(args, "OO", &points_o, &queries_o))
        return NULL;
    const char *record = "points";
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    int64_t *out = NULL;
    earl_rc_pair_points pp;
    earl_rc_meeting_queries q;
    long long stride, n_locations;
    size_t n_pairs = (size_t)-1, n_off = (size_t)-1, n_members = (size_t)-1, n_keys = (size_t)-1,
           nq = (size_t)-1;
    if (int_field(points_o, record, "stride", 0, &stride) < 0 ||
        int_field(points_o, record, "n_locations", 1, &n_locations) < 0 ||
        !(pp.pair_key = i64_field(&a, points_o, record, "pair_key", &n_pairs)) ||
        !(pp.member_offset = i64_field(&a, points_o, record, "member_offset", &n_off)) ||
        !(pp.member_location = i64_field(&a, points_o, record, "member_location", &n_members)) ||
        !(pp.key_offset = i64_field(&a, points_o, record, "key_offset", &n_off)) ||
        !(pp.group_key = i64_field(&a, points_o, record, "group_key", &n_keys)) ||
        !(q.location = i64_field(&a, queries_o, "queries", "location", &nq)) ||
        !(q.partner = i64_field(&a, queries_o, "queries", "partner", &nq)) ||
        !(q.before = i64_field(&a, queries_o, "queries", "before", &nq)))
        goto done;
    if (n_off < 1) {
        PyErr_SetString(PyExc_ValueError, "points.member_offset must hold groups + 1 values");
        goto done;
    }
    if (offsets_fit(pp.member_offset, n_off - 1, n_members, record, "member_offset") < 0 ||
        offsets_fit(pp.key_offset, n_off - 1, n_keys, record, "key_offset") < 0)
        goto done;
    pp.stride = stride;
    pp.n_locations = (size_t)n_locations;
    pp.n_pairs = n_pairs;
    pp.n_groups = n_off - 1;
    q.count = nq;
    out = malloc((nq ? nq : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_previous_points(&pp, &q, out, &err);
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

/* rc_group_starts(meetings, instances)
 * -> {start, met_instance, met_location, met_event} */
static PyObject *py_group_starts(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *m_o, *q_o;
    if (!PyArg_ParseTuple(args, "OO", &m_o, &q_o))
        return NULL;
    const char *record = "meetings";
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    earl_rc_meetings m;
    earl_rc_group_queries q;
    long long stride, n_locations;
    size_t np_ = (size_t)-1, n_partner = (size_t)-1, n_set_off = (size_t)-1,
           n_set_loc = (size_t)-1, ni = (size_t)-1;
    if (int_field(m_o, record, "stride", 0, &stride) < 0 ||
        int_field(m_o, record, "n_locations", 1, &n_locations) < 0 ||
        !(m.point_key = i64_field(&a, m_o, record, "point_key", &np_)) ||
        !(m.point_set = i64_field(&a, m_o, record, "point_set", &np_)) ||
        !(m.partner_key = i64_field(&a, m_o, record, "partner_key", &n_partner)) ||
        !(m.partner_location = i64_field(&a, m_o, record, "partner_location", &n_partner)) ||
        !(m.set_offset = i64_field(&a, m_o, record, "set_offset", &n_set_off)) ||
        !(m.set_location = i64_field(&a, m_o, record, "set_location", &n_set_loc)) ||
        !(q.delayer_location = i64_field(&a, q_o, "instances", "delayer_location", &ni)) ||
        !(q.delayer_event = i64_field(&a, q_o, "instances", "delayer_event", &ni)) ||
        !(q.member_set = i64_field(&a, q_o, "instances", "member_set", &ni)))
        goto done;
    if (n_set_off < 1) {
        PyErr_SetString(PyExc_ValueError, "meetings.set_offset must hold sets + 1 values");
        goto done;
    }
    if (offsets_fit(m.set_offset, n_set_off - 1, n_set_loc, record, "set_offset") < 0)
        goto done;
    m.stride = stride;
    m.n_points = np_;
    m.n_partners = n_partner;
    m.n_sets = n_set_off - 1;
    m.n_locations = (size_t)n_locations;
    q.count = ni;
    earl_rc_group_starts out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_find_group_starts(&m, &q, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("{sNsNsNsN}", "start", bytes_of(out.start, ni, sizeof(int64_t)),
                      "met_instance", bytes_of(out.met_instance, out.n_met, sizeof(int64_t)),
                      "met_location", bytes_of(out.met_location, out.n_met, sizeof(int64_t)),
                      "met_event", bytes_of(out.met_event, out.n_met, sizeof(int64_t)));
    earl_rc_group_starts_free(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* rc_critical_walk(graph, start_location, start_event) -> stretches
 * {location, start, end}; start_event -1: from the location's end */
static PyObject *py_critical_walk(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *g_o;
    long long start_location, start;
    if (!PyArg_ParseTuple(args, "OLL", &g_o, &start_location, &start))
        return NULL;
    const char *record = "graph";
    earlc_buffers a = {.n = 0};
    PyObject *r = NULL;
    earl_rc_path_graph g;
    long long stride, ends_at_start;
    size_t n_events = (size_t)-1, n_loc = (size_t)-1, n_waits = (size_t)-1, n_omp = (size_t)-1,
           n_off = (size_t)-1, n_next = (size_t)-1;
    if (int_field(g_o, record, "stride", 0, &stride) < 0 ||
        int_field(g_o, record, "ends_at_start", 0, &ends_at_start) < 0 ||
        !(g.location = array_field(&a, g_o, record, "location", 'i', &n_events)) ||
        !(g.init_event = i64_field(&a, g_o, record, "init_event", &n_loc)) ||
        !(g.wait_key = i64_field(&a, g_o, record, "wait_key", &n_waits)) ||
        !(g.wait_partner = i64_field(&a, g_o, record, "wait_partner", &n_waits)) ||
        !(g.omp_key = i64_field(&a, g_o, record, "omp_key", &n_omp)) ||
        !(g.omp_next_offset = i64_field(&a, g_o, record, "omp_next_offset", &n_off)) ||
        !(g.omp_next_event = i64_field(&a, g_o, record, "omp_next_event", &n_next)))
        goto done;
    if (n_off != n_omp + 1) {
        PyErr_SetString(PyExc_ValueError, "graph.omp_next_offset must hold omp_key's length + 1 "
                                          "values");
        goto done;
    }
    if (offsets_fit(g.omp_next_offset, n_omp, n_next, record, "omp_next_offset") < 0)
        goto done;
    g.stride = stride;
    g.ends_at_start = ends_at_start != 0;
    g.n_events = n_events;
    g.n_locations = n_loc;
    g.n_waits = n_waits;
    g.n_omp = n_omp;
    earl_rc_stretches out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_critical_walk(&g, start_location, start, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    r = Py_BuildValue("{sNsNsN}", "location", bytes_of(out.location, out.count, sizeof(int64_t)),
                      "start", bytes_of(out.start, out.count, sizeof(int64_t)), "end",
                      bytes_of(out.end, out.count, sizeof(int64_t)));
    earl_rc_stretches_free(&out);
done:
    earlc_buffers_release(&a);
    return r;
}

/* One batch of point-to-point wait states (earl_rc_waits).  The replay
 * keeps pointers into the arrays: their buffers stay in `held` until it is
 * freed. */
static int add_waits(earl_rc_replay *replay, PyObject *obj, earlc_buffers *held,
                     earl_error *err, int *c_failed)
{
    const char *record = "waits";
    long long source;
    size_t n = (size_t)-1, nb1 = (size_t)-1, nb = (size_t)-1;
    earl_rc_map delays;
    earl_rc_waits w = {.delays = &delays};
    if (int_field(obj, record, "source", 1, &source) < 0 ||
        !(w.event = i64_field(held, obj, record, "event", &n)) ||
        !(w.row = i64_field(held, obj, record, "row", &n)) ||
        !(w.delayer_location = i64_field(held, obj, record, "delayer_location", &n)) ||
        !(w.delayer_event = i64_field(held, obj, record, "delayer_event", &n)) ||
        !(w.scale = f64_field(held, obj, record, "scale", &n)) ||
        !(w.denominator = f64_field(held, obj, record, "denominator", &n)) ||
        map_field(held, obj, record, "delays", &delays) < 0 ||
        !(w.between_offset = i64_field(held, obj, record, "between_offset", &nb1)) ||
        !(w.between_row = i64_field(held, obj, record, "between_row", &nb)))
        return -1;
    if (nb1 != n + 1) {
        PyErr_SetString(PyExc_ValueError, "waits.between_offset must hold count + 1 values");
        return -1;
    }
    if (offsets_fit(w.between_offset, n, nb, record, "between_offset") < 0)
        return -1;
    w.source = (size_t)source;
    w.count = n;
    if (earl_rc_replay_add_waits(replay, &w, err) != EARL_OK) {
        *c_failed = 1;
        return -1;
    }
    return 0;
}

/* The collective instances (earl_rc_collectives); held as add_waits. */
static int add_collectives(earl_rc_replay *replay, PyObject *obj, earlc_buffers *held,
                           earl_error *err, int *c_failed)
{
    const char *record = "collectives";
    size_t n = (size_t)-1, n1 = (size_t)-1, nb = (size_t)-1, nm = (size_t)-1;
    earl_rc_map delays;
    earl_rc_collectives c = {.delays = &delays};
    if (!(c.kind = i64_field(held, obj, record, "kind", &n)) ||
        !(c.delayer_location = i64_field(held, obj, record, "delayer_location", &n)) ||
        !(c.delayer_event = i64_field(held, obj, record, "delayer_event", &n)) ||
        !(c.member_offset = i64_field(held, obj, record, "member_offset", &n1)) ||
        !(c.between_offset = i64_field(held, obj, record, "between_offset", &n1)) ||
        !(c.between_row = i64_field(held, obj, record, "between_row", &nb)) ||
        !(c.member_event = i64_field(held, obj, record, "member_event", &nm)) ||
        !(c.member_row = i64_field(held, obj, record, "member_row", &nm)) ||
        !(c.member_wait = f64_field(held, obj, record, "member_wait", &nm)) ||
        !(c.member_delay_sum = f64_field(held, obj, record, "member_delay_sum", &nm)) ||
        !(c.member_prop = f64_field(held, obj, record, "member_prop", &nm)) ||
        !(c.member_met = i64_field(held, obj, record, "member_met", &nm)) ||
        !(c.member_delay_query = i64_field(held, obj, record, "member_delay_query", &nm)) ||
        map_field(held, obj, record, "delays", &delays) < 0)
        return -1;
    if (n1 != n + 1) {
        PyErr_SetString(PyExc_ValueError,
                        "collectives.member_offset must hold count + 1 values");
        return -1;
    }
    if (offsets_fit(c.between_offset, n, nb, record, "between_offset") < 0 ||
        offsets_fit(c.member_offset, n, nm, record, "member_offset") < 0)
        return -1;
    c.count = n;
    c.n_members = nm;
    if (earl_rc_replay_add_collectives(replay, &c, err) != EARL_OK) {
        *c_failed = 1;
        return -1;
    }
    return 0;
}

/* Known costs (earl_rc_costs); added (summed) at once. */
static int add_costs(earl_rc_replay *replay, PyObject *obj, earl_error *err, int *c_failed)
{
    const char *record = "costs";
    earlc_buffers a = {.n = 0};
    long long source;
    size_t n = (size_t)-1;
    earl_rc_costs c;
    int rc = -1;
    if (int_field(obj, record, "source", 1, &source) < 0 ||
        !(c.row = i64_field(&a, obj, record, "row", &n)) ||
        !(c.value = f64_field(&a, obj, record, "value", &n)))
        goto done;
    c.source = (size_t)source;
    c.count = n;
    if (earl_rc_replay_add_costs(replay, &c, err) != EARL_OK) {
        *c_failed = 1;
        goto done;
    }
    rc = 0;
done:
    earlc_buffers_release(&a);
    return rc;
}

/* A list field of record obj (a new reference), or NULL with an exception. */
static PyObject *list_field(PyObject *obj, const char *record, const char *field)
{
    PyObject *v = field_of(obj, record, field);
    if (v && !PyList_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s.%s must be a list", record, field);
        Py_CLEAR(v);
    }
    return v;
}

/* The replay of record obj (n_sources, point_event, point_location,
 * point_wait, inputs: n_sources**2 bytes, [kind * n_sources + source]:
 * EARL_RC_INPUT_* bits, and the lists waits, collectives and costs of
 * batches, taken in that order where the replay meets ties) into *out; the
 * arrays it points into are held in *held (n_held sets) until it is freed.
 * -1 with an exception. */
static int replay_build(PyObject *obj, earl_rc_replay **out, earlc_buffers **held_out,
                        Py_ssize_t *n_held_out, size_t *n_sources_out)
{
    const char *record = "replay";
    long long n_sources = 0;
    PyObject *waits = NULL, *colls = NULL, *costs = NULL;
    earlc_buffers *held = NULL;
    Py_ssize_t n_held = 0;
    earl_rc_replay *replay = NULL;
    earl_error err;
    int c_failed = 0, rc = -1;
    size_t np_ = (size_t)-1, n_inputs = (size_t)-1;
    earl_rc_replay_points points;
    const uint8_t *inputs;
    if (int_field(obj, record, "n_sources", 1, &n_sources) < 0 ||
        !(waits = list_field(obj, record, "waits")) ||
        !(colls = list_field(obj, record, "collectives")) ||
        !(costs = list_field(obj, record, "costs")))
        goto done;
    /* the arrays the replay points into, held until it is freed: one set for
     * the points, one per batch */
    n_held = 1 + PyList_GET_SIZE(waits) + PyList_GET_SIZE(colls);
    held = calloc((size_t)n_held, sizeof *held);
    if (!held) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(points.event = i64_field(&held[0], obj, record, "point_event", &np_)) ||
        !(points.location = i64_field(&held[0], obj, record, "point_location", &np_)) ||
        !(points.wait = f64_field(&held[0], obj, record, "point_wait", &np_)) ||
        !(inputs = array_field(&held[0], obj, record, "inputs", 'B', &n_inputs)))
        goto done;
    if (n_sources < 1 || n_inputs != (size_t)(n_sources * n_sources)) {
        PyErr_SetString(PyExc_ValueError, "replay.inputs must hold n_sources**2 bytes");
        goto done;
    }
    points.count = np_;
    if (earl_rc_replay_new((size_t)n_sources, &points, &replay, &err) != EARL_OK) {
        c_failed = 1;
        goto done;
    }
    for (long long k = 0; k < n_sources; k++)
        for (long long s = 0; s < n_sources; s++)
            if (earl_rc_replay_set_input(replay, (size_t)k, (size_t)s,
                                         inputs[k * n_sources + s], &err) != EARL_OK) {
                c_failed = 1;
                goto done;
            }
    Py_ssize_t h = 1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(waits); i++)
        if (add_waits(replay, PyList_GET_ITEM(waits, i), &held[h++], &err, &c_failed) < 0)
            goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(colls); i++)
        if (add_collectives(replay, PyList_GET_ITEM(colls, i), &held[h++], &err, &c_failed) < 0)
            goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(costs); i++)
        if (add_costs(replay, PyList_GET_ITEM(costs, i), &err, &c_failed) < 0)
            goto done;
    rc = 0;
done:
    if (c_failed)
        earlc_raise(&err);
    if (rc < 0) {
        earl_rc_replay_free(replay);
        for (Py_ssize_t i = 0; held && i < n_held; i++)
            earlc_buffers_release(&held[i]);
        free(held);
        replay = NULL, held = NULL, n_held = 0;
    }
    *out = replay;
    *held_out = held;
    *n_held_out = n_held;
    *n_sources_out = (size_t)n_sources;
    Py_XDECREF(waits);
    Py_XDECREF(colls);
    Py_XDECREF(costs);
    return rc;
}

static void replay_release(earl_rc_replay *replay, earlc_buffers *held, Py_ssize_t n_held)
{
    earl_rc_replay_free(replay);
    for (Py_ssize_t i = 0; held && i < n_held; i++)
        earlc_buffers_release(&held[i]);
    free(held);
}

/* The severities per source as {severity: [{location, cnode, value}],
 * out_of_order}; frees sev. */
static PyObject *severity_result(const earl_rc_replay *replay, earl_rc_severity *sev,
                                 size_t n_sources)
{
    PyObject *r = NULL, *list = PyList_New((Py_ssize_t)n_sources);
    for (Py_ssize_t s = 0; list && s < (Py_ssize_t)n_sources; s++) {
        PyObject *t = Py_BuildValue(
            "{sNsNsN}", "location", bytes_of(sev[s].location, sev[s].count, sizeof(int64_t)),
            "cnode", bytes_of(sev[s].cnode, sev[s].count, sizeof(int64_t)), "value",
            bytes_of(sev[s].value, sev[s].count, sizeof(double)));
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, s, t);
    }
    if (list)
        r = Py_BuildValue("{sNsn}", "severity", list, "out_of_order",
                          (Py_ssize_t)earl_rc_replay_out_of_order(replay));
    for (size_t s = 0; s < n_sources; s++)
        earl_rc_severity_free(&sev[s]);
    free(sev);
    return r;
}

/* rc_long_term(replay) -> {severity: [{location, cnode, value} per source],
 * out_of_order}: the replay of the whole trace (replay_build's record). */
static PyObject *py_long_term(PyObject *self, PyObject *obj)
{
    (void)self;
    earl_rc_replay *replay;
    earlc_buffers *held;
    Py_ssize_t n_held;
    size_t n_sources;
    if (replay_build(obj, &replay, &held, &n_held, &n_sources) < 0)
        return NULL;
    PyObject *r = NULL;
    earl_rc_severity *sev = calloc(n_sources, sizeof *sev);
    if (!sev) {
        PyErr_NoMemory();
        goto done;
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_replay_run(replay, sev, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        free(sev);
        earlc_raise(&err);
        goto done;
    }
    r = severity_result(replay, sev, n_sources);
done:
    replay_release(replay, held, n_held);
    return r;
}

/* ---- _core.RcReplay: the replay in parts ---------------------------------------- */

typedef struct {
    PyObject_HEAD
    earl_rc_replay *replay;
    earlc_buffers *held;
    Py_ssize_t n_held;
    size_t n_sources;
} RcReplayObject;

static void rc_replay_dealloc(PyObject *self)
{
    RcReplayObject *o = (RcReplayObject *)self;
    replay_release(o->replay, o->held, o->n_held);
    o->replay = NULL;
    Py_TYPE(self)->tp_free(self);
}

/* RcReplay(replay, held, watch): replay_build's record, held a byte per
 * location (set: this part's), watch the rows whose completed costs other
 * parts read (int64). */
static PyObject *rc_replay_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"replay", "held", "watch", NULL};
    PyObject *obj, *held_o, *watch_o;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO", kwlist, &obj, &held_o, &watch_o))
        return NULL;
    RcReplayObject *o = (RcReplayObject *)type->tp_alloc(type, 0);
    if (!o)
        return NULL;
    if (replay_build(obj, &o->replay, &o->held, &o->n_held, &o->n_sources) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    earlc_buffers a = {.n = 0};
    size_t n_loc = (size_t)-1, n_watch = (size_t)-1;
    const uint8_t *held = earlc_buffer_array(&a, held_o, 'B', 0, &n_loc, "held");
    const int64_t *watch = held ? earlc_buffer_array(&a, watch_o, 'q', 0, &n_watch, "watch")
                                : NULL;
    earl_error err;
    earl_status st = EARL_OK;
    if (watch) {
        Py_BEGIN_ALLOW_THREADS
        st = earl_rc_replay_start(o->replay, held, n_loc, watch, n_watch, &err);
        Py_END_ALLOW_THREADS
    }
    earlc_buffers_release(&a);
    if (!watch || st != EARL_OK) {
        if (watch)
            earlc_raise(&err);
        Py_DECREF(o);
        return NULL;
    }
    return (PyObject *)o;
}

/* advance() -> how many wait states passed their cost on */
static PyObject *rc_replay_advance(PyObject *self, PyObject *unused)
{
    (void)unused;
    RcReplayObject *o = (RcReplayObject *)self;
    size_t taken;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_replay_advance(o->replay, &taken, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    return PyLong_FromSize_t(taken);
}

/* completed() -> (watch indices: int64 bytes, costs: float64 bytes, n_sources a row) */
static PyObject *rc_replay_completed(PyObject *self, PyObject *unused)
{
    (void)unused;
    RcReplayObject *o = (RcReplayObject *)self;
    earl_rc_completed c;
    earl_error err;
    if (earl_rc_replay_completed(o->replay, &c, &err) != EARL_OK)
        return earlc_raise(&err);
    PyObject *r = Py_BuildValue("(NN)", bytes_of(c.watch, c.count, sizeof(int64_t)),
                                bytes_of(c.cost, c.count * o->n_sources, sizeof(double)));
    earl_rc_completed_free(&c);
    return r;
}

/* receive(rows, costs): other parts' completed costs (int64, float64 arrays) */
static PyObject *rc_replay_receive(PyObject *self, PyObject *args)
{
    RcReplayObject *o = (RcReplayObject *)self;
    PyObject *rows_o, *costs_o;
    if (!PyArg_ParseTuple(args, "OO", &rows_o, &costs_o))
        return NULL;
    earlc_buffers a = {.n = 0};
    size_t n = (size_t)-1, nc = (size_t)-1;
    const int64_t *rows = earlc_buffer_array(&a, rows_o, 'q', 0, &n, "rows");
    const double *costs = rows ? earlc_buffer_array(&a, costs_o, 'd', 0, &nc, "costs") : NULL;
    PyObject *r = NULL;
    if (costs && nc != n * o->n_sources) {
        PyErr_SetString(PyExc_ValueError, "costs must hold n_sources values per row");
    } else if (costs) {
        earl_error err;
        if (earl_rc_replay_receive(o->replay, n, rows, costs, &err) != EARL_OK)
            earlc_raise(&err);
        else
            r = Py_NewRef(Py_None);
    }
    earlc_buffers_release(&a);
    return r;
}

static PyObject *rc_replay_remaining(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromSize_t(earl_rc_replay_remaining(((RcReplayObject *)self)->replay));
}

/* finish() -> {severity: [...], out_of_order} as rc_long_term's */
static PyObject *rc_replay_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    RcReplayObject *o = (RcReplayObject *)self;
    earl_rc_severity *sev = calloc(o->n_sources, sizeof *sev);
    if (!sev)
        return PyErr_NoMemory();
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_rc_replay_finish(o->replay, sev, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        free(sev);
        return earlc_raise(&err);
    }
    return severity_result(o->replay, sev, o->n_sources);
}

static PyMethodDef rc_replay_methods[] = {
    {"advance", rc_replay_advance, METH_NOARGS,
     "advance(): pass on the costs of the wait states whose reads are complete; how many "
     "did (earl_rc_replay_advance)."},
    {"completed", rc_replay_completed, METH_NOARGS,
     "completed(): the watched points completed since the last call, (watch indices, costs) "
     "as int64 and float64 bytes (earl_rc_replay_completed)."},
    {"receive", rc_replay_receive, METH_VARARGS,
     "receive(rows, costs): other parts' completed costs (earl_rc_replay_receive)."},
    {"remaining", rc_replay_remaining, METH_NOARGS,
     "remaining(): wait states that have not passed their cost on yet."},
    {"finish", rc_replay_finish, METH_NOARGS,
     "finish(): this part's severities, as rc_long_term's (earl_rc_replay_finish)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RcReplayType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.RcReplay",
    .tp_basicsize = sizeof(RcReplayObject),
    .tp_dealloc = rc_replay_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The long-term replay of one part of a trace analysed in parts "
              "(earl_rc_replay_start ... earl_rc_replay_finish).",
    .tp_methods = rc_replay_methods,
    .tp_new = rc_replay_new,
};

static PyMethodDef rootcause_functions[] = {
    {"rc_event_chunks", (PyCFunction)(void (*)(void))py_event_chunks,
     METH_VARARGS | METH_KEYWORDS,
     "rc_event_chunks(columns, threads=1): the time chunks of the events (threads: 0 for "
     "one per core), "
     "{offset, end, slot, cnode, ticks, far_chunk, far_ticks} (earl_rc_event_chunks_build)."},
    {"rc_chunk_sums", py_chunk_sums, METH_VARARGS,
     "rc_chunk_sums(chunks, spans): raw time per call path of each span, a map "
     "{offset, cnode, value} (earl_rc_chunk_sums)."},
    {"rc_interval_times", (PyCFunction)(void (*)(void))py_interval_times,
     METH_VARARGS | METH_KEYWORDS,
     "rc_interval_times(chunks, points, spans, threads=1): synchronisation intervals "
     "(threads: 0 for one per core), "
     "{time, wait_sum, between_offset, between_row} (earl_rc_interval_times)."},
    {"rc_excess", py_excess, METH_O,
     "rc_excess(pairs): positive excess per call path of one map's queries over another's, "
     "{excess, sum} (earl_rc_excess)."},
    {"rc_previous_points", py_previous_points, METH_VARARGS,
     "rc_previous_points(points, queries): where each pair of locations last met before an "
     "event (earl_rc_previous_points)."},
    {"rc_group_starts", py_group_starts, METH_VARARGS,
     "rc_group_starts(meetings, instances): where each collective's delayer last met its "
     "communicator, {start, met_instance, met_location, met_event} "
     "(earl_rc_find_group_starts)."},
    {"rc_critical_walk", py_critical_walk, METH_VARARGS,
     "rc_critical_walk(graph, start_location, start_event): the critical path's stretches, "
     "{location, start, end} (earl_rc_critical_walk)."},
    {"rc_long_term", py_long_term, METH_O,
     "rc_long_term(replay): the long-term delay costs per source by Scalasca's backward "
     "replay, {severity: [{location, cnode, value}], out_of_order} (earl_rc_replay)."},
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
    if (PyType_Ready(&RcReplayType) < 0)
        return -1;
    Py_INCREF(&RcReplayType);
    if (PyModule_AddObject(module, "RcReplay", (PyObject *)&RcReplayType) < 0) {
        Py_DECREF(&RcReplayType);
        return -1;
    }
    return PyModule_AddFunctions(module, rootcause_functions);
}
