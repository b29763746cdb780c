/*
 * trace.c - earl_trace_open: from a path to the complete trace model.
 *
 * Steps: find the anchor file; read the global definitions (defs.c); check
 * that every event file the definitions announce exists; read the locations'
 * events (reader.c), split over threads that each open their own libotf2
 * reader, so nothing is shared while decoding; check that each location
 * yielded the records its definition announced; merge into the total order
 * (order.c); gather the warnings.  The result does not depend on the number
 * of threads: each location is read by exactly one thread into its own
 * buffer, and the merge is deterministic.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* ---- locating the archive ---------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The anchor file for path: path itself, or DIR/traces.otf2. */
static earl_status find_anchor(const char *path, char **anchor, earl_error *err)
{
    struct stat s;
    if (!path || !*path)
        return earl_fail(err, EARL_ERR_INVALID, "no trace path given");
    if (stat(path, &s) != 0)
        return earl_fail(err, errno == ENOENT ? EARL_ERR_NOT_FOUND : EARL_ERR_IO,
                         "%s: %s", path, strerror(errno));
    if (S_ISDIR(s.st_mode)) {
        size_t n = strlen(path) + sizeof "/traces.otf2";
        char *a = malloc(n);
        if (!a)
            return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path);
        snprintf(a, n, "%s/traces.otf2", path);
        if (stat(a, &s) != 0 || !S_ISREG(s.st_mode)) {
            free(a);
            return earl_fail(err, EARL_ERR_NOT_ARCHIVE,
                             "%s: not an OTF2 archive (the folder holds no traces.otf2 anchor file)",
                             path);
        }
        *anchor = a;
        return EARL_OK;
    }
    if (!ends_with(path, ".otf2"))
        return earl_fail(err, EARL_ERR_NOT_ARCHIVE,
                         "%s: not an OTF2 archive (expected an anchor file ending in .otf2 or "
                         "the folder that holds one)", path);
    *anchor = earl_strdup(path);
    return *anchor ? EARL_OK : earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path);
}

/* The folder of the event files: the anchor path without ".otf2". */
static char *event_folder(const char *anchor)
{
    char *d = earl_strdup(anchor);
    if (d)
        d[strlen(d) - strlen(".otf2")] = '\0';
    return d;
}

void archive_def_file(const char *anchor, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s.def", (int)(strlen(anchor) - strlen(".otf2")), anchor);
}

void archive_event_file(const char *anchor, uint64_t location_id, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s/%llu.evt", (int)(strlen(anchor) - strlen(".otf2")), anchor,
             (unsigned long long)location_id);
}

/* An archive may have been written by the SION substrate, or its global
 * definitions may be missing: libotf2 answers those with an error; here we
 * only check what can be named precisely, the POSIX event files. */
static earl_status check_event_files(const char *anchor, const defs_store *defs,
                                     earl_error *err)
{
    char *folder = event_folder(anchor);
    if (!folder)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
    earl_status st = EARL_OK;
    if (!is_dir(folder)) {
        st = earl_fail(err, EARL_ERR_MISSING_FILE,
                       "%s: the event folder %s/ of the archive is missing", anchor, folder);
    }
    for (size_t i = 0; st == EARL_OK && i < defs->n_locations; i++) {
        const earl_location *l = &defs->locations[i];
        if (l->declared_events == 0)
            continue;
        char file[4096];
        archive_event_file(anchor, l->id, file, sizeof file);
        struct stat s;
        if (stat(file, &s) != 0)
            st = earl_fail(err, EARL_ERR_MISSING_FILE,
                           "%s: the event file %s of location %llu is missing (%llu events "
                           "announced)", anchor, file, (unsigned long long)l->id,
                           (unsigned long long)l->declared_events);
        else if (s.st_size == 0)
            st = earl_fail(err, EARL_ERR_CORRUPT,
                           "%s: the event file %s of location %llu is empty (%llu events "
                           "announced)", anchor, file, (unsigned long long)l->id,
                           (unsigned long long)l->declared_events);
    }
    free(folder);
    return st;
}

/* ---- parallel reading ---------------------------------------------------------- */

