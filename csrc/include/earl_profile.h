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

/* Exclusive time per (region, bin), summed over locations.  Between two
 * consecutive events of a location, the time belongs to the innermost region
 * instance the location itself has open (after an ENTER: its region; after a
 * LEAVE: the enclosing one; a master's frame a worker thread inherits through
 * enterptr is none).  A stretch lying in one bin is added there whole; one
 * crossing bin edges is split at them, the pieces before the first edge and
 * after the last edge falling to the first and last bin.
 *   enterptr  one entry per event (earl_states_view.enterptr, 32 bits)
 *   totals    n_regions + 1 rows of n_bins ticks; region refs >= n_regions
 *             (undefined) add to the last row
 *   present   n_regions + 1 flags: set for each row that got a stretch */
EARL_API earl_status earl_profile_time(const earl_trace *trace, const earl_eid32 *enterptr,
                                       const earl_profile_bins *bins, uint32_t n_regions,
                                       int64_t *totals, uint8_t *present, earl_error *err);

/* Inclusive time of every region instance, leave - enter (a region never
 * left ends at its location's last event), summed per region ref, or per
 * (region ref, location) at totals[ref * n_locations + location] when
 * per_location is set.  ENTERs of refs >= n_regions are not counted.
 *   leaveptr  one entry per event (the LEAVE of an ENTER, -1 if none) */
EARL_API earl_status earl_profile_inclusive(const earl_trace *trace, const earl_eid *leaveptr,
                                            uint32_t n_regions, int per_location, int64_t *totals,
                                            earl_error *err);

#ifdef __cplusplus
}
#endif
#endif
