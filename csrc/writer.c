/*
 * writer.c - earl_writer: write OTF2 archives through libotf2's writer.
 *
 * The counterpart of the reader: it lets tests, benchmarks and users produce
 * archives shaped like Score-P's (see earl_writer.h for the model).  Events go
 * straight to libotf2's per-location event writers; this file only checks
 * them (location, references, peers, monotone time) and counts them.  The
 * definitions are kept here, small, and written at close, when the number of
 * events of every location and the clock length are known.  libotf2's chunk
 * memory comes from a budgeted pool (mem_alloc below): when the budget is
 * used up the pool refuses a chunk, libotf2 asks pre_flush and writes the
 * location's full chunks to disk, so memory stays bounded.
 *
 * The archive is built in DIR.tmp-XXXXXX and renamed to DIR by a successful
 * close; abort and failures remove the temporary folder.
 */
#include "earl_writer.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#define EVT_CHUNK_SIZE (1024 * 1024)
#define DEF_CHUNK_SIZE (4 * 1024 * 1024)
#define DEFAULT_MEMORY_LIMIT ((size_t)128 * 1024 * 1024)

/* ------------------------------------------------------------------------ */
/* State                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct wloc {
    uint64_t id;
    uint32_t name, group;
    uint8_t type;
    OTF2_EvtWriter *evt;
    uint64_t n_events;
    earl_time last, tmin, tmax;
} wloc;

typedef struct wlgroup {
    uint32_t name, system_node, creator;
    uint8_t type;
    int32_t rank;
    uint32_t n_locs;
    earl_loc master; /* first CPU thread, -1 */
} wlgroup;

typedef struct wnode {
    uint32_t name, class_name, parent;
} wnode;

typedef struct wregion {
    uint32_t name, canonical, description, file;
    uint8_t role, paradigm;
    uint32_t flags, begin, end;
} wregion;

typedef struct wgroup {
    uint32_t name;
    uint8_t type, paradigm;
    uint32_t flags;
    uint32_t n;
    uint64_t *members;
} wgroup;

enum { COMM_MPI = 0, COMM_SELF = 1, COMM_TEAM = 2 };

typedef struct wcomm {
    uint32_t name;
    uint8_t kind, paradigm;
    uint32_t group;  /* group ref; for teams assigned at close */
    uint32_t parent;
    uint32_t size;
    earl_loc *threads; /* teams */
} wcomm;

typedef struct wwin {
    uint32_t name, comm;
} wwin;

typedef struct wmember {
    uint32_t name, description, unit;
    uint8_t metric_type, mode, value_type, base;
    int64_t exponent;
} wmember;

typedef struct wclass {
    uint32_t n;
    uint32_t *members;
    uint8_t occurrence, recorder;
    OTF2_Type *types; /* value type of each member */
} wclass;

/* A growable array: items, count, capacity. */
#define VEC(T) struct { T *v; uint32_t n, cap; }

struct earl_writer {
    char *dir;        /* final folder */
    char *tmp;        /* folder being written */
    char *name;       /* archive name */
    char *anchor;     /* dir/name.otf2 */
    unsigned flags;
    uint64_t resolution, realtime;
    char *creator, *description;
    OTF2_Archive *archive;
    int broken;       /* an OTF2 write failed: only abort/close remain */
    size_t mem_limit, mem_used;

    /* strings, interned through an open-addressing table of ref+1 */
    VEC(char *) strings;
    uint32_t *str_slots;
    size_t str_cap;
    /* location ids, an open-addressing table of index+1 keyed by id */
    uint32_t *id_slots;
    size_t id_cap;

    VEC(wnode) nodes;
    VEC(wlgroup) lgroups;
    VEC(wloc) locs;
    VEC(wregion) regions;
    VEC(wgroup) groups;
    VEC(wcomm) comms;
    VEC(wwin) wins;
    VEC(wmember) members;
    VEC(wclass) classes;
    VEC(int32_t) rank_group; /* location group of each world rank, -1 */
    uint32_t world;          /* MPI_COMM_WORLD comm ref or undefined */
};

