/*
 * earl_overview.h - levels of detail of a timeline: what a picture of a time
 * window can show when it is narrower, in pixels, than the window has events.
 *
 * A timeline draws one row per location over a window cut into n_bins equal
 * bins (a bin is a pixel of the picture, or of one zoom level of the HTML
 * page's interactive timeline).  Where many region instances fall in one bin,
 * drawing them one by one paints whatever came last; a performance engineer
 * wants what the location mostly did there.  So, after Vampir:
 *
 *   earl_overview_activity   per (row, bin): the activity class (the caller's
 *                            classes of regions: computation, MPI, OpenMP, ...)
 *                            that took most of the row's own time in the bin.
 *                            Time with no region of the location's own open (a
 *                            worker thread between parallel regions) competes
 *                            as idleness: a bin it wins is EARL_OVERVIEW_IDLE,
 *                            one the location's record does not reach
 *                            EARL_OVERVIEW_EMPTY.  A
 *                            class that wins no bin anywhere in the picture is
 *                            given the bin where its share is largest, so no
 *                            activity of the window disappears from it.
 *   earl_overview_messages   messages bundled per (sender row, receiver row,
 *                            span of bins_per_bundle bins of the send time):
 *                            one line per bundle instead of one per message,
 *                            with its count and the first and last send and
 *                            receive times.
 *
 * Both are pure functions of their inputs: the same window gives the same
 * answer (earl_overview_activity on any number of threads).  A window [t0, t0 + span) cut into
 * n_bins bins: bin b covers [t0 + edge(b), t0 + edge(b + 1)) with edge(b) =
 * floor(b * span / n_bins), as earl_profile's time bins.  The HTML page's
 * levels of detail are one window cut ever finer: one pass of
 * earl_overview_activity paints them all.  Times are integer ticks
 * throughout.
 */
#ifndef EARL_OVERVIEW_H
#define EARL_OVERVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A window [t0, t0 + span) of a trace, in absolute ticks (span >= 1). */
typedef struct earl_overview_window {
    int64_t t0;
    int64_t span;
} earl_overview_window;

/* A bin where the location's own idleness took most of the time, and one
 * its record does not reach (before its first event, after its last). */
#define EARL_OVERVIEW_IDLE 254
#define EARL_OVERVIEW_EMPTY 255
/* Activity classes a picture tells apart (class ids 0 .. n_classes - 1). */
#define EARL_OVERVIEW_MAX_CLASSES 64

/**
 * Dominant activity per (row, bin) of each of n_levels levels of one window.
 * Between two consecutive events of a location, the time belongs to the
 * innermost region instance the location itself has open
 * (earl_states_own_innermost); a bin shows the class that took most of it,
 * ties going to the lower class id.  One pass over the window's events in
 * the total order serves every level; rows are dealt out among the threads
 * and the result does not depend on their number.
 *
 * @param trace            an open trace
 * @param enterptr         the EARL layer's 32-bit enterptr (earl_states_view)
 * @param class_of_region  n_regions + 1 class ids (< n_classes); region refs
 *                         >= n_regions (undefined) take the last entry
 * @param n_regions        regions with a class of their own
 * @param n_classes        classes told apart (at most EARL_OVERVIEW_MAX_CLASSES)
 * @param rows             the locations drawn, one per row (distinct)
 * @param n_rows           rows
 * @param window           the window drawn
 * @param bins             n_levels bin counts (each >= 1)
 * @param n_levels         levels of detail
 * @param out              n_levels buffers: level k is written to
 *                         out[k][row * bins[k] + bin]
 * @param threads          0: one per core; 1: the caller alone
 * @param err              receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a NULL argument, an empty window, a
 *         class id out of range, a row that is no location or a location
 *         drawn twice), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_overview_activity(const earl_trace *trace, const earl_eid32 *enterptr,
                                   const uint8_t *class_of_region, uint32_t n_regions,
                                   uint32_t n_classes, const earl_loc *rows, uint32_t n_rows,
                                   const earl_overview_window *window, const uint32_t *bins,
                                   uint32_t n_levels, uint8_t *const *out, int threads,
                                   earl_error *err);

/* What a level painted from some of a picture's rows tells of each class:
 * the bins it won, its largest share of a bin it did not win, and that bin
 * (row * bins + bin, rows as given; on equal shares the first in that
 * order).  A class that wins no bin over all the picture's rows takes the bin
 * of its largest share over all of them. */
