/*
 * writer.c - earl_writer: write OTF2 archives through libotf2's writer.
 *
 * The counterpart of the reader: it lets tests, benchmarks and users produce
 * archives shaped like Score-P's (see earl_writer.h for the model).  This file
 * owns the archive's life: the target folder, libotf2's chunk memory, open,
 * abort and close.  Definitions are kept by writer_defs.c, small, and written
 * here at close, when the number of events of every location and the clock
 * length are known; events go straight to libotf2's per-location event
 * writers through writer_events.c.  libotf2's chunk memory comes from a
 * budgeted pool (mem_alloc below): when the budget is used up the pool
 * refuses a chunk, libotf2 asks pre_flush and writes the location's full
 * chunks to disk, so memory stays bounded.
 *
 * The archive is built in DIR.tmp-XXXXXX and renamed to DIR by a successful
 * close; abort and failures remove the temporary folder.
 */
#include "writer_internal.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                     */
/* ------------------------------------------------------------------------ */

/* An error about the archive of w: "trace archive 'DIR': detail". */
earl_status wr_fail(const earl_writer *w, earl_error *err, earl_status code,
                         const char *fmt, ...)
{
    if (err) {
        int n = snprintf(err->message, sizeof err->message, "trace archive '%s': ",
                         w ? w->dir : "?");
        if (n < 0 || (size_t)n >= sizeof err->message)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

earl_status wr_nomem(const earl_writer *w, earl_error *err)
{
    return wr_fail(w, err, EARL_ERR_NOMEM, "out of memory");
}

earl_status wr_otf2_fail(earl_writer *w, earl_error *err, OTF2_ErrorCode rc, const char *what)
{
    w->broken = 1;
    return wr_fail(w, err, EARL_ERR_IO, "libotf2 failed to %s in '%s': %s (%s)", what, w->tmp,
                 OTF2_Error_GetName(rc), OTF2_Error_GetDescription(rc));
}

/* ------------------------------------------------------------------------ */
/* Files and folders                                                          */
/* ------------------------------------------------------------------------ */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path)
{
    if (path)
        nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1: empty folder, 0: non-empty, -1: error (errno). */
static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    return empty;
}

/* mkdir -p */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(path, 0777);
        *p = '/';
        if (rc && errno != EEXIST)
            return -1;
    }
    if (mkdir(path, 0777) && errno != EEXIST)
        return -1;
    return 0;
}