typedef struct read_job {
    const char *anchor;
    const defs_store *defs;
    loc_events *bufs;      /* all buffers, by dense location */
    size_t *locs;          /* the dense locations of this job */
    size_t n_locs;
    loc_events *mine;      /* contiguous copies for read_locations */
    earl_status status;
    earl_error err;
    struct progress *progress;
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

/* The anchor's layout up to its property count, as libotf2 reads it: chunk
 * header and endianness bytes, "OTF2\0", the anchor format, 38 bytes of fixed
 * fields (trace format, version, chunk sizes, substrate, compression, counts),
 * machine, creator and description as NUL-terminated strings, then (format 2
 * and later) a 32-bit property count.  libotf2 trusts that count and reads that
 * many string pairs past the end of a damaged file, which can take hours; each
 * pair needs at least two bytes, so a count above half the bytes left is
 * corrupt. */
static earl_status check_anchor(const char *anchor, earl_error *err)
{
    FILE *f = fopen(anchor, "rb");
    if (!f)
        return EARL_OK; /* libotf2 reports what is wrong with it */
    unsigned char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 8 + 38 || memcmp(buf + 2, "OTF2", 5) != 0 || buf[7] < 2)
        return EARL_OK;
    /* the byte order: the one under which the event chunk size is sensible */
    uint64_t le = 0, be = 0;
    for (int i = 0; i < 8; i++) {
        le |= (uint64_t)buf[12 + i] << (8 * i);
        be = (be << 8) | buf[12 + i];
    }
    int little = le > 0 && le <= ((uint64_t)1 << 40);
    (void)be;
    size_t pos = 8 + 38;
    for (int s = 0; s < 3; s++) {
        unsigned char *end = memchr(buf + pos, 0, n - pos);
        if (!end)
            return earl_fail(err, EARL_ERR_CORRUPT,
                             "%s: the anchor file is corrupt or truncated (its strings end "
                             "nowhere)", anchor);
        pos = (size_t)(end - buf) + 1;
    }
    if (n - pos < 4)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the anchor file is truncated (no property count)", anchor);
    uint32_t count = 0;
    for (int i = 0; i < 4; i++)
        count = little ? count | (uint32_t)buf[pos + i] << (8 * i)
                       : (count << 8) | buf[pos + i];
    size_t left = n - pos - 4;
    if (count > left / 2)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the anchor file is corrupt: it announces %u properties in %zu "
                         "bytes", anchor, count, left);
    return EARL_OK;
}

static earl_status open_reader(const char *anchor, OTF2_Reader **out, earl_error *err)
{
    earl_otf2_clear_message();
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    if (!r)
        return earl_fail(err, EARL_ERR_NOT_ARCHIVE, "%s: not an OTF2 archive (%s)", anchor,
                         earl_otf2_last_message()[0] ? earl_otf2_last_message()
                                                     : "libotf2 cannot open the anchor file");
    if (OTF2_Reader_SetSerialCollectiveCallbacks(r) != OTF2_SUCCESS) {
        OTF2_Reader_Close(r);
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: cannot set up reading: %s", anchor,
                         earl_otf2_last_message());
    }
    *out = r;
    return EARL_OK;
}

