/*
 * trace.c - earl_trace_open: from a path to the complete trace model.
 *
 * Steps: find and check the anchor file (archive.c); read the global
 * definitions (defs.c); check that every event file the definitions announce
 * exists; read the locations' events (reader.c), split over threads that each
 * open their own libotf2 reader, so nothing is shared while decoding; compare
 * the records of each location with the count its definition announced (a
 * warning when they differ: the count is a hint some tracers get wrong, the
 * event file's framing says where it ends); merge into the total order
 * (order.c); gather the warnings.  The result does not depend on the number
 * of threads: each location is read by exactly one thread into its own
 * buffer, and the merge is deterministic.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* ---- parallel reading ---------------------------------------------------------- */

typedef struct read_job {
    const read_plan *plan;
    loc_events *bufs;      /* all buffers, by dense location */
    size_t *locs;          /* the dense locations of this job */
    size_t n_locs;
    loc_events *mine;      /* contiguous copies for read_locations */
    earl_status status;
    earl_error err;
} read_job;

typedef struct progress {
    earl_progress_fn fn;
    void *data;
    uint64_t total;
    _Atomic uint64_t done;
    pthread_mutex_t lock;
} progress;

static void report_progress(void *p, uint64_t got)
{
    progress *pr = p;
    uint64_t done = atomic_fetch_add(&pr->done, got) + got;
    if (pr->fn && pthread_mutex_trylock(&pr->lock) == 0) {
        pr->fn(pr->data, "reading", done < pr->total ? done : pr->total, pr->total);
        pthread_mutex_unlock(&pr->lock);
    }
}

static void read_job_locations(read_job *job)
{
    const char *anchor = job->plan->anchor;
    const defs_store *defs = job->plan->defs;
    OTF2_Reader *r = NULL;
    job->status = earl_archive_open_reader(anchor, &r, &job->err);
    if (job->status != EARL_OK)
        return;
    for (size_t k = 0; k < job->n_locs; k++)
        OTF2_Reader_SelectLocation(r, defs->locations[job->locs[k]].id);
    /* local definition files are optional; they carry mapping tables and
     * clock corrections that libotf2 applies to the events */
    int have_defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    if (OTF2_Reader_OpenEvtFiles(r) != OTF2_SUCCESS) {
        job->status = earl_fail(&job->err, EARL_ERR_CORRUPT, "%s: cannot open the event files: %s",
                                anchor, earl_otf2_last_message());
        OTF2_Reader_Close(r);
        return;
    }
    for (size_t k = 0; k < job->n_locs && have_defs; k++) {
        uint64_t id = defs->locations[job->locs[k]].id;
        OTF2_DefReader *dr = OTF2_Reader_GetDefReader(r, id);
        if (dr) {
            uint64_t n = 0;
            if (OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n) != OTF2_SUCCESS) {
                job->status = earl_fail(&job->err, EARL_ERR_CORRUPT,
                                        "%s: the local definitions of location %llu cannot be "
                                        "decoded: %s", anchor, (unsigned long long)id,
                                        earl_otf2_last_message());
                break;
            }
            OTF2_Reader_CloseDefReader(r, dr);
        }
    }
    if (have_defs)
        OTF2_Reader_CloseDefFiles(r);
    if (job->status == EARL_OK) {
        for (size_t k = 0; k < job->n_locs; k++)
            job->mine[k] = job->bufs[job->locs[k]];
        job->status = read_locations(r, job->plan, job->mine, job->n_locs, &job->err);
        for (size_t k = 0; k < job->n_locs; k++)
            job->bufs[job->locs[k]] = job->mine[k];
    }
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
}

static void *run_job(void *arg)
{
    read_job *job = arg;
    read_job_locations(job);
    /* libotf2's buffers, no fault of the archive */
    job->status = earl_otf2_blame_memory(&job->err, job->status);
    return NULL;
}

/* Largest event file first: its bytes are the work of reading it (the
 * announced count may be wrong). */
