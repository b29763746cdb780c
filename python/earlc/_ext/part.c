/*
 * part.c - _core.Reading: the stages of an open (earl_reading_*, earl.h)
 * and the ghosts of a part of a trace (earl_part_*, csrc/include/earl_part.h).
 *
 * A part of a trace is read in stages: the definitions first (to plan the
 * parts), then the part's own locations, then the ghosts the other parts
 * export for it are added, then the events are ordered into a _core.Trace.
 * Ghost records travel as bytes (earl_ghost structs, 80 bytes each), which
 * the Python side sends between parts as they are, or packed narrow
 * (pack_ghosts, unpack_ghosts) for the scratch folder of the analysis in
 * turn.  Each stage releases
 * the GIL around its C work.
 */
#include "ext.h"
#include "earl_part.h"

typedef struct {
    PyObject_HEAD
    earl_reading *reading;
    earlc_progress_bridge bridge;
    PyObject *progress; /* held for the bridge */
} ReadingObject;

static void reading_dealloc(PyObject *self)
{
    ReadingObject *r = (ReadingObject *)self;
    earl_reading_free(r->reading);
    r->reading = NULL;
    Py_CLEAR(r->bridge.pending);
    Py_XDECREF(r->progress);
    Py_TYPE(self)->tp_free(self);
}

static earl_reading *reading_of(ReadingObject *r)
{
    if (!r->reading)
        PyErr_SetString(PyExc_ValueError, "this reading was finished (or failed) already");
    return r->reading;
}

static PyObject *reading_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"path", "threads", "progress", "salvage", NULL};
    PyObject *path_obj = NULL, *progress = Py_None;
    int threads = 0, salvage = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|iOp", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &threads, &progress, &salvage))
        return NULL;
    ReadingObject *r = (ReadingObject *)type->tp_alloc(type, 0);
    if (!r) {
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_INCREF(progress);
    r->progress = progress;
    r->bridge = (earlc_progress_bridge){progress, 0, NULL};
    earl_open_options opts = {threads, progress != Py_None ? earlc_call_progress : NULL,
                              &r->bridge, salvage, NULL};
    earl_error err;
    earl_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_open(path, &opts, &r->reading, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (earlc_progress_interrupted(&r->bridge)) {
        Py_DECREF(r);
        return NULL;
    }
    if (st != EARL_OK) {
        Py_DECREF(r);
        return earlc_raise(&err);
    }
    return (PyObject *)r;
}

static PyObject *reading_n_locations(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_reading *rd = reading_of((ReadingObject *)self);
    return rd ? PyLong_FromUnsignedLong(earl_reading_defs(rd)->n_locations) : NULL;
}

static PyObject *reading_definitions(PyObject *self, PyObject *unused)
{
    (void)unused;
    earl_reading *rd = reading_of((ReadingObject *)self);
    return rd ? earlc_definitions(earl_reading_defs(rd), earl_reading_path(rd)) : NULL;
}

/* read(mask): the events of the locations whose byte in mask is non-zero. */
static PyObject *reading_read(PyObject *self, PyObject *arg)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    Py_buffer mask;
    if (PyObject_GetBuffer(arg, &mask, PyBUF_SIMPLE) != 0)
        return NULL;
    if ((size_t)mask.len != earl_reading_defs(rd)->n_locations) {
        PyBuffer_Release(&mask);
        return PyErr_Format(PyExc_ValueError, "the mask has %zd bytes for %u locations",
                            mask.len, earl_reading_defs(rd)->n_locations);
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_read(rd, mask.buf, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&mask);
    if (earlc_progress_interrupted(&((ReadingObject *)self)->bridge))
        return NULL;
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* times(l, start=0, out=None): without out, how many timestamps location l
 * holds; with out (a writable buffer of uint64), copies the next ones from
 * start into it and returns how many it copied. */
static PyObject *reading_times(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"location", "start", "out", NULL};
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    Py_ssize_t l, start = 0;
    PyObject *out_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|nO", kwlist, &l, &start, &out_obj))
        return NULL;
    size_t n = 0;
    const earl_time *t = l >= 0 ? earl_reading_times(rd, (size_t)l, &n) : NULL;
    if (out_obj == Py_None)
        return PyLong_FromSize_t(n);
    Py_buffer out;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_WRITABLE) != 0)
        return NULL;
    size_t room = (size_t)out.len / sizeof(earl_time), k = 0;
    if (t && start >= 0 && (size_t)start < n) {
        k = n - (size_t)start < room ? n - (size_t)start : room;
        memcpy(out.buf, t + start, k * sizeof *t);
    }
    PyBuffer_Release(&out);
    return PyLong_FromSize_t(k);
}

