/*
 * states_regions.c - region stacks R^l (paper section 4.2): enterptr,
 * leaveptr and the stack query.
 *
 * The stack of a location is never stored as a stack: top[l] is its
 * innermost open ENTER and every ENTER's enterptr is the ENTER below it, so
 * enterptr chains are the stacks, persistent for free.  An ENTER pushes
 * (enterptr = top, top = the ENTER), a LEAVE pops (enterptr = its ENTER,
 * top = the ENTER's enterptr; leaveptr follows from it), every other event
 * reads top (states.c does the ENTER and the reads inline).  Worker threads get
 * their master's top at the fork as the base of their stack
 * (states_threads.c), so their chains continue into the master's frames,
 * as section 7 asks.  On a ghost location whose message calls were folded
 * (EARL_HELD_GHOSTS_FOLDED: its calls do not nest, and a call followed by
 * another lost its LEAVE), an ENTER first pops the location's open call.
 *
 * stack(i, l) finds the last event of l at or before i by binary search in
 * the location's event list and follows the chain from the top that event
 * left: O(log n + depth), no replay.
 */
#include <otf2/otf2.h>
#include <stdlib.h>

#include "states_internal.h"

int regions_init(states_pass *p)
{
    size_t nl = p->defs->n_locations;
    p->top = malloc((nl ? nl : 1) * sizeof *p->top);
    if (!p->top)
        return -1;
    for (size_t l = 0; l < nl; l++)
        p->top[l] = EARL_NONE;
    p->folded = NULL;
    for (size_t l = 0; l < nl; l++) {
        if (p->defs->locations[l].held != EARL_HELD_GHOSTS_FOLDED)
            continue;
        if (!p->folded && !(p->folded = calloc(nl, 1)))
            return -1;
        p->folded[l] = 1;
    }
    return 0;
}

int regions_is_omp_barrier(const earl_defs *defs, uint32_t region)
{
    if (region >= defs->n_regions)
        return 0;
    const earl_region *r = &defs->regions[region];
    return r->defined && r->paradigm != OTF2_PARADIGM_MPI &&
           (r->role == OTF2_REGION_ROLE_BARRIER || r->role == OTF2_REGION_ROLE_IMPLICIT_BARRIER);
}

void regions_leave(states_pass *p, earl_eid i, earl_loc l)
{
    earl_states *s = p->s;
    earl_eid x = p->top[l];
    if (EARL_UNLIKELY(x < 0 || p->ev->location[x] != l)) {
        /* nothing of this location is open (an inherited frame is not
         * the worker's to leave): the stack stays as it is */
        s->enterptr[i] = EARL_EID32_NONE;
        states_warn(p->warnings, EARL_SW_LEAVE_UNMATCHED, l, i,
                    "LEAVE of region '%s' (%u) with no open ENTER on location %d",
                    earl_defs_region_name(p->defs, p->ev->region[i]),
                    (unsigned)p->ev->region[i], (int)l);
        return;
    }
    s->enterptr[i] = states_eid32(x); /* leaveptr[x] = i follows from it (states_views.c) */
    p->top[l] = states_enterptr(s, x);
    if (EARL_UNLIKELY(p->cur_fork[l] >= 0) && !p->opt->no_omp_barriers &&
        regions_is_omp_barrier(p->defs, p->ev->region[i]))
        collectives_barrier(p, i, l);
}

/* A folded ghost location's calls do not nest (earl_part_fold_calls): an
 * ENTER there while a call of its own is open means the call's LEAVE was
 * left out, and the call ends here.  Nothing to warn about, and no enterptr
 * to write: the call has no LEAVE (leaveptr -1). */
void regions_close_folded(states_pass *p, earl_loc l)
{
    earl_eid x = p->top[l];
    if (x >= 0 && p->ev->location[x] == l)
        p->top[l] = states_enterptr(p->s, x);
}

void regions_finish(states_pass *p)
{
    (void)p; /* regions still open at the end are the reader's warning */
}

/* The innermost open ENTER of e's location just after e. */
static earl_eid top_after(const earl_states *s, const earl_events *ev, earl_eid e, size_t pos,
                          size_t first)
{
    for (;;) {
        switch (ev->kind[e]) {
        case EARL_ENTER:
            return e;
        case EARL_LEAVE: {
            earl_eid x = states_enterptr(s, e);
            if (x >= 0)
                return states_enterptr(s, x);
            /* an unmatched LEAVE changed nothing: the top after the
             * previous event of the location */
            if (pos == first)
                return EARL_NONE;
            e = ev->loc_events[--pos];
            continue;
        }
        case EARL_THREAD_TEAM_BEGIN:
        case EARL_THREAD_TEAM_END:
            if (ev->ref[e] >= 0)
                return s->sync_top[ev->ref[e]];
            return states_enterptr(s, e);
        default:
            return states_enterptr(s, e);
        }
    }
}

size_t earl_states_stack(const earl_states *s, earl_eid i, earl_loc loc, earl_eid *out,
                         size_t cap)
{
    const earl_events *ev = earl_trace_events(s->trace);
    const earl_defs *defs = earl_trace_defs(s->trace);
    if (loc < 0 || (uint32_t)loc >= defs->n_locations || i < 0)
        return 0;
    size_t first = ev->loc_start[loc];
    /* one past the last event of loc with id <= i */
    size_t lo = earl_eid32_lower_bound(ev->loc_events, first, ev->loc_start[loc + 1], i + 1);
    if (lo == first)
        return 0;
    earl_eid top = top_after(s, ev, ev->loc_events[lo - 1], lo - 1, first);
    size_t depth = 0;
    for (earl_eid x = top; x >= 0; x = states_enterptr(s, x))
        depth++;
    if (out && cap >= depth) {
        size_t k = depth;
        for (earl_eid x = top; x >= 0; x = states_enterptr(s, x))
            out[--k] = x;
    }
    return depth;
}