static void read_job_locations(read_job *job)
{
    OTF2_Reader *r = NULL;
    job->status = open_reader(job->anchor, &r, &job->err);
    if (job->status != EARL_OK)
        return;
    for (size_t k = 0; k < job->n_locs; k++)
        OTF2_Reader_SelectLocation(r, job->defs->locations[job->locs[k]].id);
    /* local definition files are optional; they carry mapping tables and
     * clock corrections that libotf2 applies to the events */
    int have_defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    if (OTF2_Reader_OpenEvtFiles(r) != OTF2_SUCCESS) {
        job->status = earl_fail(&job->err, EARL_ERR_CORRUPT, "%s: cannot open the event files: %s",
                                job->anchor, earl_otf2_last_message());
        OTF2_Reader_Close(r);
        return;
    }
    for (size_t k = 0; k < job->n_locs && have_defs; k++) {
        uint64_t id = job->defs->locations[job->locs[k]].id;
        OTF2_DefReader *dr = OTF2_Reader_GetDefReader(r, id);
        if (dr) {
            uint64_t n = 0;
            if (OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n) != OTF2_SUCCESS) {
                job->status = earl_fail(&job->err, EARL_ERR_CORRUPT,
                                        "%s: the local definitions of location %llu cannot be "
                                        "decoded: %s", job->anchor, (unsigned long long)id,
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
        job->status = read_locations(r, job->anchor, job->defs, job->mine, job->n_locs,
                                     report_progress, job->progress, &job->err);
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

static int by_declared_desc(const void *a, const void *b, void *defs)
{
    const earl_location *l = ((const defs_store *)defs)->locations;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (l[x].declared_events != l[y].declared_events)
        return l[x].declared_events > l[y].declared_events ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Read every location, in n_threads threads.  Locations are dealt out
 * largest first to the least loaded thread, which balances events. */
static earl_status read_all(const char *anchor, const defs_store *defs, loc_events *bufs,
                            int n_threads, progress *pr, earl_error *err)
{
    size_t n = defs->n_locations;
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
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, by_declared_desc, (void *)defs);
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
        load[best] += defs->locations[order[i]].declared_events + 1;
        count[best]++;
    }
    size_t at = 0;
    for (int t = 0; t < n_threads; t++) {
        jobs[t] = (read_job){anchor, defs, bufs, assigned + at, 0, scratch + at, EARL_OK,
                             {0}, pr};
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

/* Every location must yield the records its definition announces; fewer
 * means the event file was cut short. */
static earl_status check_counts(const char *anchor, defs_store *defs, loc_events *bufs,
                                earl_error *err)
{
    for (size_t i = 0; i < defs->n_locations; i++) {
        earl_location *l = &defs->locations[i];
        uint64_t other = 0;
        for (int k = 0; k < OTHER_RECORD_COUNT; k++)
            other += bufs[i].other[k];
        l->events = bufs[i].n;
        l->other_records = other;
        if (l->events + other < l->declared_events) {
            char file[4096];
            archive_event_file(anchor, l->id, file, sizeof file);
            return earl_fail(err, EARL_ERR_CORRUPT,
                             "%s: the event file is truncated: %llu of the %llu events announced "
                             "by the definitions could be read", file,
                             (unsigned long long)(l->events + other),
                             (unsigned long long)l->declared_events);
        }
    }
    return EARL_OK;
}

/* Gather the per-location warnings in location order and attach event ids. */
static earl_status gather_warnings(earl_trace *tr, loc_events *bufs, size_t n_locs,
                                   earl_error *err)
{
    warning_list *w = &tr->warnings;
    size_t total = 0;
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

earl_status earl_trace_open(const char *path, const earl_open_options *options,
                            earl_trace **out, earl_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, earl_otf2_install_error_handler);
    if (err) {
        err->code = EARL_OK;
        err->message[0] = '\0';
    }
    if (!out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_trace_open: no output handle");
    *out = NULL;
    earl_open_options defaults = {0};
    if (!options)
        options = &defaults;

    earl_trace *tr = calloc(1, sizeof *tr);
    if (!tr)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path ? path : "");
    earl_status st = find_anchor(path, &tr->anchor, err);
    OTF2_Reader *reader = NULL;
    loc_events *bufs = NULL;
    reading_columns columns = {0};
    size_t n_locs = 0;
    if (st == EARL_OK)
        st = check_anchor(tr->anchor, err);
    /* libotf2 reads past the end of a damaged definition or event file into
     * its chunk buffer's uninitialised tail, and whether it then stops depends
     * on what that memory held before (a trace opened earlier in the process):
     * it was seen to loop for good.  Zero-filled allocations make the outcome
     * the one of a fresh process (an error).  Only while libotf2 reads: its
     * buffers are the only large malloc'd blocks then (earlc's columns come
     * from earl_mem), so the fill costs little. */
    mallopt(M_PERTURB, 0xff);
    if (st == EARL_OK)
        st = open_reader(tr->anchor, &reader, err);
    if (st == EARL_OK) {
        st = defs_read(&tr->defs, reader, tr->anchor, err);
        OTF2_Reader_Close(reader);
    }
    st = earl_otf2_blame_memory(err, st); /* libotf2's buffers, no fault of the archive */
    if (st == EARL_OK)
        st = check_event_files(tr->anchor, &tr->defs, err);
    if (st == EARL_OK) {
        n_locs = tr->defs.n_locations;
        bufs = loc_events_alloc(n_locs);
        if (!bufs)
            st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", tr->anchor);
        for (size_t l = 0; bufs && l < n_locs; l++)
            bufs[l].loc = (earl_loc)l;
        size_t *first_slot = malloc((n_locs + 1) * sizeof *first_slot);
        if (bufs && first_slot && reading_columns_alloc(&columns, &tr->defs, first_slot) == 0) {
            for (size_t l = 0; l < n_locs; l++) {
                size_t end = l + 1 < n_locs ? first_slot[l + 1] : columns.slots;
                loc_events_use_shared(&bufs[l], &columns, first_slot[l], end - first_slot[l]);
            }
        }
        free(first_slot);
    }
    progress pr = {options->progress, options->progress_data, 0, 0,
                   PTHREAD_MUTEX_INITIALIZER};
    for (size_t l = 0; l < n_locs; l++)
        pr.total += tr->defs.locations[l].declared_events;
    if (st == EARL_OK)
        st = read_all(tr->anchor, &tr->defs, bufs, options->threads, &pr, err);
    mallopt(M_PERTURB, 0);
    if (st == EARL_OK)
        st = check_counts(tr->anchor, &tr->defs, bufs, err);
    if (st == EARL_OK) {
        if (pr.fn)
            pr.fn(pr.data, "ordering", 0, 1);
        st = order_events(tr, bufs, n_locs,
                          earl_threads_or_cores(options->threads), err);
    }
    if (st == EARL_OK)
        st = gather_warnings(tr, bufs, n_locs, err);
    for (size_t l = 0; l < n_locs && bufs; l++)
        loc_events_free(&bufs[l]);
    free(bufs);
    reading_columns_free(&columns);
    /* what the reading left in malloc's heap (small locations' side tables,
     * region stacks, request maps) goes back to the system too */
    malloc_trim(0);
    if (st != EARL_OK) {
        earl_trace_close(tr);
        return st;
    }
    fill_view(tr);
    if (pr.fn)
        pr.fn(pr.data, "done", 1, 1);
    *out = tr;
    return EARL_OK;
}

void trace_store_free(earl_trace *tr)
{
    earl_mem_free(tr->time); earl_mem_free(tr->location); earl_mem_free(tr->kind);
    earl_mem_free(tr->payload); earl_mem_free(tr->loc_events);
    free(tr->loc_start);
    tr->time = NULL; tr->location = NULL; tr->kind = NULL; tr->payload = NULL;
    tr->loc_events = NULL; tr->loc_start = NULL;
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
