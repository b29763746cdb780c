/*
 * earl_profile.h - profiles of a trace that need a pass over every event:
 * exclusive time per region in equal time bins (a time profile) and
 * inclusive time per region (and location).
 *
 * Both read the ordered events (earl.h) and one pointer array of the EARL
 * layer (earl_states.h), passed as a plain array so that the profiles depend
 * on nothing else of it.  Sums are exact integer ticks.  The caller owns and
 * zeroes the output arrays.
 */
#ifndef EARL_PROFILE_H
#define EARL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time bins: bin b covers [t0 + edge(b), t0 + edge(b + 1)) with
 * edge(b) = floor(b * span / n_bins), span >= 1, n_bins >= 1. */
typedef struct earl_profile_bins {
    int64_t t0;
    int64_t span;
    uint32_t n_bins;
} earl_profile_bins;

/**
 * Exclusive time per (region, bin), summed over locations.  Between two
 * consecutive events of a location, the time belongs to the innermost region
 * instance the location itself has open (after an ENTER: its region; after a
 * LEAVE: the enclosing one; a master's frame a worker thread inherits through
 * enterptr is none).  A stretch lying in one bin is added there whole; one
 * crossing bin edges is split at them, the pieces before the first edge and
 * after the last edge falling to the first and last bin.
 *
 * @param trace      an open trace
 * @param enterptr   one entry per event (earl_states_view.enterptr)
 * @param bins       the time bins
 * @param n_regions  region refs below it have a row of their own
 * @param totals     n_regions + 1 rows of n_bins ticks, zeroed by the caller;
 *                   region refs >= n_regions (undefined) add to the last row
 * @param present    n_regions + 1 flags, zeroed by the caller: set for each
 *                   row that got a stretch
 * @param err        receives the status and a message on failure (may be NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a NULL argument, bins that are no bins),
 *         or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_profile_time(const earl_trace *trace, const earl_eid32 *enterptr,
                                       const earl_profile_bins *bins, uint32_t n_regions,
                                       int64_t *totals, uint8_t *present, earl_error *err);

/**
 * Inclusive time of every region instance, leave - enter (a region never
 * left ends at its location's last event), summed per region ref, or per
 * (region ref, location).
 *
 * @param trace         an open trace
 * @param leaveptr      one entry per event: the LEAVE of an ENTER, -1 if none
 *                      (earl_states_pointer(states, EARL_PTR_LEAVE))
 * @param n_regions     ENTERs of refs >= n_regions are not counted
 * @param per_location  0: totals[ref]; 1: totals[ref * n_locations + location]
 * @param totals        n_regions (times n_locations) sums, zeroed by the
 *                      caller
 * @param err           receives the status and a message on failure (may be
 *                      NULL)
 * @return EARL_OK, EARL_ERR_INVALID (a NULL argument), or EARL_ERR_NOMEM
 * @since 0.1.0
 */
EARL_API earl_status earl_profile_inclusive(const earl_trace *trace, const earl_eid *leaveptr,
                                            uint32_t n_regions, int per_location, int64_t *totals,
                                            earl_error *err);

#ifdef __cplusplus
}
#endif
#endif