static int vec_grow(void **v, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *p = realloc(*v, (size_t)c * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

#define VEC_PUSH(vec) \
    (vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) ? NULL : &(vec).v[(vec).n++])

/* ------------------------------------------------------------------------ */
/* Errors                                                                     */
/* ------------------------------------------------------------------------ */

/* An error about the archive of w: "trace archive 'DIR': detail". */
static earl_status wfail(const earl_writer *w, earl_error *err, earl_status code,
                         const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static earl_status wfail(const earl_writer *w, earl_error *err, earl_status code,
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

static earl_status nomem(const earl_writer *w, earl_error *err)
{
    return wfail(w, err, EARL_ERR_NOMEM, "out of memory");
}

static earl_status otf2_fail(earl_writer *w, earl_error *err, OTF2_ErrorCode rc, const char *what)
{
    w->broken = 1;
    return wfail(w, err, EARL_ERR_IO, "libotf2 failed to %s in '%s': %s (%s)", what, w->tmp,
                 OTF2_Error_GetName(rc), OTF2_Error_GetDescription(rc));
}

static const char *const kind_names[EARL_KIND_COUNT] = {
    "ENTER", "LEAVE", "MPI_SEND", "MPI_ISEND", "MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST",
    "MPI_IRECV", "MPI_RECV", "MPI_REQUEST_TEST", "MPI_REQUEST_CANCELLED",
    "MPI_COLLECTIVE_BEGIN", "MPI_COLLECTIVE_END", "OMP_FORK", "OMP_JOIN", "OMP_ACQUIRE_LOCK",
    "OMP_RELEASE_LOCK", "OMP_TASK_CREATE", "OMP_TASK_SWITCH", "OMP_TASK_COMPLETE",
    "THREAD_FORK", "THREAD_JOIN", "THREAD_TEAM_BEGIN", "THREAD_TEAM_END",
    "THREAD_ACQUIRE_LOCK", "THREAD_RELEASE_LOCK", "THREAD_TASK_CREATE", "THREAD_TASK_SWITCH",
    "THREAD_TASK_COMPLETE", "THREAD_CREATE", "THREAD_BEGIN", "THREAD_WAIT", "THREAD_END",
    "PROGRAM_BEGIN", "PROGRAM_END", "METRIC", "RMA_WIN_CREATE", "RMA_WIN_DESTROY",
    "RMA_COLLECTIVE_BEGIN", "RMA_COLLECTIVE_END", "RMA_GROUP_SYNC", "RMA_REQUEST_LOCK",
    "RMA_ACQUIRE_LOCK", "RMA_TRY_LOCK", "RMA_RELEASE_LOCK", "RMA_SYNC", "RMA_WAIT_CHANGE",
    "RMA_PUT", "RMA_GET", "RMA_ATOMIC", "RMA_OP_COMPLETE_BLOCKING",
    "RMA_OP_COMPLETE_NON_BLOCKING", "RMA_OP_TEST", "RMA_OP_COMPLETE_REMOTE",
};

static const char *kname(earl_kind k)
{
    return (unsigned)k < EARL_KIND_COUNT ? kind_names[k] : "unknown kind";
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
        return wfail(w, err, EARL_ERR_IO, "cannot inspect the folder: %s", strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return wfail(w, err, EARL_ERR_INVALID, "the path exists and is not a folder");
    int empty = dir_is_empty(w->dir);
    if (empty < 0)
        return wfail(w, err, EARL_ERR_IO, "cannot list the folder: %s", strerror(errno));
    if (empty)
        return EARL_OK;
    if (!(w->flags & EARL_WRITER_OVERWRITE))
        return wfail(w, err, EARL_ERR_INVALID,
                     "the folder already exists and is not empty; refusing to write into it "
                     "(ask to overwrite to replace an existing archive)");
    if (access(w->anchor, F_OK) != 0)
        return wfail(w, err, EARL_ERR_INVALID,
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
    free(w->str_slots);
    free(w->id_slots);
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
        earl_status st = wfail(w, err, EARL_ERR_INVALID, "cannot write an archive as the root folder");
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
        st = wfail(w, err, EARL_ERR_IO, "cannot create the parent folder '%s': %s", parent,
                   strerror(errno));
    } else if (stat(parent, &pst) != 0 || !S_ISDIR(pst.st_mode)) {
        st = wfail(w, err, EARL_ERR_IO, "cannot create the parent folder '%s': %s", parent,
                   "it exists and is not a folder");
    } else if (access(parent, W_OK | X_OK) != 0) {
        st = wfail(w, err, EARL_ERR_IO, "the folder '%s' is not writable: %s", parent,
                   strerror(errno));
    } else if (!mkdtemp(w->tmp)) {
        st = wfail(w, err, EARL_ERR_IO, "cannot create a temporary folder in '%s': %s", parent,
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
        st = wfail(w, err, EARL_ERR_IO, "libotf2 could not create an archive in '%s'", w->tmp);
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
        st = otf2_fail(w, err, rc, "set up the archive");
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
        return nomem(w, err);
    free(w->creator);
    w->creator = s;
    return EARL_OK;
}

earl_status earl_writer_set_description(earl_writer *w, const char *text, earl_error *err)
{
    char *s = text ? strdup(text) : NULL;
    if (text && !s)
        return nomem(w, err);
    free(w->description);
    w->description = s;
    return EARL_OK;
}

void earl_writer_set_realtime(earl_writer *w, uint64_t realtime_ns)
{
    w->realtime = realtime_ns;
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
/* Definitions                                                                */
/* ------------------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int rehash_strings(earl_writer *w, size_t cap)
{
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t r = 0; r < w->strings.n; r++) {
        size_t i = hash_str(w->strings.v[r]) & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = r + 1;
    }
    free(w->str_slots);
    w->str_slots = slots;
    w->str_cap = cap;
    return 0;
}

earl_status earl_writer_string(earl_writer *w, const char *text, uint32_t *ref, earl_error *err)
{
    if (!text)
        text = "";
    if ((size_t)(w->strings.n + 1) * 2 > w->str_cap &&
        rehash_strings(w, w->str_cap ? w->str_cap * 2 : 256))
        return nomem(w, err);
    size_t i = hash_str(text) & (w->str_cap - 1);
    while (w->str_slots[i]) {
        if (strcmp(w->strings.v[w->str_slots[i] - 1], text) == 0) {
            *ref = w->str_slots[i] - 1;
            return EARL_OK;
        }
        i = (i + 1) & (w->str_cap - 1);
    }
    char *copy = strdup(text);
    char **slot = copy ? VEC_PUSH(w->strings) : NULL;
    if (!slot) {
        free(copy);
        return nomem(w, err);
    }
    *slot = copy;
    w->str_slots[i] = w->strings.n;
    *ref = w->strings.n - 1;
    return EARL_OK;
}

/* Intern a possibly NULL string with a default. */
static earl_status intern(earl_writer *w, const char *text, const char *dflt, uint32_t *ref,
                          earl_error *err)
{
    return earl_writer_string(w, text ? text : dflt, ref, err);
}

earl_status earl_writer_system_node(earl_writer *w, const char *name, const char *class_name,
                                    uint32_t parent, uint32_t *ref, earl_error *err)
{
    if (parent != EARL_UNDEFINED_REF && parent >= w->nodes.n)
        return wfail(w, err, EARL_ERR_INVALID,
                     "system tree node '%s': parent %u is not a defined system tree node",
                     name ? name : "", parent);
    wnode n = { 0, 0, parent };
    earl_status st;
    if ((st = intern(w, name, "", &n.name, err)) || (st = intern(w, class_name, "", &n.class_name, err)))
        return st;
    wnode *slot = VEC_PUSH(w->nodes);
    if (!slot)
        return nomem(w, err);
    *slot = n;
    *ref = w->nodes.n - 1;
    return EARL_OK;
}

earl_status earl_writer_location_group(earl_writer *w, const char *name, uint8_t type,
                                       uint32_t system_node, uint32_t creator, int32_t rank,
                                       uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    if (system_node >= w->nodes.n)
        return wfail(w, err, EARL_ERR_INVALID,
                     "location group '%s': system tree node %u is not defined", nm, system_node);
    if (creator != EARL_UNDEFINED_REF && creator >= w->lgroups.n)
        return wfail(w, err, EARL_ERR_INVALID,
                     "location group '%s': creating location group %u is not defined", nm, creator);
    if (rank >= 0) {
        if (w->world != EARL_UNDEFINED_REF)
            return wfail(w, err, EARL_ERR_INVALID,
                         "location group '%s' with rank %d: MPI_COMM_WORLD is already defined; "
                         "define every MPI process before it", nm, (int)rank);
        if ((uint32_t)rank < w->rank_group.n && w->rank_group.v[rank] >= 0)
            return wfail(w, err, EARL_ERR_INVALID,
                         "location group '%s': rank %d is already the rank of location group %d",
                         nm, (int)rank, (int)w->rank_group.v[rank]);
        uint32_t old = w->rank_group.n;
        if (vec_grow((void **)&w->rank_group.v, &w->rank_group.cap, (uint32_t)rank + 1,
                     sizeof *w->rank_group.v))
            return nomem(w, err);
        for (uint32_t i = old; i <= (uint32_t)rank; i++)
            w->rank_group.v[i] = -1;
        if ((uint32_t)rank + 1 > w->rank_group.n)
            w->rank_group.n = (uint32_t)rank + 1;
    }
    wlgroup g = { 0, system_node, creator, type, rank < 0 ? -1 : rank, 0, -1 };
    earl_status st = intern(w, name, "", &g.name, err);
    if (st)
        return st;
    wlgroup *slot = VEC_PUSH(w->lgroups);
    if (!slot)
        return nomem(w, err);
    *slot = g;
    *ref = w->lgroups.n - 1;
    if (rank >= 0)
        w->rank_group.v[rank] = (int32_t)*ref;
    return EARL_OK;
}

earl_status earl_writer_process(earl_writer *w, const char *name, uint32_t system_node,
                                int32_t rank, uint32_t *ref, earl_error *err)
{
    return earl_writer_location_group(w, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, system_node,
                                      EARL_UNDEFINED_REF, rank, ref, err);
}

static int id_insert(earl_writer *w, uint64_t id, uint32_t index)
{
    if ((size_t)(w->locs.n + 1) * 2 > w->id_cap) {
        size_t cap = w->id_cap ? w->id_cap * 2 : 64;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (uint32_t l = 0; l < w->locs.n; l++) {
            size_t i = hash_u64(w->locs.v[l].id) & (cap - 1);
            while (slots[i])
                i = (i + 1) & (cap - 1);
            slots[i] = l + 1;
        }
        free(w->id_slots);
        w->id_slots = slots;
        w->id_cap = cap;
    }
    size_t i = hash_u64(id) & (w->id_cap - 1);
    while (w->id_slots[i])
        i = (i + 1) & (w->id_cap - 1);
    w->id_slots[i] = index + 1;
    return 0;
}

static int64_t id_find(const earl_writer *w, uint64_t id)
{
    if (!w->id_cap)
        return -1;
    size_t i = hash_u64(id) & (w->id_cap - 1);
    while (w->id_slots[i]) {
        if (w->locs.v[w->id_slots[i] - 1].id == id)
            return w->id_slots[i] - 1;
        i = (i + 1) & (w->id_cap - 1);
    }
    return -1;
}

earl_status earl_writer_location(earl_writer *w, uint32_t group, const char *name, uint8_t type,
                                 uint64_t id, earl_loc *loc, earl_error *err)
{
    const char *nm = name ? name : "";
    if (group >= w->lgroups.n)
        return wfail(w, err, EARL_ERR_INVALID, "location '%s': location group %u is not defined",
                     nm, group);
    if (w->locs.n >= (uint32_t)INT32_MAX)
        return wfail(w, err, EARL_ERR_INVALID, "too many locations");
    wlgroup *g = &w->lgroups.v[group];
    if (id == EARL_WRITER_AUTO_ID)
        id = ((uint64_t)g->n_locs << 32) |
             (g->rank >= 0 ? (uint64_t)(uint32_t)g->rank : ((uint64_t)1 << 31) | group);
    int64_t other = id_find(w, id);
    if (other >= 0)
        return wfail(w, err, EARL_ERR_INVALID,
                     "location '%s': id %llu is already the id of location %lld", nm,
                     (unsigned long long)id, (long long)other);
    wloc l = { .id = id, .group = group, .type = type };
    earl_status st = intern(w, name, "", &l.name, err);
    if (st)
        return st;
    l.evt = OTF2_Archive_GetEvtWriter(w->archive, id);
    if (!l.evt) {
        w->broken = 1;
        return wfail(w, err, EARL_ERR_IO, "libotf2 could not create the event writer of location %llu",
                     (unsigned long long)id);
    }
    wloc *slot = VEC_PUSH(w->locs);
    if (!slot || id_insert(w, id, w->locs.n - 1))
        return nomem(w, err);
    *slot = l;
    *loc = (earl_loc)(w->locs.n - 1);
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD && g->master < 0)
        g->master = *loc;
    g->n_locs++;
    return EARL_OK;
}

earl_status earl_writer_region(earl_writer *w, const earl_writer_region_def *def, uint32_t *ref,
                               earl_error *err)
{
    if (!def || !def->name)
        return wfail(w, err, EARL_ERR_INVALID, "a region needs a name");
    wregion r = { .role = def->role, .paradigm = def->paradigm, .flags = def->flags,
                  .begin = def->begin_line, .end = def->end_line };
    earl_status st;
    if ((st = intern(w, def->name, "", &r.name, err)) ||
        (st = intern(w, def->canonical_name, def->name, &r.canonical, err)) ||
        (st = intern(w, def->description, "", &r.description, err)) ||
        (st = intern(w, def->source_file, "", &r.file, err)))
        return st;
    wregion *slot = VEC_PUSH(w->regions);
    if (!slot)
        return nomem(w, err);
    *slot = r;
    *ref = w->regions.n - 1;
    return EARL_OK;
}

/* Add a group, or find an identical one (as Score-P shares them). */
static earl_status add_group(earl_writer *w, uint32_t name, uint8_t type, uint8_t paradigm,
                             uint32_t flags, uint32_t n, const uint64_t *members, int share,
                             uint32_t *ref, earl_error *err)
{
    if (share) {
        for (uint32_t g = 0; g < w->groups.n; g++) {
            const wgroup *o = &w->groups.v[g];
            if (o->type == type && o->paradigm == paradigm && o->flags == flags && o->n == n &&
                o->name == name && (n == 0 || memcmp(o->members, members, n * sizeof *members) == 0)) {
                *ref = g;
                return EARL_OK;
            }
        }
    }
    wgroup g = { name, type, paradigm, flags, n, NULL };
    if (n) {
        g.members = malloc(n * sizeof *members);
        if (!g.members)
            return nomem(w, err);
        memcpy(g.members, members, n * sizeof *members);
    }
    wgroup *slot = VEC_PUSH(w->groups);
    if (!slot) {
        free(g.members);
        return nomem(w, err);
    }
    *slot = g;
    *ref = w->groups.n - 1;
    return EARL_OK;
}

earl_status earl_writer_group(earl_writer *w, const char *name, uint8_t type, uint8_t paradigm,
                              uint32_t flags, uint32_t n_members, const uint64_t *members,
                              uint32_t *ref, earl_error *err)
{
    if (n_members && !members)
        return wfail(w, err, EARL_ERR_INVALID, "group '%s': no member list", name ? name : "");
    uint32_t nm;
    earl_status st = intern(w, name, "", &nm, err);
    if (st)
        return st;
    return add_group(w, nm, type, paradigm, flags, n_members, members, 0, ref, err);
}

static earl_status add_comm(earl_writer *w, const wcomm *c, uint32_t *ref, earl_error *err)
{
    wcomm *slot = VEC_PUSH(w->comms);
    if (!slot)
        return nomem(w, err);
    *slot = *c;
    *ref = w->comms.n - 1;
    return EARL_OK;
}

static earl_status check_parent(earl_writer *w, const char *what, const char *name, uint32_t parent,
                                earl_error *err)
{
    if (parent != EARL_UNDEFINED_REF && parent >= w->comms.n)
        return wfail(w, err, EARL_ERR_INVALID, "%s '%s': parent communicator %u is not defined",
                     what, name ? name : "", parent);
    return EARL_OK;
}

earl_status earl_writer_comm_world(earl_writer *w, const char *name, uint32_t *ref, earl_error *err)
{
    if (w->world != EARL_UNDEFINED_REF)
        return wfail(w, err, EARL_ERR_INVALID, "MPI_COMM_WORLD is already defined (communicator %u)",
                     w->world);
    uint32_t size = w->rank_group.n;
    if (size == 0)
        return wfail(w, err, EARL_ERR_INVALID,
                     "MPI_COMM_WORLD: no MPI process (location group with a rank) is defined");
    for (uint32_t r = 0; r < size; r++)
        if (w->rank_group.v[r] < 0)
            return wfail(w, err, EARL_ERR_INVALID,
                         "MPI_COMM_WORLD: rank %u has no process while rank %u does", r, size - 1);
    uint64_t *members = malloc(size * sizeof *members);
    if (!members)
        return nomem(w, err);
    for (uint32_t r = 0; r < size; r++)
        members[r] = r;
    wcomm c = { .kind = COMM_MPI, .paradigm = OTF2_PARADIGM_MPI, .parent = EARL_UNDEFINED_REF,
                .size = size };
    uint32_t gname;
    earl_status st = intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       size, members, 1, &c.group, err);
    free(members);
    if (!st)
        st = intern(w, name, "MPI_COMM_WORLD", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    if (!st)
        w->world = *ref;
    return st;
}

earl_status earl_writer_comm(earl_writer *w, const char *name, uint32_t parent, uint32_t n,
                             const uint32_t *world_ranks, uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    earl_status st = check_parent(w, "communicator", name, parent, err);
    if (st)
        return st;
    if (n == 0 || !world_ranks)
        return wfail(w, err, EARL_ERR_INVALID, "communicator '%s': no members", nm);
    uint64_t *members = malloc(n * sizeof *members);
    if (!members)
        return nomem(w, err);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = world_ranks[i];
        if (r >= w->rank_group.n || w->rank_group.v[r] < 0) {
            free(members);
            return wfail(w, err, EARL_ERR_INVALID,
                         "communicator '%s': member %u is world rank %u, which no process has",
                         nm, i, r);
        }
        for (uint32_t j = 0; j < i; j++)
            if (members[j] == r) {
                free(members);
                return wfail(w, err, EARL_ERR_INVALID,
                             "communicator '%s': world rank %u is listed twice", nm, r);
            }
        members[i] = r;
    }
    wcomm c = { .kind = COMM_MPI, .paradigm = OTF2_PARADIGM_MPI, .parent = parent, .size = n };
    uint32_t gname;
    st = intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       n, members, 1, &c.group, err);
    free(members);
    if (!st)
        st = intern(w, name, "", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    return st;
}

earl_status earl_writer_comm_self(earl_writer *w, const char *name, uint32_t *ref, earl_error *err)
{
    wcomm c = { .kind = COMM_SELF, .paradigm = OTF2_PARADIGM_MPI, .parent = EARL_UNDEFINED_REF,
                .size = 1 };
    uint32_t gname;
    earl_status st = intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       0, NULL, 1, &c.group, err);
    if (!st)
        st = intern(w, name, "MPI_COMM_SELF", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    return st;
}

earl_status earl_writer_thread_team(earl_writer *w, const char *name, uint8_t paradigm,
                                    uint32_t parent, uint32_t n, const earl_loc *threads,
                                    uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    earl_status st = check_parent(w, "thread team", name, parent, err);
    if (st)
        return st;
    if (n == 0 || !threads)
        return wfail(w, err, EARL_ERR_INVALID, "thread team '%s': no threads", nm);
    for (uint32_t i = 0; i < n; i++) {
        if (threads[i] < 0 || (uint32_t)threads[i] >= w->locs.n)
            return wfail(w, err, EARL_ERR_INVALID,
                         "thread team '%s': thread %u is location %d, which is not defined", nm, i,
                         (int)threads[i]);
        for (uint32_t j = 0; j < i; j++)
            if (threads[j] == threads[i])
                return wfail(w, err, EARL_ERR_INVALID,
                             "thread team '%s': location %d is listed twice", nm, (int)threads[i]);
    }
    wcomm c = { .kind = COMM_TEAM, .paradigm = paradigm, .group = EARL_UNDEFINED_REF,
                .parent = parent, .size = n };
    if ((st = intern(w, name, "", &c.name, err)))
        return st;
    c.threads = malloc(n * sizeof *threads);
    if (!c.threads)
        return nomem(w, err);
    memcpy(c.threads, threads, n * sizeof *threads);
    st = add_comm(w, &c, ref, err);
    if (st)
        free(c.threads);
    return st;
}

earl_status earl_writer_rma_win(earl_writer *w, const char *name, uint32_t comm, uint32_t *ref,
                                earl_error *err)
{
    if (comm >= w->comms.n)
        return wfail(w, err, EARL_ERR_INVALID, "RMA window '%s': communicator %u is not defined",
                     name ? name : "", comm);
    wwin win = { 0, comm };
    earl_status st = intern(w, name, "", &win.name, err);
    if (st)
        return st;
    wwin *slot = VEC_PUSH(w->wins);
    if (!slot)
        return nomem(w, err);
    *slot = win;
    *ref = w->wins.n - 1;
    return EARL_OK;
}

earl_status earl_writer_metric_member(earl_writer *w, const earl_writer_metric_member_def *def,
                                      uint32_t *ref, earl_error *err)
{
    if (!def || !def->name)
        return wfail(w, err, EARL_ERR_INVALID, "a metric member needs a name");
    if (def->value_type != OTF2_TYPE_INT64 && def->value_type != OTF2_TYPE_UINT64 &&
        def->value_type != OTF2_TYPE_DOUBLE)
        return wfail(w, err, EARL_ERR_INVALID,
                     "metric member '%s': value type %u is not INT64, UINT64 or DOUBLE", def->name,
                     def->value_type);
    wmember m = { .metric_type = def->metric_type, .mode = def->mode,
                  .value_type = def->value_type, .base = def->base, .exponent = def->exponent };
    earl_status st;
    if ((st = intern(w, def->name, "", &m.name, err)) ||
        (st = intern(w, def->description, "", &m.description, err)) ||
        (st = intern(w, def->unit, "#", &m.unit, err)))
        return st;
    wmember *slot = VEC_PUSH(w->members);
    if (!slot)
        return nomem(w, err);
    *slot = m;
    *ref = w->members.n - 1;
    return EARL_OK;
}

earl_status earl_writer_metric_class(earl_writer *w, uint32_t n, const uint32_t *members,
                                     uint8_t occurrence, uint8_t recorder_kind, uint32_t *ref,
                                     earl_error *err)
{
    if (n == 0 || n > 255 || !members)
        return wfail(w, err, EARL_ERR_INVALID, "a metric class needs 1 to 255 members (got %u)", n);
    wclass c = { n, malloc(n * sizeof *members), occurrence, recorder_kind,
                 malloc(n * sizeof(OTF2_Type)) };
    if (!c.members || !c.types) {
        free(c.members);
        free(c.types);
        return nomem(w, err);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (members[i] >= w->members.n) {
            free(c.members);
            free(c.types);
            return wfail(w, err, EARL_ERR_INVALID, "metric class: member %u (%u) is not defined", i,
                         members[i]);
        }
        c.members[i] = members[i];
        c.types[i] = w->members.v[members[i]].value_type;
    }
    wclass *slot = VEC_PUSH(w->classes);
    if (!slot) {
        free(c.members);
        free(c.types);
        return nomem(w, err);
    }
    *slot = c;
    *ref = w->classes.n - 1;
    return EARL_OK;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

static earl_status bad_ref(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                           earl_time t, const char *what, uint32_t ref, uint32_t defined)
{
    return wfail(w, err, EARL_ERR_INVALID,
                 "%s at time %llu on location %d: %s %u is not defined (%u defined)", kname(kind),
                 (unsigned long long)t, (int)loc, what, ref, defined);
}

/* A communicator of the right family, and peer < its size (unless peer may
 * be undefined and is). */
static earl_status check_comm(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                              earl_time t, uint32_t comm, int want_team, uint32_t peer,
                              const char *peer_what, int peer_optional)
{
    if (comm >= w->comms.n)
        return bad_ref(w, err, kind, loc, t, want_team ? "thread team" : "communicator", comm,
                       w->comms.n);
    const wcomm *c = &w->comms.v[comm];
    if ((c->kind == COMM_TEAM) != want_team)
        return wfail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: communicator %u is %s, not %s", kname(kind),
                     (unsigned long long)t, (int)loc, comm,
                     want_team ? "an MPI communicator" : "a thread team",
                     want_team ? "a thread team" : "an MPI communicator");
    if (peer_what && !(peer_optional && peer == EARL_UNDEFINED_REF) && peer >= c->size)
        return wfail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: %s %u is outside communicator %u of size %u",
                     kname(kind), (unsigned long long)t, (int)loc, peer_what, peer, comm, c->size);
    return EARL_OK;
}

static earl_status check_win(earl_writer *w, earl_error *err, earl_kind kind, earl_loc loc,
                             earl_time t, uint32_t win, uint32_t remote, int has_remote)
{
    if (win >= w->wins.n)
        return bad_ref(w, err, kind, loc, t, "RMA window", win, w->wins.n);
    const wcomm *c = &w->comms.v[w->wins.v[win].comm];
    if (has_remote && remote != EARL_UNDEFINED_REF && remote >= c->size)
        return wfail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: remote %u is outside window %u of size %u",
                     kname(kind), (unsigned long long)t, (int)loc, remote, win, c->size);
    return EARL_OK;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

earl_status earl_writer_event(earl_writer *w, earl_kind kind, earl_loc loc, earl_time t,
                              const earl_writer_record *rec, earl_error *err)
{
    static const earl_writer_record none = { 0 };
    if (w->broken)
        return wfail(w, err, EARL_ERR_IO, "an earlier write failed; the archive can only be aborted");
    if (loc < 0 || (uint32_t)loc >= w->locs.n)
        return wfail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu: location %d is not defined (%u locations defined)", kname(kind),
                     (unsigned long long)t, (int)loc, w->locs.n);
    wloc *L = &w->locs.v[loc];
    if (t < L->last)
        return wfail(w, err, EARL_ERR_INVALID,
                     "%s at time %llu on location %d: time goes backwards (previous event at %llu)",
                     kname(kind), (unsigned long long)t, (int)loc, (unsigned long long)L->last);
    if (!rec)
        rec = &none;
    OTF2_EvtWriter *ew = L->evt;
    OTF2_ErrorCode rc = OTF2_SUCCESS;
    earl_status st = EARL_OK;
    const uint32_t ref = rec->ref;

    switch (kind) {
    case EARL_ENTER:
    case EARL_LEAVE:
        if (ref >= w->regions.n)
            return bad_ref(w, err, kind, loc, t, "region", ref, w->regions.n);
        rc = kind == EARL_ENTER ? OTF2_EvtWriter_Enter(ew, NULL, t, ref)
                                : OTF2_EvtWriter_Leave(ew, NULL, t, ref);
        break;
    case EARL_MPI_SEND:
    case EARL_MPI_ISEND:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "destination rank", 0)))
            return st;
        rc = kind == EARL_MPI_SEND
                 ? OTF2_EvtWriter_MpiSend(ew, NULL, t, rec->peer, ref, rec->tag, rec->bytes)
                 : OTF2_EvtWriter_MpiIsend(ew, NULL, t, rec->peer, ref, rec->tag, rec->bytes, rec->id);
        break;
    case EARL_MPI_RECV:
    case EARL_MPI_IRECV:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "source rank", 0)))
            return st;
        rc = kind == EARL_MPI_RECV
                 ? OTF2_EvtWriter_MpiRecv(ew, NULL, t, rec->peer, ref, rec->tag, rec->bytes)
                 : OTF2_EvtWriter_MpiIrecv(ew, NULL, t, rec->peer, ref, rec->tag, rec->bytes, rec->id);
        break;
    case EARL_MPI_ISEND_COMPLETE:
        rc = OTF2_EvtWriter_MpiIsendComplete(ew, NULL, t, rec->id);
        break;
    case EARL_MPI_IRECV_REQUEST:
        rc = OTF2_EvtWriter_MpiIrecvRequest(ew, NULL, t, rec->id);
        break;
    case EARL_MPI_REQUEST_TEST:
        rc = OTF2_EvtWriter_MpiRequestTest(ew, NULL, t, rec->id);
        break;
    case EARL_MPI_REQUEST_CANCELLED:
        rc = OTF2_EvtWriter_MpiRequestCancelled(ew, NULL, t, rec->id);
        break;
    case EARL_MPI_COLLECTIVE_BEGIN:
        rc = OTF2_EvtWriter_MpiCollectiveBegin(ew, NULL, t);
        break;
    case EARL_MPI_COLLECTIVE_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 0, rec->peer, "root rank", 1)))
            return st;
        rc = OTF2_EvtWriter_MpiCollectiveEnd(ew, NULL, t, rec->op, ref, rec->peer, rec->bytes,
                                             rec->bytes2);
        break;
    case EARL_OMP_FORK:
        rc = OTF2_EvtWriter_OmpFork(ew, NULL, t, rec->count);
        break;
    case EARL_OMP_JOIN:
        rc = OTF2_EvtWriter_OmpJoin(ew, NULL, t);
        break;
    case EARL_OMP_ACQUIRE_LOCK:
        rc = OTF2_EvtWriter_OmpAcquireLock(ew, NULL, t, (uint32_t)rec->id, rec->count);
        break;
    case EARL_OMP_RELEASE_LOCK:
        rc = OTF2_EvtWriter_OmpReleaseLock(ew, NULL, t, (uint32_t)rec->id, rec->count);
        break;
    case EARL_OMP_TASK_CREATE:
        rc = OTF2_EvtWriter_OmpTaskCreate(ew, NULL, t, rec->id);
        break;
    case EARL_OMP_TASK_SWITCH:
        rc = OTF2_EvtWriter_OmpTaskSwitch(ew, NULL, t, rec->id);
        break;
    case EARL_OMP_TASK_COMPLETE:
        rc = OTF2_EvtWriter_OmpTaskComplete(ew, NULL, t, rec->id);
        break;
    case EARL_THREAD_FORK:
        rc = OTF2_EvtWriter_ThreadFork(ew, NULL, t, rec->model, rec->count);
        break;
    case EARL_THREAD_JOIN:
        rc = OTF2_EvtWriter_ThreadJoin(ew, NULL, t, rec->model);
        break;
    case EARL_THREAD_TEAM_BEGIN:
    case EARL_THREAD_TEAM_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, 0, NULL, 0)))
            return st;
        rc = kind == EARL_THREAD_TEAM_BEGIN ? OTF2_EvtWriter_ThreadTeamBegin(ew, NULL, t, ref)
                                            : OTF2_EvtWriter_ThreadTeamEnd(ew, NULL, t, ref);
        break;
    case EARL_THREAD_ACQUIRE_LOCK:
        rc = OTF2_EvtWriter_ThreadAcquireLock(ew, NULL, t, rec->model, (uint32_t)rec->id, rec->count);
        break;
    case EARL_THREAD_RELEASE_LOCK:
        rc = OTF2_EvtWriter_ThreadReleaseLock(ew, NULL, t, rec->model, (uint32_t)rec->id, rec->count);
        break;
    case EARL_THREAD_TASK_CREATE:
    case EARL_THREAD_TASK_SWITCH:
    case EARL_THREAD_TASK_COMPLETE:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, rec->peer, "creating thread", 0)))
            return st;
        rc = kind == EARL_THREAD_TASK_CREATE
                 ? OTF2_EvtWriter_ThreadTaskCreate(ew, NULL, t, ref, rec->peer, rec->count)
             : kind == EARL_THREAD_TASK_SWITCH
                 ? OTF2_EvtWriter_ThreadTaskSwitch(ew, NULL, t, ref, rec->peer, rec->count)
                 : OTF2_EvtWriter_ThreadTaskComplete(ew, NULL, t, ref, rec->peer, rec->count);
        break;
    case EARL_THREAD_CREATE:
    case EARL_THREAD_BEGIN:
    case EARL_THREAD_WAIT:
    case EARL_THREAD_END:
        if ((st = check_comm(w, err, kind, loc, t, ref, 1, 0, NULL, 0)))
            return st;
        rc = kind == EARL_THREAD_CREATE  ? OTF2_EvtWriter_ThreadCreate(ew, NULL, t, ref, rec->id)
             : kind == EARL_THREAD_BEGIN ? OTF2_EvtWriter_ThreadBegin(ew, NULL, t, ref, rec->id)
             : kind == EARL_THREAD_WAIT  ? OTF2_EvtWriter_ThreadWait(ew, NULL, t, ref, rec->id)
                                         : OTF2_EvtWriter_ThreadEnd(ew, NULL, t, ref, rec->id);
        break;
    case EARL_PROGRAM_BEGIN:
        if (ref >= w->strings.n)
            return bad_ref(w, err, kind, loc, t, "program name string", ref, w->strings.n);
        if (rec->n_args && !rec->args)
            return wfail(w, err, EARL_ERR_INVALID, "PROGRAM_BEGIN: %u arguments but no list",
                         rec->n_args);
        for (uint32_t i = 0; i < rec->n_args; i++)
            if (rec->args[i] >= w->strings.n)
                return bad_ref(w, err, kind, loc, t, "argument string", rec->args[i], w->strings.n);
        rc = OTF2_EvtWriter_ProgramBegin(ew, NULL, t, ref, rec->n_args, rec->args);
        break;
    case EARL_PROGRAM_END:
        rc = OTF2_EvtWriter_ProgramEnd(ew, NULL, t, rec->exit_status);
        break;
    case EARL_METRIC: {
        if (ref >= w->classes.n)
            return bad_ref(w, err, kind, loc, t, "metric class", ref, w->classes.n);
        const wclass *c = &w->classes.v[ref];
        if (rec->n_values != c->n || !rec->values)
            return wfail(w, err, EARL_ERR_INVALID,
                         "METRIC at time %llu on location %d: metric class %u has %u members but "
                         "%u values were given", (unsigned long long)t, (int)loc, ref, c->n,
                         rec->values ? rec->n_values : 0);
        OTF2_MetricValue values[255];
        for (uint32_t i = 0; i < c->n; i++)
            memcpy(&values[i], &rec->values[i], sizeof values[i]);
        rc = OTF2_EvtWriter_Metric(ew, NULL, t, ref, (uint8_t)c->n, c->types, values);
        break;
    }
    case EARL_RMA_WIN_CREATE:
    case EARL_RMA_WIN_DESTROY:
    case EARL_RMA_WAIT_CHANGE:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        rc = kind == EARL_RMA_WIN_CREATE    ? OTF2_EvtWriter_RmaWinCreate(ew, NULL, t, ref)
             : kind == EARL_RMA_WIN_DESTROY ? OTF2_EvtWriter_RmaWinDestroy(ew, NULL, t, ref)
                                            : OTF2_EvtWriter_RmaWaitChange(ew, NULL, t, ref);
        break;
    case EARL_RMA_COLLECTIVE_BEGIN:
        rc = OTF2_EvtWriter_RmaCollectiveBegin(ew, NULL, t);
        break;
    case EARL_RMA_COLLECTIVE_END:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaCollectiveEnd(ew, NULL, t, rec->op, rec->sync_level, ref, rec->peer,
                                             rec->bytes, rec->bytes2);
        break;
    case EARL_RMA_GROUP_SYNC:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        if (rec->peer >= w->groups.n)
            return bad_ref(w, err, kind, loc, t, "group", rec->peer, w->groups.n);
        rc = OTF2_EvtWriter_RmaGroupSync(ew, NULL, t, rec->sync_level, ref, rec->peer);
        break;
    case EARL_RMA_REQUEST_LOCK:
    case EARL_RMA_ACQUIRE_LOCK:
    case EARL_RMA_TRY_LOCK:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = kind == EARL_RMA_REQUEST_LOCK
                 ? OTF2_EvtWriter_RmaRequestLock(ew, NULL, t, ref, rec->peer, rec->id, rec->op)
             : kind == EARL_RMA_ACQUIRE_LOCK
                 ? OTF2_EvtWriter_RmaAcquireLock(ew, NULL, t, ref, rec->peer, rec->id, rec->op)
                 : OTF2_EvtWriter_RmaTryLock(ew, NULL, t, ref, rec->peer, rec->id, rec->op);
        break;
    case EARL_RMA_RELEASE_LOCK:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaReleaseLock(ew, NULL, t, ref, rec->peer, rec->id);
        break;
    case EARL_RMA_SYNC:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaSync(ew, NULL, t, ref, rec->peer, rec->op);
        break;
    case EARL_RMA_PUT:
    case EARL_RMA_GET:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = kind == EARL_RMA_PUT
                 ? OTF2_EvtWriter_RmaPut(ew, NULL, t, ref, rec->peer, rec->bytes, rec->id)
                 : OTF2_EvtWriter_RmaGet(ew, NULL, t, ref, rec->peer, rec->bytes, rec->id);
        break;
    case EARL_RMA_ATOMIC:
        if ((st = check_win(w, err, kind, loc, t, ref, rec->peer, 1)))
            return st;
        rc = OTF2_EvtWriter_RmaAtomic(ew, NULL, t, ref, rec->peer, rec->op, rec->bytes, rec->bytes2,
                                      rec->id);
        break;
    case EARL_RMA_OP_COMPLETE_BLOCKING:
    case EARL_RMA_OP_COMPLETE_NON_BLOCKING:
    case EARL_RMA_OP_TEST:
    case EARL_RMA_OP_COMPLETE_REMOTE:
        if ((st = check_win(w, err, kind, loc, t, ref, 0, 0)))
            return st;
        rc = kind == EARL_RMA_OP_COMPLETE_BLOCKING
                 ? OTF2_EvtWriter_RmaOpCompleteBlocking(ew, NULL, t, ref, rec->id)
             : kind == EARL_RMA_OP_COMPLETE_NON_BLOCKING
                 ? OTF2_EvtWriter_RmaOpCompleteNonBlocking(ew, NULL, t, ref, rec->id)
             : kind == EARL_RMA_OP_TEST
                 ? OTF2_EvtWriter_RmaOpTest(ew, NULL, t, ref, rec->id)
                 : OTF2_EvtWriter_RmaOpCompleteRemote(ew, NULL, t, ref, rec->id);
        break;
    default:
        return wfail(w, err, EARL_ERR_INVALID, "event kind %d on location %d is not a known kind",
                     (int)kind, (int)loc);
    }
    if (rc != OTF2_SUCCESS)
        return otf2_fail(w, err, rc, "write an event");
    if (L->n_events == 0 || t < L->tmin)
        L->tmin = t;
    if (L->n_events == 0 || t > L->tmax)
        L->tmax = t;
    L->last = t;
    L->n_events++;
    return EARL_OK;
}

