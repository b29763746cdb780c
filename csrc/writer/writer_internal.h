/*
 * writer_internal.h - the state of an earl_writer, shared by the files that
 * implement it: writer.c (the archive's life: folders, libotf2 memory, open,
 * close), writer_defs.c (definitions) and writer_events.c (events and their
 * checks).  Not part of the public API (earl_writer.h).
 */
#ifndef EARL_WRITER_INTERNAL_H
#define EARL_WRITER_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#include "earl_writer.h"
#include "base/compiler.h"
#include "base/errors.h"
#include "base/hashmap.h"

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

typedef struct wattr {
    uint32_t name, description;
    uint8_t type;      /* OTF2_Type */
} wattr;

typedef struct wlprop {
    earl_loc loc;
    uint32_t name, value; /* string refs */
} wlprop;

/* A clock offset of a location: global time minus its own at time. */
typedef struct wclock {
    earl_loc loc;
    uint64_t time;
    int64_t offset;
    double stddev;
} wclock;

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
    earl_writer_quirks quirks; /* untruthful definitions, for tests of readers */

    /* strings, interned: the hash of a text -> its refs (texts may share a
     * hash: the entries of one are compared) */
    VEC(char *) strings;
    earl_map string_index;
    earl_map location_index; /* location id -> index */

    VEC(wnode) nodes;
    VEC(wlgroup) lgroups;
    VEC(wloc) locs;
    VEC(wregion) regions;
    VEC(wgroup) groups;
    VEC(wcomm) comms;
    VEC(wwin) wins;
    VEC(wmember) members;
    VEC(wclass) classes;
    VEC(wattr) attrs;
    VEC(wlprop) lprops;
    VEC(wclock) clocks;       /* in the order given, per location by time */
    OTF2_AttributeList *attr_list; /* reused by every event with attributes */
    VEC(int32_t) rank_group; /* location group of each world rank, -1 */
    uint32_t world;          /* MPI_COMM_WORLD comm ref or undefined */
    /* The MPI COMM_LOCATIONS group, reserved (members filled at close) before the
     * first MPI group of ranks, so that groups are written in ref order and each
     * comes after the group it refers to; undefined until then. */
    uint32_t mpi_locations;
};

static inline int wr_vec_grow(void **v, uint32_t *cap, uint32_t need, size_t elem)
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
    (wr_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) ? NULL : &(vec).v[(vec).n++])


/* Errors about the archive of w: "trace archive 'DIR': detail" (writer.c). */
earl_status wr_fail(const earl_writer *w, earl_error *err, earl_status code, const char *fmt, ...)
    EARL_PRINTF(4, 5);
earl_status wr_nomem(const earl_writer *w, earl_error *err);
/* A libotf2 failure: the writer is broken and can only be aborted or closed. */
earl_status wr_otf2_fail(earl_writer *w, earl_error *err, OTF2_ErrorCode rc, const char *what);

/* The string's reference, with dflt for a NULL text (writer_defs.c). */
earl_status wr_intern(earl_writer *w, const char *text, const char *dflt, uint32_t *ref,
                      earl_error *err);
/* The dense index of location id, -1 if undefined (writer_defs.c). */
int64_t wr_id_find(const earl_writer *w, uint64_t id);

#endif