/* May the archive be placed at w->dir?  Checked at open and again at close. */
static earl_status check_target(const earl_writer *w, earl_error *err)
{
    struct stat st;
    if (stat(w->dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return EARL_OK; /* missing; a bad parent is reported when it is created */
        return wr_fail(w, err, EARL_ERR_IO, "cannot inspect the folder: %s", strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return wr_fail(w, err, EARL_ERR_INVALID, "the path exists and is not a folder");
    int empty = dir_is_empty(w->dir);
    if (empty < 0)
        return wr_fail(w, err, EARL_ERR_IO, "cannot list the folder: %s", strerror(errno));
    if (empty)
        return EARL_OK;
    if (!(w->flags & EARL_WRITER_OVERWRITE))
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "the folder already exists and is not empty; refusing to write into it "
                     "(ask to overwrite to replace an existing archive)");
    if (access(w->anchor, F_OK) != 0)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "the folder is not empty and holds no archive '%s'; refusing to replace "
                     "a folder of other data", w->anchor);
    return EARL_OK;
}

/* ------------------------------------------------------------------------ */
/* libotf2 callbacks: flush and memory                                        */
/* ------------------------------------------------------------------------ */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                void *caller, bool final)
{
    (void)user;
    (void)type;
    (void)loc;
    (void)caller;
    (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: it would make libotf2 insert BufferFlush records
 * into the event stream, which would not describe the traced program. */
static OTF2_FlushCallbacks flush_callbacks = { pre_flush, NULL };

typedef union wchunk {
    union wchunk *next;
    max_align_t align;
} wchunk;

typedef struct wbuf {
    wchunk *head;
    uint32_t n;
    uint64_t chunk_size;
} wbuf;

static void *mem_alloc(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
                       uint64_t size)
{
    earl_writer *w = user;
    wbuf *b = *per_buffer;
    (void)loc;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            return NULL;
        *per_buffer = b;
    }
    /* Refusing a chunk makes libotf2 flush this buffer's chunks and free them.
     * A buffer always gets its first chunk. */
    if (type == OTF2_FILETYPE_EVENTS && b->n >= 1 && w->mem_used + size > w->mem_limit)
        return NULL;
    wchunk *c = malloc(sizeof(wchunk) + size);
    if (!c)
        return NULL;
    c->next = b->head;
    b->head = c;
    b->n++;
    b->chunk_size = size;
    w->mem_used += size;
    return c + 1;
}

static void mem_free_all(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
                         bool final)
{
    earl_writer *w = user;
    wbuf *b = *per_buffer;
    (void)type;
    (void)loc;
    if (!b)
        return;
    while (b->head) {
        wchunk *next = b->head->next;
        free(b->head);
        b->head = next;
    }
    w->mem_used -= (size_t)b->n * b->chunk_size;
    b->n = 0;
    if (final) {
        free(b);
        *per_buffer = NULL;
    }
}

static OTF2_MemoryCallbacks memory_callbacks = { mem_alloc, mem_free_all };

/* ------------------------------------------------------------------------ */
/* Open, abort                                                                */
/* ------------------------------------------------------------------------ */

static void free_writer(earl_writer *w)
{
    if (!w)
        return;
    for (uint32_t i = 0; i < w->strings.n; i++)
        free(w->strings.v[i]);
    free(w->strings.v);
    earl_map_free(&w->string_index);
    earl_map_free(&w->location_index);
    free(w->nodes.v);
    free(w->lgroups.v);
    free(w->locs.v);
    free(w->regions.v);
    for (uint32_t i = 0; i < w->groups.n; i++)
        free(w->groups.v[i].members);
    free(w->groups.v);
    for (uint32_t i = 0; i < w->comms.n; i++)
        free(w->comms.v[i].threads);
    free(w->comms.v);
    free(w->wins.v);
    free(w->attrs.v);
    free(w->lprops.v);
    free(w->clocks.v);
    if (w->attr_list)
        OTF2_AttributeList_Delete(w->attr_list);
    free(w->members.v);
    for (uint32_t i = 0; i < w->classes.n; i++) {
        free(w->classes.v[i].members);
        free(w->classes.v[i].types);
    }
    free(w->classes.v);
    free(w->rank_group.v);
    free(w->dir);
    free(w->tmp);
    free(w->name);
    free(w->anchor);
    free(w->creator);
    free(w->description);
    free(w);
}

earl_status earl_writer_open(const char *dir, const char *name, uint64_t timer_resolution,
                             unsigned flags, earl_writer **out, earl_error *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return earl_fail(err, EARL_ERR_INVALID, "earl_writer_open: no place for the writer (out is NULL)");
    if (!dir || !*dir)
        return earl_fail(err, EARL_ERR_INVALID, "earl_writer_open: no folder given for the trace archive");
    if (!name)
        name = "traces";
    if (!*name || strchr(name, '/'))
        return earl_fail(err, EARL_ERR_INVALID,
                         "trace archive '%s': invalid archive name '%s' (non-empty, no '/')", dir, name);

    earl_writer *w = calloc(1, sizeof *w);
    if (!w)
        return earl_fail(err, EARL_ERR_NOMEM, "trace archive '%s': out of memory", dir);
    w->flags = flags;
    w->resolution = timer_resolution ? timer_resolution : 1000000000u;
    w->realtime = OTF2_UNDEFINED_TIMESTAMP;
    w->mem_limit = DEFAULT_MEMORY_LIMIT;
    w->world = EARL_UNDEFINED_REF;
    w->mpi_locations = EARL_UNDEFINED_REF;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    w->dir = strndup(dir, len);
    w->name = strdup(name);
    w->creator = strdup("earlc trace writer");
    if (!w->dir || !w->name || !w->creator) {
        free_writer(w);
        return earl_fail(err, EARL_ERR_NOMEM, "trace archive '%s': out of memory", dir);
    }
    if (strcmp(w->dir, "/") == 0) {
        earl_status st = wr_fail(w, err, EARL_ERR_INVALID, "cannot write an archive as the root folder");
        free_writer(w);
        return st;
    }
    if (asprintf(&w->anchor, "%s/%s.otf2", w->dir, w->name) < 0 ||
        asprintf(&w->tmp, "%s.tmp-XXXXXX", w->dir) < 0) {
        w->anchor = w->tmp = NULL;
        free_writer(w);
        return earl_fail(err, EARL_ERR_NOMEM, "trace archive '%s': out of memory", dir);
    }

    earl_status st = check_target(w, err);
    if (st != EARL_OK) {
        free_writer(w);
        return st;
    }
    /* The parent folder: create it if missing, then it must be writable. */
    char *parent = strdup(w->dir);
    if (!parent) {
        free_writer(w);
        return earl_fail(err, EARL_ERR_NOMEM, "trace archive '%s': out of memory", dir);
    }
    char *slash = strrchr(parent, '/');
    if (slash == parent)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    else
        strcpy(parent, ".");
    struct stat pst;
    if (make_dirs(parent) != 0) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot create the parent folder '%s': %s", parent,
                   strerror(errno));
    } else if (stat(parent, &pst) != 0 || !S_ISDIR(pst.st_mode)) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot create the parent folder '%s': %s", parent,
                   "it exists and is not a folder");
    } else if (access(parent, W_OK | X_OK) != 0) {
        st = wr_fail(w, err, EARL_ERR_IO, "the folder '%s' is not writable: %s", parent,
                   strerror(errno));
    } else if (!mkdtemp(w->tmp)) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot create a temporary folder in '%s': %s", parent,
                   strerror(errno));
        free(w->tmp);
        w->tmp = NULL;
    }
    free(parent);
    if (st != EARL_OK) {
        free_writer(w);
        return st;
    }

    w->archive = OTF2_Archive_Open(w->tmp, w->name, OTF2_FILEMODE_WRITE, EVT_CHUNK_SIZE,
                                   DEF_CHUNK_SIZE, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!w->archive) {
        st = wr_fail(w, err, EARL_ERR_IO, "libotf2 could not create an archive in '%s'", w->tmp);
        goto fail;
    }
    OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(w->archive, &flush_callbacks, w);
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Archive_SetMemoryCallbacks(w->archive, &memory_callbacks, w);
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Archive_SetSerialCollectiveCallbacks(w->archive);
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Archive_OpenEvtFiles(w->archive);
    if (rc != OTF2_SUCCESS) {
        st = wr_otf2_fail(w, err, rc, "set up the archive");
        goto fail;
    }
    *out = w;
    return EARL_OK;