#pragma GCC diagnostic pop

/* Typed shorthands.  ENTER and LEAVE skip the record for speed. */

static inline earl_status enter_leave(earl_writer *w, earl_kind kind, earl_loc loc, earl_time t,
                                      uint32_t region, earl_error *err)
{
    if (w->broken || loc < 0 || (uint32_t)loc >= w->locs.n || region >= w->regions.n) {
        earl_writer_record r = { .ref = region };
        return earl_writer_event(w, kind, loc, t, &r, err);
    }
    wloc *L = &w->locs.v[loc];
    if (t < L->last || L->n_events == 0) {
        earl_writer_record r = { .ref = region };
        return earl_writer_event(w, kind, loc, t, &r, err);
    }
    OTF2_ErrorCode rc = kind == EARL_ENTER ? OTF2_EvtWriter_Enter(L->evt, NULL, t, region)
                                           : OTF2_EvtWriter_Leave(L->evt, NULL, t, region);
    if (rc != OTF2_SUCCESS)
        return otf2_fail(w, err, rc, "write an event");
    if (t > L->tmax)
        L->tmax = t;
    L->last = t;
    L->n_events++;
    return EARL_OK;
}

earl_status earl_writer_enter(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                              earl_error *err)
{
    return enter_leave(w, EARL_ENTER, loc, t, region, err);
}