static void ghosts_free(void *g)
{
    earl_ghosts_free(g);
    free(g);
}

/* The packed ghosts as (offsets, records): read-only buffers over the C
 * result (n_parts + 1 uint64 and the earl_ghost records as bytes), which
 * they take over (*g is emptied); NULL on failure (g freed). */
static PyObject *ghosts_tuple(earl_ghosts *g)
{
    earl_ghosts *own = malloc(sizeof *own);
    if (!own) {
        earl_ghosts_free(g);
        return PyErr_NoMemory();
    }
    *own = *g;
    memset(g, 0, sizeof *g);
    PyObject *owner = earlc_owner_new(own, ghosts_free);
    if (!owner)
        return NULL;
    PyObject *r = Py_BuildValue(
        "(NN)", earlc_column_new(owner, own->offset, own->n_parts + 1, sizeof(size_t), "Q"),
        earlc_column_new(owner, own->records, own->offset[own->n_parts] * sizeof(earl_ghost), 1,
                         "B"));
    Py_DECREF(owner);
    return r;
}

static void packed_ghosts_free(void *g)
{
    earl_packed_ghosts_free(g);
    free(g);
}

/* The ghosts packed narrow as (counts, offsets, bytes): read-only buffers
 * over the C result (n_parts + 1 uint64 twice, the packed bytes), which
 * they take over (*g is emptied); NULL on failure (g freed). */
static PyObject *packed_ghosts_tuple(earl_packed_ghosts *g)
{
    earl_packed_ghosts *own = malloc(sizeof *own);
    if (!own) {
        earl_packed_ghosts_free(g);
        return PyErr_NoMemory();
    }
    *own = *g;
    memset(g, 0, sizeof *g);
    PyObject *owner = earlc_owner_new(own, packed_ghosts_free);
    if (!owner)
        return NULL;
    size_t n = own->n_parts + 1;
    PyObject *r = Py_BuildValue(
        "(NNN)", earlc_column_new(owner, own->count, n, sizeof(size_t), "Q"),
        earlc_column_new(owner, own->offset, n, sizeof(size_t), "Q"),
        earlc_column_new(owner, own->bytes, own->offset[own->n_parts], 1, "B"));
    Py_DECREF(owner);
    return r;
}

/* export(part_of, n_parts, self, members=False, packed=False) -> (offsets,
 * records), or with packed (counts, offsets, bytes: each part's records
 * packed narrow, earl_part_export_packed); with members, the
 * earl_coll_member rows as bytes at the end of the tuple.  Buffers over
 * the C result. */
static PyObject *reading_export(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"part_of", "n_parts", "self", "members", "packed", NULL};
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    PyObject *part_obj;
    Py_ssize_t n_parts;
    int me, want_members = 0, packed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oni|pp", kwlist, &part_obj, &n_parts, &me,
                                     &want_members, &packed))
        return NULL;
    earlc_buffers held = {0};
    size_t n = earl_reading_defs(rd)->n_locations;
    const int32_t *part_of = earlc_buffer_array(&held, part_obj, 'i', 0, &n, "part_of");
    if (!part_of)
        return NULL;
    earl_ghosts out;
    earl_packed_ghosts narrow;
    earl_coll_member *members = NULL;
    size_t n_members = 0;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    if (packed)
        st = earl_part_export_packed(rd, part_of, (size_t)n_parts, me,
                                     want_members ? &members : NULL, &n_members, &narrow, &err);
    else
        st = earl_part_export(rd, part_of, (size_t)n_parts, me, want_members ? &members : NULL,
                              &n_members, &out, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    if (st != EARL_OK)
        return earlc_raise(&err);
    PyObject *ghosts = packed ? packed_ghosts_tuple(&narrow) : ghosts_tuple(&out);
    if (!ghosts || !want_members) {
        free(members);
        return ghosts;
    }
    void *rows = members ? (void *)members : malloc(1); /* a buffer even when empty */
    PyObject *owner = rows ? earlc_owner_new(rows, free) : PyErr_NoMemory();
    PyObject *m = owner ? earlc_column_new(owner, rows, n_members * sizeof *members, 1, "B")
                        : NULL;
    Py_XDECREF(owner);
    if (!m) {
        Py_DECREF(ghosts);
        return NULL;
    }
    PyObject *tail = Py_BuildValue("(N)", m);
    PyObject *result = tail ? PySequence_Concat(ghosts, tail) : NULL;
    Py_XDECREF(tail);
    Py_DECREF(ghosts);
    return result;
}