fail:
    earl_writer_abort(w);
    return st;
}

void earl_writer_abort(earl_writer *w)
{
    if (!w)
        return;
    if (w->archive)
        OTF2_Archive_Close(w->archive); /* frees libotf2's buffers; files go below */
    w->archive = NULL;
    remove_tree(w->tmp);
    free_writer(w);
}

earl_status earl_writer_set_creator(earl_writer *w, const char *creator, earl_error *err)
{
    char *s = strdup(creator ? creator : "");
    if (!s)
        return wr_nomem(w, err);
    free(w->creator);
    w->creator = s;
    return EARL_OK;
}

earl_status earl_writer_set_description(earl_writer *w, const char *text, earl_error *err)
{
    char *s = text ? strdup(text) : NULL;
    if (text && !s)
        return wr_nomem(w, err);
    free(w->description);
    w->description = s;
    return EARL_OK;
}

void earl_writer_set_realtime(earl_writer *w, uint64_t realtime_ns)
{
    w->realtime = realtime_ns;
}

void earl_writer_set_quirks(earl_writer *w, const earl_writer_quirks *quirks)
{
    w->quirks = quirks ? *quirks : (earl_writer_quirks){0};
}

void earl_writer_set_memory_limit(earl_writer *w, size_t bytes)
{
    w->mem_limit = bytes ? bytes : DEFAULT_MEMORY_LIMIT;
}