earl_status earl_writer_leave(earl_writer *w, earl_loc loc, earl_time t, uint32_t region,
                              earl_error *err)
{
    return enter_leave(w, EARL_LEAVE, loc, t, region, err);
}

earl_status earl_writer_mpi_send(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                 uint32_t comm, uint32_t tag, uint64_t bytes, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = dest, .tag = tag, .bytes = bytes };
    return earl_writer_event(w, EARL_MPI_SEND, loc, t, &r, err);
}

earl_status earl_writer_mpi_recv(earl_writer *w, earl_loc loc, earl_time t, uint32_t source,
                                 uint32_t comm, uint32_t tag, uint64_t bytes, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = source, .tag = tag, .bytes = bytes };
    return earl_writer_event(w, EARL_MPI_RECV, loc, t, &r, err);
}

earl_status earl_writer_mpi_isend(earl_writer *w, earl_loc loc, earl_time t, uint32_t dest,
                                  uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t request,
                                  earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = dest, .tag = tag, .bytes = bytes, .id = request };
    return earl_writer_event(w, EARL_MPI_ISEND, loc, t, &r, err);
}

earl_status earl_writer_mpi_isend_complete(earl_writer *w, earl_loc loc, earl_time t,
                                           uint64_t request, earl_error *err)
{
    earl_writer_record r = { .id = request };
    return earl_writer_event(w, EARL_MPI_ISEND_COMPLETE, loc, t, &r, err);
}

