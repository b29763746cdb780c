/*
 * hb_frontier.c - the system over the crossing events of a replay in parts
 * in three steps (earl_hb.h, earl_hb_frontier_solve).  Each part replays
 * its own events once with symbolic ghost clocks; what is left to find is the
 * true clock of every crossing event x (an own event of one part that another
 * waits for): the maximum of x's base (its symbolic clock without the ghost
 * entries) and the true clocks of the crossing events x's symbolic clock names
 * as its frontier.  Those edges are happened-before between crossing events,
 * so without a cycle one sweep in topological order (Kahn's algorithm)
 * solves the system: a crossing event's clock is final once every edge into
 * it was taken, and is then pushed along its own edges
 * (earl_hb_frontier_solve, where one process holds every crossing event).
 *
 * Split between the parts, each holding only its own crossing events, the
 * system is solved in rounds that double how far back each clock sees
 * (earlc.parts.doubling explains why that holds): in each round a crossing
 * event takes the maximum of its clock and of the clocks of the latest
 * crossing event of each location it sees; earl_hb_frontier_fold is that
 * maximum, one location at a time, and the check for a cycle on the way.
 */
#include <stdlib.h>

#include "hb_internal.h"

earl_status earl_hb_frontier_solve(uint32_t *clocks, size_t n, uint32_t width,
                                   const int64_t *src, const int64_t *dst, size_t n_edges,
                                   size_t *solved, earl_error *err)
{
    *solved = 0;
    for (size_t k = 0; k < n_edges; k++)
        if (src[k] < 0 || (size_t)src[k] >= n || dst[k] < 0 || (size_t)dst[k] >= n)
            return earl_fail(err, EARL_ERR_INVALID, "edge %zu of the crossing events joins "
                             "%lld and %lld, of %zu events", k, (long long)src[k],
                             (long long)dst[k], n);
    /* edges by their source (a counting sort), and how many lead into each */
    size_t *first = calloc(n + 2, sizeof *first);
    size_t *next = malloc((n_edges ? n_edges : 1) * sizeof *next);
    uint32_t *waiting = calloc(n + 1, sizeof *waiting);
    size_t *ready = malloc((n ? n : 1) * sizeof *ready);
    if (!first || !next || !waiting || !ready) {
        free(first);
        free(next);
        free(waiting);
        free(ready);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory for the clocks of %zu crossing "
                         "events", n);
    }
    for (size_t k = 0; k < n_edges; k++) {
        first[src[k] + 2]++;
        waiting[dst[k]]++;
    }
    for (size_t x = 0; x < n; x++)
        first[x + 2] += first[x + 1];
    for (size_t k = 0; k < n_edges; k++)
        next[first[src[k] + 1]++] = (size_t)dst[k];
    /* now first[x] .. first[x + 1] are x's edges */
    size_t head = 0, tail = 0;
    for (size_t x = 0; x < n; x++)
        if (!waiting[x])
            ready[tail++] = x;
    while (head < tail) {
        size_t x = ready[head++];
        const uint32_t *cx = clocks + x * width;
        for (size_t k = first[x]; k < first[x + 1]; k++) {
            size_t y = next[k];
            hb_clock_max(clocks + y * width, cx, width);
            if (!--waiting[y])
                ready[tail++] = y;
        }
    }
    *solved = tail;
    free(first);
    free(next);
    free(waiting);
    free(ready);
    return EARL_OK;
}

earl_status earl_hb_frontier_fold(uint32_t *next, size_t n, uint32_t width,
                                  const uint32_t *rows, size_t n_rows, const int64_t *row_of,
                                  const int32_t *location, const int64_t *position, int *cycle,
                                  earl_error *err)
{
    *cycle = 0;
    for (size_t x = 0; x < n; x++)
        if (row_of[x] >= (int64_t)n_rows || location[x] < 0 || (uint32_t)location[x] >= width)
            return earl_fail(err, EARL_ERR_INVALID, "crossing event %zu sees row %lld of %zu, "
                             "on location %d of %u", x, (long long)row_of[x], n_rows,
                             (int)location[x], width);
    for (size_t x = 0; x < n; x++) {
        if (row_of[x] < 0)
            continue;
        const uint32_t *seen = rows + (size_t)row_of[x] * width;
        /* seen happened before x: if it counts x or later, x happened before it */
        if ((int64_t)seen[location[x]] > position[x])
            *cycle = 1;
        hb_clock_max(next + x * width, seen, width);
    }
    return EARL_OK;
}