const char *earl_writer_anchor_path(const earl_writer *w)
{
    return w->anchor;
}

const char *earl_writer_tmp_dir(const earl_writer *w)
{
    return w->tmp;
}

uint64_t earl_writer_event_count(const earl_writer *w, earl_loc loc)
{
    if (loc >= 0)
        return (uint32_t)loc < w->locs.n ? w->locs.v[loc].n_events : 0;
    uint64_t n = 0;
    for (uint32_t i = 0; i < w->locs.n; i++)
        n += w->locs.v[i].n_events;
    return n;
}

uint32_t earl_writer_location_count(const earl_writer *w)
{
    return w->locs.n;
}

/* ------------------------------------------------------------------------ */
/* Close                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct paradigm_info {
    uint8_t paradigm;
    const char *name;
    uint8_t klass;
} paradigm_info;

/* Parallel paradigms get a Paradigm definition when used, as Score-P does. */
static const paradigm_info paradigm_table[] = {
    { OTF2_PARADIGM_MPI, "MPI", OTF2_PARADIGM_CLASS_PROCESS },
    { OTF2_PARADIGM_SHMEM, "SHMEM", OTF2_PARADIGM_CLASS_PROCESS },
    { OTF2_PARADIGM_GASPI, "GASPI", OTF2_PARADIGM_CLASS_PROCESS },
    { OTF2_PARADIGM_UPC, "UPC", OTF2_PARADIGM_CLASS_PROCESS },
    { OTF2_PARADIGM_OPENMP, "OpenMP", OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN },
    { OTF2_PARADIGM_OMPSS, "OmpSs", OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN },
    { OTF2_PARADIGM_PTHREAD, "Pthread", OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT },
    { OTF2_PARADIGM_WINTHREAD, "Windows threads", OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT },
    { OTF2_PARADIGM_CUDA, "CUDA", OTF2_PARADIGM_CLASS_ACCELERATOR },
    { OTF2_PARADIGM_OPENCL, "OpenCL", OTF2_PARADIGM_CLASS_ACCELERATOR },
    { OTF2_PARADIGM_OPENACC, "OpenACC", OTF2_PARADIGM_CLASS_ACCELERATOR },
    { OTF2_PARADIGM_HIP, "HIP", OTF2_PARADIGM_CLASS_ACCELERATOR },
    { OTF2_PARADIGM_KOKKOS, "Kokkos", OTF2_PARADIGM_CLASS_ACCELERATOR },
};
#define N_PARADIGMS (sizeof paradigm_table / sizeof paradigm_table[0])

/* The groups made at close: one COMM_LOCATIONS group per paradigm (MPI and
 * each threading paradigm of a team) and the COMM_GROUP of every team. */
typedef struct close_plan {
    uint32_t mpi_locations;     /* group ref or undefined */
    uint32_t n_extra;           /* groups after w->groups */
    wgroup *extra;              /* their definitions, refs w->groups.n + i */
    uint32_t paradigm_name[N_PARADIGMS];
    uint8_t paradigm_used[N_PARADIGMS];
} close_plan;

static void free_plan(close_plan *p)
{
    for (uint32_t i = 0; i < p->n_extra; i++)
        free(p->extra[i].members);
    free(p->extra);
}

static void mark_paradigm(close_plan *p, uint8_t paradigm)
{
    for (size_t i = 0; i < N_PARADIGMS; i++)
        if (paradigm_table[i].paradigm == paradigm)
            p->paradigm_used[i] = 1;
}