earl_status earl_writer_mpi_irecv_request(earl_writer *w, earl_loc loc, earl_time t,
                                          uint64_t request, earl_error *err)
{
    earl_writer_record r = { .id = request };
    return earl_writer_event(w, EARL_MPI_IRECV_REQUEST, loc, t, &r, err);
}

earl_status earl_writer_mpi_irecv(earl_writer *w, earl_loc loc, earl_time t, uint32_t source,
                                  uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t request,
                                  earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = source, .tag = tag, .bytes = bytes, .id = request };
    return earl_writer_event(w, EARL_MPI_IRECV, loc, t, &r, err);
}

earl_status earl_writer_mpi_collective_begin(earl_writer *w, earl_loc loc, earl_time t,
                                             earl_error *err)
{
    return earl_writer_event(w, EARL_MPI_COLLECTIVE_BEGIN, loc, t, NULL, err);
}

earl_status earl_writer_mpi_collective_end(earl_writer *w, earl_loc loc, earl_time t, uint8_t op,
                                           uint32_t comm, uint32_t root, uint64_t sent,
                                           uint64_t received, earl_error *err)
{
    earl_writer_record r = { .ref = comm, .peer = root, .op = op, .bytes = sent, .bytes2 = received };
    return earl_writer_event(w, EARL_MPI_COLLECTIVE_END, loc, t, &r, err);
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
            return wfail(w, err, EARL_ERR_INVALID,
                         "MPI rank %u has no process while rank %u does", r, n_ranks - 1);
        if (w->lgroups.v[g].master < 0)
            return wfail(w, err, EARL_ERR_INVALID,
                         "the process of MPI rank %u has no CPU thread location", r);
    }
    if (w->world != EARL_UNDEFINED_REF && w->comms.v[w->world].size != n_ranks)
        return wfail(w, err, EARL_ERR_INVALID, "MPI_COMM_WORLD has %u ranks but %u processes have a rank",
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
        return nomem(w, err);
    }
    uint32_t empty;
    if ((st = intern(w, NULL, "", &empty, err)))
        goto out;

    if (n_ranks) {
        wgroup *g = &p->extra[p->n_extra];
        *g = (wgroup){ empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       n_ranks, malloc(n_ranks * sizeof(uint64_t)) };
        if (!g->members) {
            st = nomem(w, err);
            goto out;
        }
        for (uint32_t r = 0; r < n_ranks; r++)
            g->members[r] = w->locs.v[w->lgroups.v[w->rank_group.v[r]].master].id;
        p->mpi_locations = w->groups.n + p->n_extra++;
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
            st = nomem(w, err);
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
                st = nomem(w, err);
                goto out;
            }
            for (uint32_t i = 0; i < cm->size; i++)
                tg->members[i] = (uint64_t)(index[cm->threads[i]] - 1);
            cm->group = w->groups.n + p->n_extra++;
        }
    }
    for (size_t i = 0; i < N_PARADIGMS; i++)
        if (p->paradigm_used[i] &&
            (st = intern(w, paradigm_table[i].name, "", &p->paradigm_name[i], err)))
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
            return otf2_fail(w, err, rc_, what);         \
    } while (0)