/* Whether buf holds whole records of `size` bytes; else a ValueError naming
 * them (`what`), with buf released. */
static int whole_records(Py_buffer *buf, size_t size, const char *what)
{
    if (buf->len % (Py_ssize_t)size == 0)
        return 1;
    PyErr_Format(PyExc_ValueError, "%s come in %zu bytes each, not %zd bytes in all", what,
                 size, buf->len);
    PyBuffer_Release(buf);
    return 0;
}

/* A malloc'd C result of `bytes` bytes handed to Python as a byte buffer
 * (freed with the last view). */
static PyObject *malloced_bytes(void *data, size_t bytes)
{
    PyObject *owner = earlc_owner_new(data, free);
    if (!owner)
        return NULL;
    PyObject *r = earlc_column_new(owner, data, bytes, 1, "B");
    Py_DECREF(owner);
    return r;
}

/* representatives(members, part_of, n_parts, flags=0) -> (offsets, records):
 * the collective ghosts of every part from the members of whole instances
 * (flags: EARL_REPRESENT_*, what more to choose) */
static PyObject *reading_representatives(PyObject *self, PyObject *args)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    PyObject *members_obj, *part_obj;
    Py_ssize_t n_parts;
    unsigned int flags = 0;
    if (!PyArg_ParseTuple(args, "OOn|I", &members_obj, &part_obj, &n_parts, &flags))
        return NULL;
    Py_buffer mb;
    if (PyObject_GetBuffer(members_obj, &mb, PyBUF_SIMPLE) != 0)
        return NULL;
    if (!whole_records(&mb, sizeof(earl_coll_member), "collective members"))
        return NULL;
    earlc_buffers held = {0};
    size_t n = earl_reading_defs(rd)->n_locations;
    const int32_t *part_of = earlc_buffer_array(&held, part_obj, 'i', 0, &n, "part_of");
    if (!part_of) {
        PyBuffer_Release(&mb);
        return NULL;
    }
    earl_ghosts out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_part_represent(earl_reading_defs(rd), mb.buf,
                             (size_t)mb.len / sizeof(earl_coll_member), part_of,
                             (size_t)n_parts, flags, &out, &err);
    Py_END_ALLOW_THREADS
    earlc_buffers_release(&held);
    PyBuffer_Release(&mb);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return ghosts_tuple(&out);
}