/* Check the definitions as a whole and build the groups made at close. */
static earl_status plan_close(earl_writer *w, close_plan *p, earl_error *err)
{
    earl_status st;
    memset(p, 0, sizeof *p);
    p->mpi_locations = EARL_UNDEFINED_REF;
    uint32_t n_ranks = w->rank_group.n;
    for (uint32_t r = 0; r < n_ranks; r++) {
        int32_t g = w->rank_group.v[r];
        if (g < 0)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "MPI rank %u has no process while rank %u does", r, n_ranks - 1);
        if (w->lgroups.v[g].master < 0)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "the process of MPI rank %u has no CPU thread location", r);
    }
    if (w->world != EARL_UNDEFINED_REF && w->comms.v[w->world].size != n_ranks)
        return wr_fail(w, err, EARL_ERR_INVALID, "MPI_COMM_WORLD has %u ranks but %u processes have a rank",
                     w->comms.v[w->world].size, n_ranks);

    uint32_t n_teams = 0, n_team_paradigms = 0;
    uint8_t team_paradigms[256] = { 0 };
    for (uint32_t c = 0; c < w->comms.n; c++) {
        if (w->comms.v[c].kind == COMM_TEAM) {
            n_teams++;
            if (!team_paradigms[w->comms.v[c].paradigm]) {
                team_paradigms[w->comms.v[c].paradigm] = 1;
                n_team_paradigms++;
            }
        }
        mark_paradigm(p, w->comms.v[c].paradigm);
    }
    for (uint32_t r = 0; r < w->regions.n; r++)
        mark_paradigm(p, w->regions.v[r].paradigm);
    for (uint32_t g = 0; g < w->groups.n; g++)
        mark_paradigm(p, w->groups.v[g].paradigm);

    uint32_t max_extra = (n_ranks ? 1 : 0) + n_team_paradigms + n_teams;
    p->extra = calloc(max_extra ? max_extra : 1, sizeof *p->extra);
    int32_t *index = malloc((w->locs.n ? w->locs.n : 1) * sizeof *index);
    if (!p->extra || !index) {
        free(index);
        return wr_nomem(w, err);
    }
    uint32_t empty;
    if ((st = wr_intern(w, NULL, "", &empty, err)))
        goto out;

    if (n_ranks) {
        /* the group reserved before the first group of ranks, else one made now */
        int reserved = w->mpi_locations != EARL_UNDEFINED_REF;
        wgroup *g = reserved ? &w->groups.v[w->mpi_locations] : &p->extra[p->n_extra];
        free(reserved ? g->members : NULL);
        *g = (wgroup){ empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       n_ranks, malloc(n_ranks * sizeof(uint64_t)) };
        if (!g->members) {
            g->n = 0;
            st = wr_nomem(w, err);
            goto out;
        }
        for (uint32_t r = 0; r < n_ranks; r++)
            g->members[r] = w->locs.v[w->lgroups.v[w->rank_group.v[r]].master].id;
        p->mpi_locations = reserved ? w->mpi_locations : w->groups.n + p->n_extra++;
        mark_paradigm(p, OTF2_PARADIGM_MPI);
    }
    for (unsigned par = 0; par < 256; par++) {
        if (!team_paradigms[par])
            continue;
        /* The threads of every team of this paradigm, in location order. */
        for (uint32_t l = 0; l < w->locs.n; l++)
            index[l] = -1;
        for (uint32_t c = 0; c < w->comms.n; c++) {
            const wcomm *cm = &w->comms.v[c];
            if (cm->kind == COMM_TEAM && cm->paradigm == par)
                for (uint32_t i = 0; i < cm->size; i++)
                    index[cm->threads[i]] = 0;
        }
        uint32_t n = 0;
        for (uint32_t l = 0; l < w->locs.n; l++)
            if (index[l] == 0)
                index[l] = (int32_t)n++ + 1;
        wgroup *g = &p->extra[p->n_extra];
        *g = (wgroup){ empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, (uint8_t)par, OTF2_GROUP_FLAG_NONE, n,
                       malloc(n * sizeof(uint64_t)) };
        if (!g->members) {
            st = wr_nomem(w, err);
            goto out;
        }
        for (uint32_t l = 0; l < w->locs.n; l++)
            if (index[l] > 0)
                g->members[index[l] - 1] = w->locs.v[l].id;
        p->n_extra++;
        for (uint32_t c = 0; c < w->comms.n; c++) {
            wcomm *cm = &w->comms.v[c];
            if (cm->kind != COMM_TEAM || cm->paradigm != par)
                continue;
            wgroup *tg = &p->extra[p->n_extra];
            *tg = (wgroup){ empty, OTF2_GROUP_TYPE_COMM_GROUP, (uint8_t)par, OTF2_GROUP_FLAG_NONE,
                            cm->size, malloc(cm->size * sizeof(uint64_t)) };
            if (!tg->members) {
                st = wr_nomem(w, err);
                goto out;
            }
            for (uint32_t i = 0; i < cm->size; i++)
                tg->members[i] = (uint64_t)(index[cm->threads[i]] - 1);
            cm->group = w->groups.n + p->n_extra++;
        }
    }
    for (size_t i = 0; i < N_PARADIGMS; i++)
        if (p->paradigm_used[i] &&
            (st = wr_intern(w, paradigm_table[i].name, "", &p->paradigm_name[i], err)))
            goto out;
    st = EARL_OK;
