/*
 * part_merge.c - earl_ghosts_merge: several runs of ghost records sorted by
 * (location, position) merged into one, each event once.
 *
 * A part's ghosts come from two sources that may hold the same event: the
 * ghosts other parts export for its messages and calls, and the
 * representatives chosen for its collectives (earl_part_representatives),
 * whose record of an event wins because it carries the count of the members
 * it stands for.  Both are sorted, so a merge puts them together in one
 * linear pass; sorting their concatenation (as numpy did) copied every
 * record twice more and compared keys again.  The runs are few (the
 * representatives of a location come in one run per window of instances),
 * so the next record is chosen by a scan over the runs' heads.
 */
#include <string.h>

#include "base/errors.h"
#include "earl_part.h"

static int before(const earl_ghost *a, const earl_ghost *b)
{
    return a->location != b->location ? a->location < b->location : a->position < b->position;
}

static int same_event(const earl_ghost *a, const earl_ghost *b)
{
    return a->location == b->location && a->position == b->position;
}

earl_status earl_ghosts_merge(const earl_ghost *const *runs, const size_t *lengths,
                              size_t n_runs, size_t *at, earl_ghost *out, size_t *n_out,
                              earl_error *err)
{
    *n_out = 0;
    for (size_t r = 0; r < n_runs; r++) {
        at[r] = 0;
        for (size_t k = 1; k < lengths[r]; k++)
            if (before(&runs[r][k], &runs[r][k - 1]))
                return earl_fail(err, EARL_ERR_INVALID, "ghost records to merge: run %zu is not "
                                 "sorted by location and position at record %zu", r, k);
    }
    size_t n = 0;
    for (;;) {
        const earl_ghost *next = NULL;
        for (size_t r = 0; r < n_runs; r++) /* the first run wins a tie */
            if (at[r] < lengths[r] && (!next || before(&runs[r][at[r]], next)))
                next = &runs[r][at[r]];
        if (!next)
            break;
        out[n++] = *next;
        for (size_t r = 0; r < n_runs; r++) /* every copy of it is taken */
            while (at[r] < lengths[r] && same_event(&runs[r][at[r]], &out[n - 1]))
                at[r]++;
    }
    *n_out = n;
    return EARL_OK;
}