static earl_status write_global_defs(earl_writer *w, const close_plan *p, earl_error *err)
{
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(w->archive);
    if (!g) {
        w->broken = 1;
        return wfail(w, err, EARL_ERR_IO, "libotf2 could not create the global definition writer");
    }
    uint64_t tmin = UINT64_MAX, tmax = 0;
    for (uint32_t l = 0; l < w->locs.n; l++) {
        const wloc *L = &w->locs.v[l];
        if (!L->n_events)
            continue;
        if (L->tmin < tmin)
            tmin = L->tmin;
        if (L->tmax > tmax)
            tmax = L->tmax;
    }
    if (tmin == UINT64_MAX)
        tmin = tmax = 0;
    TRY(OTF2_GlobalDefWriter_WriteClockProperties(g, w->resolution, tmin, tmax - tmin, w->realtime),
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
        TRY(OTF2_GlobalDefWriter_WriteLocation(g, L->id, L->name, L->type, L->n_events, L->group),
            "write a location");
    }
    for (uint32_t i = 0; i < w->regions.n; i++) {
        const wregion *r = &w->regions.v[i];
        TRY(OTF2_GlobalDefWriter_WriteRegion(g, i, r->name, r->canonical, r->description, r->role,
                                             r->paradigm, r->flags, r->file, r->begin, r->end),
            "write a region");
    }
    /* COMM_LOCATIONS groups first: readers such as otf2-print resolve the
     * communicator groups that refer to them as they read them. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < w->groups.n + p->n_extra; i++) {
            const wgroup *gr = i < w->groups.n ? &w->groups.v[i] : &p->extra[i - w->groups.n];
            if ((gr->type == OTF2_GROUP_TYPE_COMM_LOCATIONS) != (pass == 0))
                continue;
            TRY(OTF2_GlobalDefWriter_WriteGroup(g, i, gr->name, gr->type, gr->paradigm, gr->flags,
                                                gr->n, gr->members),
                "write a group");
        }
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
        return wfail(w, err, EARL_ERR_IO, "an earlier write failed; nothing was written");
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
            st = otf2_fail(w, err, rc, "close an event file");
    }
    if (!st) {
        OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(w->archive);
        /* Empty local definition files: readers expect one per location. */
        if (rc == OTF2_SUCCESS)
            rc = OTF2_Archive_OpenDefFiles(w->archive);
        for (uint32_t l = 0; l < w->locs.n && rc == OTF2_SUCCESS; l++) {
            OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(w->archive, w->locs.v[l].id);
            rc = d ? OTF2_Archive_CloseDefWriter(w->archive, d) : OTF2_ERROR_MEM_ALLOC_FAILED;
        }
        if (rc == OTF2_SUCCESS)
            rc = OTF2_Archive_CloseDefFiles(w->archive);
        if (rc == OTF2_SUCCESS && w->creator)
            rc = OTF2_Archive_SetCreator(w->archive, w->creator);
        if (rc == OTF2_SUCCESS && w->description)
            rc = OTF2_Archive_SetDescription(w->archive, w->description);
        if (rc != OTF2_SUCCESS)
            st = otf2_fail(w, err, rc, "write the local definitions");
    }
    if (!st)
        st = write_global_defs(w, &plan, err);
    free_plan(&plan);
    if (!st) {
        OTF2_ErrorCode rc = OTF2_Archive_Close(w->archive);
        w->archive = NULL;
        if (rc != OTF2_SUCCESS)
            st = otf2_fail(w, err, rc, "close the archive");
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
        return wfail(w, err, EARL_ERR_IO, "cannot move '%s' into place: %s", w->tmp, strerror(errno));
    /* An archive being replaced (check_target allowed it): move it aside
     * first so that DIR always holds one whole archive. */
    char *old = NULL;
    if (asprintf(&old, "%s.old-XXXXXX", w->dir) < 0)
        return nomem(w, err);
    if (!mkdtemp(old)) {
        st = wfail(w, err, EARL_ERR_IO, "cannot make room to replace the old archive: %s",
                   strerror(errno));
    } else if (rename(w->dir, old) != 0) {
        st = wfail(w, err, EARL_ERR_IO, "cannot move the old archive aside: %s", strerror(errno));
        rmdir(old);
    } else if (rename(w->tmp, w->dir) != 0) {
        st = wfail(w, err, EARL_ERR_IO, "cannot move '%s' into place: %s", w->tmp, strerror(errno));
        if (rename(old, w->dir) != 0)
            st = wfail(w, err, EARL_ERR_IO, "cannot move the new archive into place, and the old "
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