out:
    free(index);
    return st;
}

#define TRY(call, what)                                  \
    do {                                                 \
        OTF2_ErrorCode rc_ = (call);                     \
        if (rc_ != OTF2_SUCCESS)                         \
            return wr_otf2_fail(w, err, rc_, what);         \
    } while (0)

/* Time t of location l on the global clock as libotf2 corrects it: its
 * clock offsets interpolated linearly, held constant before the first and
 * after the last; a location with fewer than two is not corrected. */
static uint64_t global_time(const earl_writer *w, earl_loc l, uint64_t t)
{
    const wclock *before = NULL, *after = NULL;
    unsigned n = 0;
    for (uint32_t i = 0; i < w->clocks.n; i++) {
        const wclock *c = &w->clocks.v[i];
        if (c->loc != l)
            continue;
        n++;
        if (c->time <= t)
            before = c;
        else if (!after)
            after = c;
    }
    if (n < 2)
        return t;
    double offset = !before ? (double)after->offset
                    : !after ? (double)before->offset
                             : (double)before->offset + (double)(after->offset - before->offset) *
                                   (double)(t - before->time) / (double)(after->time - before->time);
    double g = (double)t + offset;
    return g < 0 ? 0 : (uint64_t)(g + 0.5);
}

static earl_status write_global_defs(earl_writer *w, const close_plan *p, earl_error *err)
{
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(w->archive);
    if (!g) {
        w->broken = 1;
        return wr_fail(w, err, EARL_ERR_IO, "libotf2 could not create the global definition writer");
    }
    uint64_t tmin = UINT64_MAX, tmax = 0;
    for (uint32_t l = 0; l < w->locs.n; l++) {
        const wloc *L = &w->locs.v[l];
        if (!L->n_events)
            continue;
        uint64_t first = global_time(w, (earl_loc)l, L->tmin);
        uint64_t last = global_time(w, (earl_loc)l, L->tmax);
        if (first < tmin)
            tmin = first;
        if (last > tmax)
            tmax = last;
    }
    if (tmin == UINT64_MAX)
        tmin = tmax = 0;
    if (!w->quirks.omit_clock)
        TRY(OTF2_GlobalDefWriter_WriteClockProperties(g, w->resolution, tmin, tmax - tmin,
                                                      w->realtime),
            "write the clock properties");
    for (uint32_t s = 0; s < w->strings.n; s++)
        TRY(OTF2_GlobalDefWriter_WriteString(g, s, w->strings.v[s]), "write a string definition");
    for (size_t i = 0; i < N_PARADIGMS; i++)
        if (p->paradigm_used[i])
            TRY(OTF2_GlobalDefWriter_WriteParadigm(g, paradigm_table[i].paradigm, p->paradigm_name[i],
                                                   paradigm_table[i].klass),
                "write a paradigm definition");
    for (uint32_t i = 0; i < w->nodes.n; i++) {
        const wnode *n = &w->nodes.v[i];
        TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, i, n->name, n->class_name, n->parent),
            "write a system tree node");
    }
    for (uint32_t i = 0; i < w->lgroups.n; i++) {
        const wlgroup *lg = &w->lgroups.v[i];
        TRY(OTF2_GlobalDefWriter_WriteLocationGroup(g, i, lg->name, lg->type, lg->system_node,
                                                    lg->creator),
            "write a location group");
    }
    for (uint32_t i = 0; i < w->locs.n; i++) {
        const wloc *L = &w->locs.v[i];
        uint64_t announced = w->quirks.announce_events ? w->quirks.announced_events : L->n_events;
        TRY(OTF2_GlobalDefWriter_WriteLocation(g, L->id, L->name, L->type, announced, L->group),
            "write a location");
    }
    for (uint32_t i = 0; i < w->lprops.n; i++) {
        const wlprop *lp = &w->lprops.v[i];
        OTF2_AttributeValue v = { .stringRef = lp->value };
        TRY(OTF2_GlobalDefWriter_WriteLocationProperty(g, w->locs.v[lp->loc].id, lp->name,
                                                       OTF2_TYPE_STRING, v),
            "write a location property");
    }
    for (uint32_t i = 0; i < w->attrs.n; i++) {
        const wattr *a = &w->attrs.v[i];
        TRY(OTF2_GlobalDefWriter_WriteAttribute(g, i, a->name, a->description, a->type),
            "write an attribute definition");
    }
    for (uint32_t i = 0; i < w->regions.n; i++) {
        const wregion *r = &w->regions.v[i];
        TRY(OTF2_GlobalDefWriter_WriteRegion(g, i, r->name, r->canonical, r->description, r->role,
                                             r->paradigm, r->flags, r->file, r->begin, r->end),
            "write a region");
    }
    /* In ref order: readers such as otf2-print expect the definitions of a kind
     * numbered 0, 1, 2, ... as they come, and resolve a group of ranks through
     * the COMM_LOCATIONS group as they read it, which therefore has the smaller
     * ref (reserve_mpi_locations, plan_close). */
    for (uint32_t i = 0; i < w->groups.n + p->n_extra; i++) {
        const wgroup *gr = i < w->groups.n ? &w->groups.v[i] : &p->extra[i - w->groups.n];
        TRY(OTF2_GlobalDefWriter_WriteGroup(g, i, gr->name, gr->type, gr->paradigm, gr->flags,
                                            gr->n, gr->members),
            "write a group");
    }
    for (uint32_t i = 0; i < w->comms.n; i++) {
        const wcomm *c = &w->comms.v[i];
        TRY(OTF2_GlobalDefWriter_WriteComm(g, i, c->name, c->group, c->parent, OTF2_COMM_FLAG_NONE),
            "write a communicator");
    }
    for (uint32_t i = 0; i < w->wins.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteRmaWin(g, i, w->wins.v[i].name, w->wins.v[i].comm,
                                             OTF2_RMA_WIN_FLAG_NONE),
            "write an RMA window");
    for (uint32_t i = 0; i < w->members.n; i++) {
        const wmember *m = &w->members.v[i];
        TRY(OTF2_GlobalDefWriter_WriteMetricMember(g, i, m->name, m->description, m->metric_type,
                                                   m->mode, m->value_type, m->base, m->exponent,
                                                   m->unit),
            "write a metric member");
    }
    for (uint32_t i = 0; i < w->classes.n; i++) {
        const wclass *c = &w->classes.v[i];
        TRY(OTF2_GlobalDefWriter_WriteMetricClass(g, i, (uint8_t)c->n, c->members, c->occurrence,
                                                  c->recorder),
            "write a metric class");
    }
    return EARL_OK;
}

