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

/* Read the marker file of the archive at path (its anchor file NAME.otf2, or
 * the folder that holds it, found as earl_trace_open finds it; an empty set
 * when it has no marker file).  A marker whose definition is missing is kept
 * with def = UINT32_MAX.  On failure *out is NULL and err names the file and
 * the problem. */
earl_status earl_markers_read(const char *path, earl_markers **out, earl_error *err);
const earl_marker_set *earl_markers_get(const earl_markers *m);
void earl_markers_free(earl_markers *m);

/* Rewrite the marker file of the archive at path (as for earl_markers_read):
 * the markers it holds
 * whose definition's group is none of drop[0..n_drop) (and their
 * definitions), then every definition and marker of add (add->markers refer
 * to add->defs).  *kept receives the number of markers kept (may be NULL).
 * Fails with EARL_ERR_INVALID, before anything is written, when a marker of
 * add names no definition of add. */
earl_status earl_markers_update(const char *path, const char *const *drop, size_t n_drop,
                                const earl_marker_set *add, size_t *kept, earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_MARKERS_H */