/* add_ghosts(records): earl_ghost records as bytes (or any buffer) */
static PyObject *reading_add_ghosts(PyObject *self, PyObject *arg)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    if (!whole_records(&buf, sizeof(earl_ghost), "ghost records"))
        return NULL;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_part_add_ghosts(rd, buf.buf, (size_t)buf.len / sizeof(earl_ghost), &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

/* Runs of packed ghosts from a byte buffer and a table of int64 rows
 * (location, offset, size, records), each run checked to lie in the bytes;
 * NULL with ValueError otherwise (or MemoryError). */
static earl_packed_run *packed_runs(const uint8_t *bytes, size_t size, const int64_t *rows,
                                    size_t n, const char *what)
{
    earl_packed_run *runs = calloc(n ? n : 1, sizeof *runs);
    if (!runs)
        return (earl_packed_run *)PyErr_NoMemory();
    for (size_t r = 0; r < n; r++) {
        const int64_t *row = rows + 4 * r;
        if (row[1] < 0 || row[2] < 0 || row[3] < 0 || (uint64_t)row[1] > size ||
            (uint64_t)row[2] > size - (uint64_t)row[1]) {
            free(runs);
            PyErr_Format(PyExc_ValueError, "add_packed: %s run %zu lies outside its %zu bytes",
                         what, r, size);
            return NULL;
        }
        runs[r] = (earl_packed_run){bytes + row[1], (size_t)row[2], (size_t)row[3],
                                    (int32_t)row[0]};
    }
    return runs;
}

/* add_packed(ghosts, ghost_runs, reps, rep_runs, fold) -> (locations, offsets,
 * positions, received): packed ghost runs and the representatives' runs
 * (buffers of bytes, and tables of int64 rows: location, offset, size,
 * records) unpacked, merged, folded and added (earl_part_add_packed).
 * Locations are int32, offsets and positions uint64.  Damaged packed bytes:
 * ValueError(message, run), the run counted over the ghosts' then the
 * representatives'. */
static PyObject *reading_add_packed(PyObject *self, PyObject *args)
{
    earl_reading *rd = reading_of((ReadingObject *)self);
    if (!rd)
        return NULL;
    PyObject *g_obj, *gr_obj, *r_obj, *rr_obj;
    int fold;
    if (!PyArg_ParseTuple(args, "OOOOp", &g_obj, &gr_obj, &r_obj, &rr_obj, &fold))
        return NULL;
    earlc_buffers held = {0};
    size_t g_size = (size_t)-1, r_size = (size_t)-1, g_rows = (size_t)-1, r_rows = (size_t)-1;
    const uint8_t *g_bytes = earlc_buffer_array(&held, g_obj, 'B', 0, &g_size, "ghosts");
    const int64_t *g_table = g_bytes ? earlc_buffer_array(&held, gr_obj, 'q', 0, &g_rows,
                                                          "ghost_runs") : NULL;
    const uint8_t *r_bytes = g_table ? earlc_buffer_array(&held, r_obj, 'B', 0, &r_size, "reps")
                                     : NULL;
    const int64_t *r_table = r_bytes ? earlc_buffer_array(&held, rr_obj, 'q', 0, &r_rows,
                                                          "rep_runs") : NULL;
    if (!r_table) {
        earlc_buffers_release(&held);
        return NULL;
    }
    if (g_rows % 4 || r_rows % 4) {
        earlc_buffers_release(&held);
        return PyErr_Format(PyExc_ValueError, "add_packed: run tables have 4 columns");
    }
    earl_packed_run *ghosts = packed_runs(g_bytes, g_size, g_table, g_rows / 4, "a ghost");
    earl_packed_run *reps = ghosts ? packed_runs(r_bytes, r_size, r_table, r_rows / 4,
                                                 "a representatives'") : NULL;
    if (!reps) {
        free(ghosts);
        earlc_buffers_release(&held);
        return NULL;
    }
    earl_added_ghosts added;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_part_add_packed(rd, ghosts, g_rows / 4, reps, r_rows / 4,
                              fold ? EARL_ADD_FOLD : 0, &added, &err);
    Py_END_ALLOW_THREADS
    free(ghosts);
    free(reps);
    earlc_buffers_release(&held);
    if (st != EARL_OK) {
        size_t run = added.damaged;
        earl_added_ghosts_free(&added);
        if (run == SIZE_MAX)
            return earlc_raise(&err);
        PyObject *exc_args = Py_BuildValue("(sn)", err.message, (Py_ssize_t)run);
        if (exc_args) {
            PyErr_SetObject(PyExc_ValueError, exc_args);
            Py_DECREF(exc_args);
        }
        return NULL;
    }
    PyObject *locations = PyBytes_FromStringAndSize(
        (const char *)added.location, (Py_ssize_t)(added.n_locations * sizeof(int32_t)));
    PyObject *offsets = PyBytes_FromStringAndSize(
        (const char *)added.offset, (Py_ssize_t)((added.n_locations + 1) * sizeof(size_t)));
    size_t n_positions = added.offset[added.n_locations];
    PyObject *positions = NULL;
    if (locations && offsets && !n_positions) {
        positions = PyBytes_FromStringAndSize(NULL, 0);
    } else if (locations && offsets) {
        positions = malloced_bytes(added.position, n_positions * sizeof(uint64_t));
        if (positions)
            added.position = NULL; /* the buffer owns it */
    }
    size_t received = added.received;
    earl_added_ghosts_free(&added);
    if (!positions) {
        Py_XDECREF(locations);
        Py_XDECREF(offsets);
        return NULL;
    }
    return Py_BuildValue("(NNNn)", locations, offsets, positions, (Py_ssize_t)received);
}

/* finish() -> _core.Trace; the reading is consumed */
static PyObject *reading_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    ReadingObject *r = (ReadingObject *)self;
    earl_reading *rd = reading_of(r);
    if (!rd)
        return NULL;
    r->reading = NULL;
    earl_trace *tr = NULL;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_reading_finish(rd, &tr, &err);
    Py_END_ALLOW_THREADS
    if (earlc_progress_interrupted(&r->bridge)) {
        earl_trace_close(tr);
        return NULL;
    }
    if (st != EARL_OK)
        return earlc_raise(&err);
    return earlc_trace_new(tr);
}