/* Everything but the final move: events closed, local and global
 * definitions written, archive closed. */
static earl_status finish_archive(earl_writer *w, earl_error *err)
{
    if (w->broken)
        return wr_fail(w, err, EARL_ERR_IO, "an earlier write failed; nothing was written");
    close_plan plan;
    earl_status st = plan_close(w, &plan, err);
    if (st) {
        free_plan(&plan);
        return st;
    }
    for (uint32_t l = 0; l < w->locs.n && !st; l++) {
        wloc *L = &w->locs.v[l];
        uint64_t n;
        OTF2_ErrorCode rc = OTF2_EvtWriter_GetNumberOfEvents(L->evt, &n);
        if (rc == OTF2_SUCCESS)
            L->n_events = n; /* the same unless libotf2 added records */
        if (rc == OTF2_SUCCESS)
            rc = OTF2_Archive_CloseEvtWriter(w->archive, L->evt);
        L->evt = NULL;
        if (rc != OTF2_SUCCESS)
            st = wr_otf2_fail(w, err, rc, "close an event file");
    }
    if (!st) {
        OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(w->archive);
        /* Local definition files, one per location (readers expect them):
         * empty but for clock offsets. */
        if (rc == OTF2_SUCCESS)
            rc = OTF2_Archive_OpenDefFiles(w->archive);
        for (uint32_t l = 0; l < w->locs.n && rc == OTF2_SUCCESS; l++) {
            OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(w->archive, w->locs.v[l].id);
            if (!d)
                rc = OTF2_ERROR_MEM_ALLOC_FAILED;
            for (uint32_t i = 0; i < w->clocks.n && rc == OTF2_SUCCESS; i++)
                if (w->clocks.v[i].loc == (earl_loc)l)
                    rc = OTF2_DefWriter_WriteClockOffset(d, w->clocks.v[i].time, w->clocks.v[i].offset,
                                                         w->clocks.v[i].stddev);
            if (d && rc == OTF2_SUCCESS)
                rc = OTF2_Archive_CloseDefWriter(w->archive, d);
        }
        if (rc == OTF2_SUCCESS)
            rc = OTF2_Archive_CloseDefFiles(w->archive);
        if (rc == OTF2_SUCCESS && w->creator)
            rc = OTF2_Archive_SetCreator(w->archive, w->creator);
        if (rc == OTF2_SUCCESS && w->description)
            rc = OTF2_Archive_SetDescription(w->archive, w->description);
        if (rc != OTF2_SUCCESS)
            st = wr_otf2_fail(w, err, rc, "write the local definitions");
    }
    if (!st)
        st = write_global_defs(w, &plan, err);
    free_plan(&plan);
    if (!st) {
        OTF2_ErrorCode rc = OTF2_Archive_Close(w->archive);
        w->archive = NULL;
        if (rc != OTF2_SUCCESS)
            st = wr_otf2_fail(w, err, rc, "close the archive");
    }
    return st;
}

