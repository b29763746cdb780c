/*
 * earl_markers.h - public API of the markers subsystem (earl_markers_*): the
 * marker file of an OTF2 archive, read and rewritten through libotf2's marker
 * reader and writer.
 *
 * An archive DIR/NAME.otf2 may carry a marker file DIR/NAME.marker beside its
 * definitions and events: marker definitions (a group, a category and a
 * severity) and markers (a time span, a scope such as one location, and a
 * text).  Vampir shows them on its timelines and `otf2-marker` lists and
 * edits them.  They annotate a trace without changing it: the event and
 * definition files are never opened for writing here.
 *
 * earl_markers_read gives the markers an archive holds (none when it has no
 * marker file).  earl_markers_update rewrites the marker file with the
 * markers it held whose group is not among the groups to drop, followed by
 * the markers added; libotf2 writes the file anew when its writer closes, so
 * the update is the whole file at once, and definitions are renumbered
 * 0, 1, ... in that order.  Groups are compared as whole strings.
 *
 * Times are the archive's timestamps (ticks, as earl.h's events carry them);
 * scope references are OTF2 references (a location's OTF2 id for
 * OTF2_MARKER_SCOPE_LOCATION).  Severity and scope take libotf2's values
 * (OTF2_MarkerSeverity, OTF2_MarkerScope) as uint8_t, so that this header
 * needs no OTF2 include.  Handles are used by one thread at a time.
 */
#ifndef EARL_MARKERS_H
#define EARL_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A marker definition: what Vampir lists markers under. */
typedef struct earl_marker_def {
    const char *group;
    const char *category;
    uint8_t severity;    /* OTF2_MarkerSeverity: 0 none, 1 low, 2 medium, 3 high */
} earl_marker_def;

/* One marker. */
typedef struct earl_marker {
    uint64_t time;       /* start, in the archive's ticks */
    uint64_t duration;   /* ticks */
    uint32_t def;        /* index into the set's definitions */
    uint8_t scope;       /* OTF2_MarkerScope: 0 global, 1 location, ... */
    uint64_t scope_ref;  /* OTF2 reference of the scope (unused for global) */
    const char *text;
} earl_marker;

/* Definitions and markers, in file order. */
typedef struct earl_marker_set {
    size_t n_defs;
    const earl_marker_def *defs;
    size_t n_markers;
    const earl_marker *markers;
} earl_marker_set;

typedef struct earl_markers earl_markers;

/**
 * Read the marker file of an archive.  A marker whose definition is missing
 * is kept with def = UINT32_MAX.
 *
 * @param path  the anchor file NAME.otf2, or the folder that holds it (found
 *              as earl_trace_open finds it)
 * @param out   receives the markers (an empty set when the archive has no
 *              marker file), which the caller frees with earl_markers_free;
 *              NULL on failure
 * @param err   receives the status and a message naming the file and the
 *              problem on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_NOT_FOUND, EARL_ERR_NOT_ARCHIVE, EARL_ERR_CORRUPT
 *         (a marker file that cannot be decoded), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_markers_read(const char *path, earl_markers **out, earl_error *err);

/**
 * The definitions and markers read.
 *
 * @param m  markers of earl_markers_read
 * @return a view owned by m, valid until earl_markers_free
 * @since 0.1.0
 */
EARL_API const earl_marker_set *earl_markers_get(const earl_markers *m);

/**
 * Free markers.
 *
 * @param m  markers of earl_markers_read, or NULL (nothing happens)
 * @since 0.1.0
 */
EARL_API void earl_markers_free(earl_markers *m);

/**
 * Rewrite the marker file of an archive: the markers it holds whose
 * definition's group is none of the groups to drop (and their definitions),
 * then every definition and marker of add.
 *
 * @param path    as for earl_markers_read
 * @param drop    the groups whose markers go (may be NULL when n_drop is 0)
 * @param n_drop  how many
 * @param add     the definitions and markers to add (add->markers refer to
 *                add->defs); may be NULL
 * @param kept    receives the number of markers kept (may be NULL)
 * @param err     receives the status and a message on failure (may be NULL)
 * @return EARL_OK; EARL_ERR_INVALID before anything is written when a marker
 *         of add names no definition of add; the errors of earl_markers_read;
 *         EARL_ERR_IO when the file cannot be written
 * @since 0.1.0
 */
EARL_API earl_status earl_markers_update(const char *path, const char *const *drop, size_t n_drop,
                                         const earl_marker_set *add, size_t *kept,
                                         earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_MARKERS_H */