/* pack_ghosts(records) -> buffer: earl_ghost records (any buffer) packed
 * narrow (earl_ghosts_pack), over the C result */
static PyObject *pack_ghosts(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    if (!whole_records(&buf, sizeof(earl_ghost), "ghost records"))
        return NULL;
    uint8_t *packed = NULL;
    size_t bytes = 0;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_ghosts_pack(buf.buf, (size_t)buf.len / sizeof(earl_ghost), &packed, &bytes, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (st != EARL_OK)
        return earlc_raise(&err);
    return malloced_bytes(packed, bytes);
}

/* unpack_ghosts(packed, n) -> buffer of n earl_ghost records (earl_ghosts_unpack) */
static PyObject *unpack_ghosts(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "On", &obj, &n))
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "unpack_ghosts: %zd records", n);
    Py_buffer buf;
    if (PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    earl_ghost *records = malloc(n ? (size_t)n * sizeof *records : 1);
    if (!records) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_ghosts_unpack(buf.buf, (size_t)buf.len, records, (size_t)n, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (st != EARL_OK) {
        free(records);
        return earlc_raise(&err);
    }
    return malloced_bytes(records, (size_t)n * sizeof *records);
}

/* merge_ghosts(runs) -> buffer: runs of earl_ghost records (buffers), each
 * sorted by (location, position), merged, each event once (earl_ghosts_merge) */
static PyObject *merge_ghosts(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "merge_ghosts: a sequence of record buffers");
    if (!seq)
        return NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    Py_buffer *bufs = calloc(k ? (size_t)k : 1, sizeof *bufs);
    const earl_ghost **runs = calloc(k ? (size_t)k : 1, sizeof *runs);
    size_t *lengths = calloc(k ? (size_t)k : 1, sizeof *lengths);
    size_t *at = calloc(k ? (size_t)k : 1, sizeof *at);
    earl_ghost *out = NULL;
    PyObject *result = NULL;
    Py_ssize_t got = 0;
    size_t total = 0;
    if (!bufs || !runs || !lengths || !at) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < k; got++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &bufs[got],
                               PyBUF_SIMPLE) != 0)
            goto done;
        if (!whole_records(&bufs[got], sizeof(earl_ghost), "ghost records"))
            goto done; /* released */
        runs[got] = bufs[got].buf;
        lengths[got] = (size_t)bufs[got].len / sizeof(earl_ghost);
        total += lengths[got];
    }
    out = malloc((total ? total : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    size_t n = 0;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = earl_ghosts_merge(runs, lengths, (size_t)k, at, out, &n, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK) {
        earlc_raise(&err);
        goto done;
    }
    result = malloced_bytes(out, n * sizeof *out);
    out = NULL; /* the owner has it, or freed it */
done:
    for (Py_ssize_t i = 0; i < got; i++)
        PyBuffer_Release(&bufs[i]);
    free(bufs);
    free(runs);
    free(lengths);
    free(at);
    free(out);
    Py_DECREF(seq);
    return result;
}

/* fold_ghost_calls(records) -> buffer: a copy of the records with the
 * message calls folded (earl_part_fold_calls) */
static PyObject *fold_ghost_calls(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    if (!whole_records(&buf, sizeof(earl_ghost), "ghost records"))
        return NULL; /* released */
    size_t n = (size_t)buf.len / sizeof(earl_ghost);
    earl_ghost *out = malloc((n ? n : 1) * sizeof *out);
    if (!out) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    memcpy(out, buf.buf, n * sizeof *out);
    n = earl_part_fold_calls(out, n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return malloced_bytes(out, n * sizeof *out);
}

static PyMethodDef pack_functions[] = {
    {"pack_ghosts", pack_ghosts, METH_O, "pack_ghosts(records) -> the records packed narrow"},
    {"unpack_ghosts", unpack_ghosts, METH_VARARGS,
     "unpack_ghosts(packed, n) -> the n records packed by pack_ghosts"},
    {"merge_ghosts", merge_ghosts, METH_O,
     "merge_ghosts(runs) -> sorted runs of records merged, each event once"},
    {"fold_ghost_calls", fold_ghost_calls, METH_O,
     "fold_ghost_calls(records) -> the records with their message calls folded"},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef reading_methods[] = {
    {"n_locations", reading_n_locations, METH_NOARGS, "locations the definitions name"},
    {"definitions", reading_definitions, METH_NOARGS, "the definitions, as Trace.definitions"},
    {"read", reading_read, METH_O, "read the events of the locations in a bytes mask"},
    {"times", (PyCFunction)(void (*)(void))reading_times, METH_VARARGS | METH_KEYWORDS,
     "times(location, start=0, out=None): a read location's timestamps"},
    {"export", (PyCFunction)(void (*)(void))reading_export, METH_VARARGS | METH_KEYWORDS,
     "ghost records for each part (and the own collective members)"},
    {"representatives", reading_representatives, METH_VARARGS,
     "the collective ghosts of every part, from the members of whole instances"},
    {"add_ghosts", reading_add_ghosts, METH_O, "add ghost records of other parts"},
    {"add_packed", reading_add_packed, METH_VARARGS,
     "add packed ghost runs and representatives: unpacked, merged, folded (GIL released)"},
    {"finish", reading_finish, METH_NOARGS, "order the events: a _core.Trace"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReadingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.Reading",
    .tp_basicsize = sizeof(ReadingObject),
    .tp_dealloc = reading_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A trace read in stages (earl_reading_*, earl_part_*).",
    .tp_methods = reading_methods,
    .tp_new = reading_new,
};

int earlc_add_reading_type(PyObject *module)
{
    if (PyType_Ready(&ReadingType) < 0)
        return -1;
    Py_INCREF(&ReadingType);
    if (PyModule_AddObject(module, "Reading", (PyObject *)&ReadingType) < 0)
        return -1;
    if (PyModule_AddFunctions(module, pack_functions) < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "GHOST_RECORD_BYTES", (long)sizeof(earl_ghost)) < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "REPRESENT_DELAYERS", (long)EARL_REPRESENT_DELAYERS) < 0)
        return -1;
    return PyModule_AddIntConstant(module, "COLL_MEMBER_BYTES", (long)sizeof(earl_coll_member));
}

PyObject *earlc_outbox_tuple(earl_outbox *out)
{
    PyObject *offsets = PyBytes_FromStringAndSize((const char *)out->offset,
                                                  (Py_ssize_t)((out->n_parts + 1) * sizeof(size_t)));
    PyObject *records = PyBytes_FromStringAndSize(
        (const char *)out->records, (Py_ssize_t)(out->offset[out->n_parts] * out->record_bytes));
    earl_outbox_free(out);
    if (!offsets || !records) {
        Py_XDECREF(offsets);
        Py_XDECREF(records);
        return NULL;
    }
    return Py_BuildValue("(NN)", offsets, records);
}