/* Rename the finished temporary folder to DIR. */
static earl_status move_into_place(earl_writer *w, earl_error *err)
{
    earl_status st = check_target(w, err);
    if (st)
        return st;
    if (rename(w->tmp, w->dir) == 0)
        return EARL_OK;
    if (errno != ENOTEMPTY && errno != EEXIST)
        return wr_fail(w, err, EARL_ERR_IO, "cannot move '%s' into place: %s", w->tmp, strerror(errno));
    /* An archive being replaced (check_target allowed it): move it aside
     * first so that DIR always holds one whole archive. */
    char *old = NULL;
    if (asprintf(&old, "%s.old-XXXXXX", w->dir) < 0)
        return wr_nomem(w, err);
    if (!mkdtemp(old)) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot make room to replace the old archive: %s",
                   strerror(errno));
    } else if (rename(w->dir, old) != 0) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot move the old archive aside: %s", strerror(errno));
        rmdir(old);
    } else if (rename(w->tmp, w->dir) != 0) {
        st = wr_fail(w, err, EARL_ERR_IO, "cannot move '%s' into place: %s", w->tmp, strerror(errno));
        if (rename(old, w->dir) != 0)
            st = wr_fail(w, err, EARL_ERR_IO, "cannot move the new archive into place, and the old "
                       "one stays at '%s': %s", old, strerror(errno));
    } else {
        remove_tree(old);
    }
    free(old);
    return st;
}

earl_status earl_writer_close(earl_writer *w, earl_error *err)
{
    if (!w)
        return earl_fail(err, EARL_ERR_INVALID, "earl_writer_close: no writer");
    earl_status st = finish_archive(w, err);
    if (!st)
        st = move_into_place(w, err);
    if (st) {
        earl_writer_abort(w);
        return st;
    }
    free_writer(w);
    return EARL_OK;
}