static int by_bytes_desc(const void *a, const void *b, void *bytes)
{
    const uint64_t *w = bytes;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (w[x] != w[y])
        return w[x] > w[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Read every location, in n_threads threads.  Locations are dealt out
 * largest first to the least loaded thread, which balances events. */
static earl_status read_all(const read_plan *plan, loc_events *bufs, int n_threads,
                            earl_error *err)
{
    const char *anchor = plan->anchor;
    const defs_store *defs = plan->defs;
    size_t n = 0; /* the locations to read: all, or a part's own */
    for (size_t l = 0; l < defs->n_locations; l++)
        n += defs->locations[l].held == EARL_HELD_ALL;
    if (n == 0)
        return EARL_OK;
    n_threads = earl_threads_or_cores(n_threads);
    if ((size_t)n_threads > n)
        n_threads = (int)n;
    size_t *order = malloc(n * sizeof *order);
    size_t *assigned = malloc(n * sizeof *assigned);
    loc_events *scratch = loc_events_alloc(n);
    read_job *jobs = calloc((size_t)n_threads, sizeof *jobs);
    uint64_t *load = calloc((size_t)n_threads, sizeof *load);
    earl_status st = EARL_OK;
    if (!order || !assigned || !scratch || !jobs || !load) {
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
        goto done;
    }
    for (size_t l = 0, i = 0; l < defs->n_locations; l++)
        if (defs->locations[l].held == EARL_HELD_ALL)
            order[i++] = l;
    qsort_r(order, n, sizeof *order, by_bytes_desc, (void *)plan->file_bytes);
    /* count per thread, then lay the assignments out contiguously */
    size_t *count = calloc((size_t)n_threads, sizeof *count);
    int *owner = malloc(n * sizeof *owner);
    if (!count || !owner) {
        free(count); free(owner);
        st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        int best = 0;
        for (int t = 1; t < n_threads; t++)
            if (load[t] < load[best])
                best = t;
        owner[i] = best;
        load[best] += plan->file_bytes[order[i]] + 1;
        count[best]++;
    }
    size_t at = 0;
    for (int t = 0; t < n_threads; t++) {
        jobs[t] = (read_job){plan, bufs, assigned + at, 0, scratch + at, EARL_OK, {0}};
        at += count[t];
    }
    for (size_t i = 0; i < n; i++)
        jobs[owner[i]].locs[jobs[owner[i]].n_locs++] = order[i];
    free(count);
    free(owner);

    earl_parts_run(run_job, jobs, sizeof *jobs, (size_t)n_threads);
    /* report the first failure in location order, independent of timing */
    for (int t = 0; st == EARL_OK && t < n_threads; t++)
        if (jobs[t].status != EARL_OK) {
            if (err)
                *err = jobs[t].err;
            st = jobs[t].status;
        }
done:
    free(order); free(assigned); free(scratch); free(jobs); free(load);
    return st;
}

/* Record what each location yielded.  A count other than its definition's
 * is a warning, not an error: the count is a hint some tracers get wrong
 * (APEX writes one count for every location), and the event file's own
 * framing, which libotf2 checks, says where it ends.  A salvaged location
 * has its own warning, which says what was lost. */
static void count_records(defs_store *defs, loc_events *bufs)
{
    for (size_t i = 0; i < defs->n_locations; i++) {
        earl_location *l = &defs->locations[i];
        if (l->held != EARL_HELD_ALL)
            continue; /* not read: none, or a part's ghosts (csrc/part/) */
        uint64_t other = 0;
        for (int k = 0; k < OTHER_RECORD_COUNT; k++)
            other += bufs[i].other[k];
        l->events = bufs[i].n;
        l->other_records = other;
        if (l->events + other != l->declared_events && !bufs[i].salvaged)
            warning_add(&bufs[i].warnings, EARL_WARN_EVENT_COUNT_MISMATCH, (earl_loc)i,
                        bufs[i].n, "the definitions announce %llu records, the event file "
                        "holds %llu", (unsigned long long)l->declared_events,
                        (unsigned long long)(l->events + other));
    }
}

/* An archive without a time scale: 1 ns a tick, from its first event to its
 * last (defs.c set the resolution). */
static void clock_fallback(earl_trace *tr)
{
    earl_clock *c = &tr->defs.view.clock;
    size_t n = tr->view.count;
    c->global_offset = n ? tr->time[0] : 0;
    c->length = n ? tr->time[n - 1] - tr->time[0] : 0;
    warning_add(&tr->warnings, EARL_WARN_CLOCK_PROPERTIES_MISSING, EARL_NONE, 0,
                "no ClockProperties: ticks taken as ns, the first event as the start");
}

/* Gather the per-location warnings in location order and attach event ids. */
static earl_status gather_warnings(earl_trace *tr, loc_events *bufs, size_t n_locs,
                                   earl_error *err)
{
    warning_list *w = &tr->warnings;
    size_t total = w->n; /* the trace's own come first */
    for (size_t l = 0; l < n_locs; l++)
        total += bufs[l].warnings.n;
    if (total && EARL_GROW(w->items, w->cap, total) != 0)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", tr->anchor);
    for (size_t l = 0; l < n_locs; l++) {
        const warning_list *lw = &bufs[l].warnings;
        for (int c = 0; c < EARL_WARNING_CODE_COUNT; c++)
            w->counts[c] += lw->counts[c];
        for (size_t i = 0; i < lw->n; i++) {
            earl_warning it = lw->items[i];
            if (it.position < bufs[l].n)
                it.event = tr->loc_events[tr->loc_start[l] + it.position];
            /* keep the per-code detail limit over the whole trace */
            size_t same = 0;
            for (size_t j = 0; j < w->n; j++)
                same += w->items[j].code == it.code;
            if (same < EARL_WARNING_DETAIL_MAX)
                w->items[w->n++] = it;
        }
        for (int k = 0; k < OTHER_RECORD_COUNT; k++)
            tr->other_counts[k] += bufs[l].other[k];
    }
    /* records not kept are reported per type, and once as a warning code */
    size_t n_types = 0;
    for (int k = 0; k < OTHER_RECORD_COUNT; k++) {
        if (!tr->other_counts[k])
            continue;
        tr->other_names[n_types] = other_record_names[k];
        tr->other_counts[n_types] = tr->other_counts[k];
        w->counts[EARL_WARN_OTHER_RECORD] += tr->other_counts[k];
        n_types++;
    }
    for (size_t k = n_types; k < OTHER_RECORD_COUNT; k++)
        tr->other_counts[k] = 0;
    earl_warnings *v = &tr->warnings_view;
    memcpy(v->counts, w->counts, sizeof v->counts);
    v->n_details = w->n;
    v->details = w->items;
    v->n_other_types = n_types;
    v->other_type_names = tr->other_names;
    v->other_type_counts = tr->other_counts;
    return EARL_OK;
}

static void fill_view(earl_trace *tr)
{
    earl_events *v = &tr->view;
    v->time = tr->time;
    v->location = tr->location;
    v->kind = tr->kind;
    v->payload = tr->payload;
    v->region = tr->payload;
    v->ref = (const int32_t *)tr->payload; /* signed and unsigned may alias */
    v->loc_start = tr->loc_start;
    v->loc_events = tr->loc_events;
    v->msg = tr->tables.msg;
    v->coll = tr->tables.coll;
    v->sync = tr->tables.sync;
    v->program = tr->tables.program;
    v->metric = tr->tables.metric;
    v->rma = tr->tables.rma;
    /* count and kind_counts were filled by order_events */
}

/* ---- the stages of an open ----------------------------------------------------- */

/* A trace between its stages: definitions read, then the events of some or
 * all locations in their reading buffers, then (for a part of a trace) the
 * ghost events of other locations added (csrc/part/), then ordered. */
struct earl_reading {
    earl_trace *tr;         /* anchor and definitions; the store once ordered */
    loc_events *bufs;       /* one per location, by dense index */
    size_t n_locs;
    reading_columns columns;
    uint64_t *file_bytes;   /* event file size by dense location */
    progress pr;
    int threads;            /* as asked: 0 for one per core */
    int salvage;
    int events_read;
    /* ghost collective ends' (seq, members), by location and index there,
     * until the finish knows their rows (reading_note_ghost_coll) */
    struct coll_note { earl_loc loc; uint32_t seq, members; size_t index; } *notes;
    size_t n_notes, cap_notes;
};

earl_status earl_reading_open(const char *path, const earl_open_options *options,
                              earl_reading **out, earl_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, earl_otf2_install_error_handler);
    if (err) {
        err->code = EARL_OK;
        err->message[0] = '\0';
    }
    if (!out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_reading_open: no output handle");
    *out = NULL;
    earl_open_options defaults = {0};
    if (!options)
        options = &defaults;
    earl_reading *r = calloc(1, sizeof *r);
    earl_trace *tr = r ? calloc(1, sizeof *tr) : NULL;
    if (!tr) {
        free(r);
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path ? path : "");
    }
    r->tr = tr;
    r->threads = options->threads;
    r->salvage = options->salvage;
    r->pr = (progress){options->progress, options->progress_data, 0, 0,
                       PTHREAD_MUTEX_INITIALIZER};
    earl_status st = earl_archive_find_anchor(path, &tr->anchor, err);
    OTF2_Reader *reader = NULL;
    if (st == EARL_OK)
        st = earl_archive_check_anchor(tr->anchor, err);
    /* libotf2 reads past the end of a damaged definition or event file into
     * its chunk buffer's uninitialised tail, and whether it then stops depends
     * on what that memory held before (a trace opened earlier in the process):
     * it was seen to loop for good.  Zero-filled allocations make the outcome
     * the one of a fresh process (an error).  Only while libotf2 reads: its
     * buffers are the only large malloc'd blocks then (earlc's columns come
     * from earl_mem), so the fill costs little. */
    mallopt(M_PERTURB, 0xff);
    if (st == EARL_OK)
        st = earl_archive_open_reader(tr->anchor, &reader, err);
    if (st == EARL_OK) {
        st = defs_read(&tr->defs, reader, tr->anchor, err);
        OTF2_Reader_Close(reader);
    }
    st = earl_otf2_blame_memory(err, st); /* libotf2's buffers, no fault of the archive */
    mallopt(M_PERTURB, 0);
    if (st == EARL_OK) {
        r->n_locs = tr->defs.n_locations;
        r->bufs = loc_events_alloc(r->n_locs);
        if (!r->bufs)
            st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", tr->anchor);
        for (size_t l = 0; r->bufs && l < r->n_locs; l++)
            r->bufs[l].loc = (earl_loc)l;
    }
    if (st != EARL_OK) {
        earl_reading_free(r);
        return st;
    }
    *out = r;
    return EARL_OK;
}

const earl_defs *earl_reading_defs(const earl_reading *r) { return &r->tr->defs.view; }
const char *earl_reading_path(const earl_reading *r) { return r->tr->anchor; }

/* A location that the definitions announce but that is not read holds no
 * events: EARL_HELD_NONE, until a part adds its ghosts. */
static void mark_held(earl_reading *r, const uint8_t *locations)
{
    for (size_t l = 0; l < r->n_locs; l++)
        r->tr->defs.locations[l].held =
            !locations || locations[l] ? EARL_HELD_ALL : EARL_HELD_NONE;
}

earl_status earl_reading_read(earl_reading *r, const uint8_t *locations, earl_error *err)
{
    if (!r || r->events_read)
        return earl_fail(err, EARL_ERR_INVALID, "earl_reading_read: %s",
                         r ? "the events were read already" : "no reading");
    earl_trace *tr = r->tr;
    r->events_read = 1;
    mark_held(r, locations);
    size_t n_locs = r->n_locs;
    r->file_bytes = calloc(n_locs ? n_locs : 1, sizeof *r->file_bytes);
    earl_status st = r->file_bytes
        ? earl_archive_check_event_files(tr->anchor, tr->defs.locations, n_locs, r->salvage,
                                         r->file_bytes, err)
        : earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", tr->anchor);
    if (st != EARL_OK)
        return st;
    read_plan plan = {tr->anchor, &tr->defs, r->file_bytes, r->salvage, report_progress, &r->pr};
    size_t *first_slot = malloc((n_locs + 1) * sizeof *first_slot);
    if (first_slot && reading_columns_alloc(&r->columns, &plan, first_slot) == 0) {
        for (size_t l = 0; l < n_locs; l++) {
            size_t end = l + 1 < n_locs ? first_slot[l + 1] : r->columns.slots;
            loc_events_use_shared(&r->bufs[l], &r->columns, first_slot[l], end - first_slot[l]);
        }
    }
    free(first_slot);
    for (size_t l = 0; l < n_locs; l++)
        r->pr.total += reading_slots(&plan, l);
    mallopt(M_PERTURB, 0xff);
    st = read_all(&plan, r->bufs, r->threads, err);
    mallopt(M_PERTURB, 0);
    /* the threads' reports skip a busy callback: the last one may be lost */
    if (st == EARL_OK && r->pr.fn) {
        uint64_t done = atomic_load(&r->pr.done);
        r->pr.fn(r->pr.data, "reading", done < r->pr.total ? done : r->pr.total, r->pr.total);
    }
    if (st == EARL_OK)
        count_records(&tr->defs, r->bufs);
    return st;
}

const earl_time *earl_reading_times(const earl_reading *r, size_t l, size_t *n)
{
    *n = 0;
    if (!r || !r->events_read || l >= r->n_locs ||
        r->tr->defs.locations[l].held != EARL_HELD_ALL)
        return NULL;
    *n = r->bufs[l].n;
    return r->bufs[l].time;
}

loc_events *reading_buffers(earl_reading *r, const defs_store **defs, size_t *n_locs)
{
    if (defs)
        *defs = &r->tr->defs;
    if (n_locs)
        *n_locs = r->n_locs;
    return r->bufs;
}

int reading_note_ghost_coll(earl_reading *r, earl_loc loc, size_t index, uint32_t seq,
                            uint32_t members)
{
    if (r->n_notes == r->cap_notes && EARL_GROW(r->notes, r->cap_notes, r->n_notes + 1) != 0)
        return -1;
    r->notes[r->n_notes++] = (struct coll_note){loc, seq, members, index};
    return 0;
}

/* The ghost collective ends' notes as the collective table's part columns,
 * once the merge gave every event its id and row. */
static earl_status apply_coll_notes(earl_trace *tr, const struct coll_note *notes, size_t n,
                                    earl_error *err)
{
    earl_coll_table *c = &tr->tables.coll;
    size_t rows = c->count ? c->count : 1;
    c->part_seq = calloc(rows, sizeof *c->part_seq);
    c->part_members = calloc(rows, sizeof *c->part_members);
    if (!c->part_seq || !c->part_members)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", tr->anchor);
    for (size_t k = 0; k < n; k++) {
        earl_eid32 e = tr->loc_events[tr->loc_start[notes[k].loc] + notes[k].index];
        uint32_t row = tr->payload[e];
        if (tr->kind[e] != EARL_MPI_COLLECTIVE_END || row >= c->count)
            continue;
        c->part_seq[row] = notes[k].seq;
        c->part_members[row] = notes[k].members;
    }
    return EARL_OK;
}

earl_status earl_reading_finish(earl_reading *r, earl_trace **out, earl_error *err)
{
    if (!out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_reading_finish: no output handle");
    *out = NULL;
    if (!r || !r->events_read) {
        earl_status st = earl_fail(err, EARL_ERR_INVALID,
                                   "earl_reading_finish: the events were not read");
        earl_reading_free(r);
        return st;
    }
    earl_trace *tr = r->tr;
    if (r->pr.fn)
        r->pr.fn(r->pr.data, "ordering", 0, 1);
    earl_status st = order_events(tr, r->bufs, r->n_locs,
                                  earl_threads_or_cores(r->threads), err);
    if (st == EARL_OK && tr->defs.clock_missing)
        clock_fallback(tr);
    if (st == EARL_OK)
        st = gather_warnings(tr, r->bufs, r->n_locs, err);
    if (st == EARL_OK && r->n_notes)
        st = apply_coll_notes(tr, r->notes, r->n_notes, err);
    if (st == EARL_OK) {
        fill_view(tr);
        r->tr = NULL; /* the caller's now */
        if (r->pr.fn)
            r->pr.fn(r->pr.data, "done", 1, 1);
        *out = tr;
    }
    earl_reading_free(r);
    return st;
}

void earl_reading_free(earl_reading *r)
{
    if (!r)
        return;
    for (size_t l = 0; l < r->n_locs && r->bufs; l++)
        loc_events_free(&r->bufs[l]);
    free(r->bufs);
    free(r->file_bytes);
    free(r->notes);
    reading_columns_free(&r->columns);
    /* what the reading left in malloc's heap (small locations' side tables,
     * region stacks, request maps) goes back to the system too */
    malloc_trim(0);
    earl_trace_close(r->tr);
    free(r);
}

earl_status earl_trace_open(const char *path, const earl_open_options *options,
                            earl_trace **out, earl_error *err)
{
    if (!out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_trace_open: no output handle");
    *out = NULL;
    earl_reading *r = NULL;
    earl_status st = earl_reading_open(path, options, &r, err);
    if (st == EARL_OK)
        st = earl_reading_read(r, options ? options->locations : NULL, err);
    if (st != EARL_OK) {
        earl_reading_free(r);
        return st;
    }
    return earl_reading_finish(r, out, err);
}

void trace_store_free(earl_trace *tr)
{
    earl_mem_free(tr->time); earl_mem_free(tr->location); earl_mem_free(tr->kind);
    earl_mem_free(tr->payload); earl_mem_free(tr->loc_events);
    free(tr->loc_start);
    tr->time = NULL; tr->location = NULL; tr->kind = NULL; tr->payload = NULL;
    tr->loc_events = NULL; tr->loc_start = NULL;
    free(tr->tables.coll.part_seq);
    free(tr->tables.coll.part_members);
    tr->tables.coll.part_seq = tr->tables.coll.part_members = NULL;
    side_tables_free(&tr->tables);
}

void earl_trace_close(earl_trace *tr)
{
    if (!tr)
        return;
    defs_free(&tr->defs);
    trace_store_free(tr);
    warning_list_free(&tr->warnings);
    free(tr->anchor);
    free(tr);
}

const char *earl_trace_path(const earl_trace *tr) { return tr->anchor; }
const earl_defs *earl_trace_defs(const earl_trace *tr) { return &tr->defs.view; }
const earl_events *earl_trace_events(const earl_trace *tr) { return &tr->view; }
const earl_warnings *earl_trace_warnings(const earl_trace *tr) { return &tr->warnings_view; }

const char *earl_trace_string(const earl_trace *tr, uint32_t ref)
{
    const earl_string_table *s = &tr->defs.view.strings;
    return ref < s->count ? s->text[ref] : "";
}

size_t earl_trace_event_bytes(const earl_trace *tr, size_t *core_bytes)
{
    size_t n = tr->view.count;
    size_t core = n * (sizeof *tr->time + sizeof *tr->location + sizeof *tr->kind +
                       sizeof *tr->payload + sizeof *tr->loc_events) +
                  (tr->defs.n_locations + 1) * sizeof(size_t);
    if (core_bytes)
        *core_bytes = core;
    size_t side = 0;
    side_tables *t = (side_tables *)&tr->tables;
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        earl_colset s;
        side_tables_columns(t, (earl_family)f, &s);
        size_t rows = *side_tables_count(t, (earl_family)f);
        for (int c = 0; c < s.n; c++)
            side += rows * s.col[c].width;
    }
    side += t->metric.n_values * 9;
    return core + side;
}