typedef struct earl_overview_tally {
    uint64_t won[EARL_OVERVIEW_MAX_CLASSES];
    double best_share[EARL_OVERVIEW_MAX_CLASSES];
    uint64_t best_at[EARL_OVERVIEW_MAX_CLASSES];
} earl_overview_tally;

/**
 * earl_overview_activity for some rows of a picture painted in parts (the
 * analysis in parts paints each part's own locations): the same, except that
 * a class winning no bin of these rows is not given one here, since it may
 * win bins on the other parts' rows.  tallies (n_levels, may be NULL: then
 * as earl_overview_activity) receives each level's earl_overview_tally; the
 * caller sums the parts' bins won, takes the largest share (ties: the first
 * bin in the whole picture's row-major order) and writes the class there.
 *
 * @param trace            as for earl_overview_activity
 * @param enterptr         as for earl_overview_activity
 * @param class_of_region  as for earl_overview_activity
 * @param n_regions        as for earl_overview_activity
 * @param n_classes        as for earl_overview_activity
 * @param rows             the rows of this part (a subset of the picture's)
 * @param n_rows           rows
 * @param window           as for earl_overview_activity
 * @param bins             as for earl_overview_activity
 * @param n_levels         as for earl_overview_activity
 * @param out              as for earl_overview_activity
 * @param tallies          n_levels tallies written, or NULL
 * @param threads          as for earl_overview_activity
 * @param err              as for earl_overview_activity
 * @return the statuses of earl_overview_activity
 * @since 0.1.0
 */
EARL_API earl_status earl_overview_activity_part(const earl_trace *trace,
                                        const earl_eid32 *enterptr,
                                        const uint8_t *class_of_region, uint32_t n_regions,
                                        uint32_t n_classes, const earl_loc *rows,
                                        uint32_t n_rows, const earl_overview_window *window,
                                        const uint32_t *bins, uint32_t n_levels,
                                        uint8_t *const *out, earl_overview_tally *tallies,
                                        int threads, earl_error *err);

/* One bundle of messages from row src to row dst whose sends fall in the
 * same span of bins_per_bundle bins. */
typedef struct earl_overview_bundle {
    uint32_t src, dst;         /* rows */
    uint32_t count;            /* messages */
    int64_t send_first, send_last;   /* ticks */
    int64_t recv_first, recv_last;
} earl_overview_bundle;

/**
 * Messages bundled for a picture: the messages whose sends fall in the
 * window, as bundles over the window cut into n_bins bins, one per pair of
 * rows and span of bins_per_bundle bins.  With bins_per_bundle 1 and one
 * message per bin and pair of rows, every bundle is one message.
 *
 * @param send_time        n send times (ticks)
 * @param recv_time        n receive times (ticks)
 * @param src              n sender rows
 * @param dst              n receiver rows
 * @param n                messages
 * @param window           the window drawn
 * @param n_bins           bins of the window (>= 1)
 * @param bins_per_bundle  bins one bundle spans (>= 1)
 * @param out              receives the bundles sorted by (src, dst, span),
 *                         malloc'ed (free() it)
 * @param n_out            receives their number (at most n)
 * @param err              receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a NULL argument, an empty window, no
 *         bins), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_overview_messages(const int64_t *send_time, const int64_t *recv_time,
                                   const uint32_t *src, const uint32_t *dst, size_t n,
                                   const earl_overview_window *window, uint32_t n_bins,
                                   uint32_t bins_per_bundle, earl_overview_bundle **out,
                                   size_t *n_out, earl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EARL_OVERVIEW_H */
