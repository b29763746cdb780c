/*
 * rc_groups.c - the start of a collective wait state's group interval: the
 * point where its delayer last met all the other members of the
 * communicator, found walking back over the delayer's synchronisation
 * points, with the members it met one by one on the way.
 */
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

void earl_rc_group_starts_free(earl_rc_group_starts *s)
{
    if (!s)
        return;
    free(s->start);
    free(s->met_instance);
    free(s->met_location);
    free(s->met_event);
    memset(s, 0, sizeof *s);
}

static earl_status check_meetings(const earl_rc_meetings *m, earl_error *err)
{
    for (size_t k = 0; k < m->n_sets; k++)
        for (int64_t i = m->set_offset[k]; i < m->set_offset[k + 1]; i++)
            if (m->set_location[i] < 0 || (size_t)m->set_location[i] >= m->n_locations)
                return earl_fail(err, EARL_ERR_INVALID,
                                 "root-cause group starts: set %zu holds location %lld", k,
                                 (long long)m->set_location[i]);
    for (size_t j = 0; j < m->n_points; j++)
        if (m->point_set[j] >= (int64_t)m->n_sets)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause group starts: point %zu names set %lld of %zu", j,
                             (long long)m->point_set[j], m->n_sets);
    for (size_t i = 0; i < m->n_partners; i++)
        if (m->partner_location[i] < 0 || (size_t)m->partner_location[i] >= m->n_locations)
            return earl_fail(err, EARL_ERR_INVALID,
                             "root-cause group starts: partner pair %zu names location %lld", i,
                             (long long)m->partner_location[i]);
    return EARL_OK;
}

/* The partners of each point, grouped by point (a counting sort of the
 * pairs, which keeps their order within a point): offset (n_points + 1) and
 * location; -1 with *bad set to a pair of no point, or when out of memory. */
static int group_partners(const earl_rc_meetings *m, int64_t **offset, int64_t **location,
                          size_t *bad)
{
    int64_t *owner = malloc((m->n_partners ? m->n_partners : 1) * sizeof *owner);
    *offset = calloc(m->n_points + 1, sizeof **offset);
    *location = malloc((m->n_partners ? m->n_partners : 1) * sizeof **location);
    *bad = (size_t)-1;
    if (!owner || !*offset || !*location)
        goto fail;
    size_t hint = 0;
    for (size_t i = 0; i < m->n_partners; i++) {
        /* pairs come in runs of one location's points in event order: search
         * from the previous answer */
        size_t j = earl_i64_gallop_lower_bound(m->point_key, m->n_points, m->partner_key[i], hint);
        if (j == m->n_points || m->point_key[j] != m->partner_key[i]) {
            *bad = i;
            goto fail;
        }
        owner[i] = (int64_t)j;
        (*offset)[j + 1]++;
        hint = j;
    }
    for (size_t j = 0; j < m->n_points; j++)
        (*offset)[j + 1] += (*offset)[j];
    for (size_t i = 0; i < m->n_partners; i++)
        (*location)[(*offset)[owner[i]]++] = m->partner_location[i];
    /* the fill moved each start to the next point's: shift back */
    for (size_t j = m->n_points; j > 0; j--)
        (*offset)[j] = (*offset)[j - 1];
    (*offset)[0] = 0;
    free(owner);
    return 0;
fail:
    free(owner);
    free(*offset);
    free(*location);
    *offset = *location = NULL;
    return -1;
}

/* Locations still to meet, and those counted at the current point: marks are
 * generation numbers so that nothing needs clearing between points. */
typedef struct walk {
    uint64_t *remaining; /* == remaining_gen: still to meet */
    uint64_t *counted;   /* == counted_gen: met at the current point already */
    uint64_t remaining_gen, counted_gen;
    size_t n_remaining;
} walk;

typedef struct met_list {
    int64_t *instance, *location, *event;
    size_t n, cap;
} met_list;

static int met_push(met_list *m, int64_t instance, int64_t location, int64_t event)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        int64_t *a = realloc(m->instance, cap * sizeof *a);
        if (!a)
            return -1;
        m->instance = a;
        if (!(a = realloc(m->location, cap * sizeof *a)))
            return -1;
        m->location = a;
        if (!(a = realloc(m->event, cap * sizeof *a)))
            return -1;
        m->event = a;
        m->cap = cap;
    }
    m->instance[m->n] = instance;
    m->location[m->n] = location;
    m->event[m->n] = event;
    m->n++;
    return 0;
}

/* Count the still-to-meet locations among `locs` not counted at this point
 * yet; with `meet`, also record them as met at event (instance k). */
static int visit(walk *w, const int64_t *locs, int64_t lo, int64_t hi, int meet, met_list *met,
                 int64_t k, int64_t event, size_t *count)
{
    for (int64_t i = lo; i < hi; i++) {
        int64_t l = locs[i];
        if (w->remaining[l] != w->remaining_gen || w->counted[l] == w->counted_gen)
            continue;
        w->counted[l] = w->counted_gen;
        (*count)++;
        if (meet && met_push(met, k, l, event) < 0)
            return -1;
    }
    return 0;
}

earl_status earl_rc_find_group_starts(const earl_rc_meetings *m,
                                      const earl_rc_group_queries *q, earl_rc_group_starts *out,
                                      earl_error *err)
{
    memset(out, 0, sizeof *out);
    const size_t instances = q->count;
    const int64_t stride = m->stride;
    const int64_t *delayer_location = q->delayer_location, *delayer_event = q->delayer_event,
                  *member_set = q->member_set;
    earl_status st = check_meetings(m, err);
    if (st != EARL_OK)
        return st;
    int64_t *partner_offset, *partner_location;
    size_t bad;
    if (group_partners(m, &partner_offset, &partner_location, &bad) < 0)
        return bad != (size_t)-1
                   ? earl_fail(err, EARL_ERR_INVALID,
                               "root-cause group starts: partner pair %zu belongs to no point "
                               "(key %lld)", bad, (long long)m->partner_key[bad])
                   : earl_fail(err, EARL_ERR_NOMEM, "root-cause group starts: out of memory");
    size_t nl = m->n_locations ? m->n_locations : 1;
    walk w = {calloc(nl, sizeof(uint64_t)), calloc(nl, sizeof(uint64_t)), 0, 0, 0};
    met_list met = {0};
    out->start = malloc((instances ? instances : 1) * sizeof *out->start);
    if (!w.remaining || !w.counted || !out->start)
        goto nomem;
    for (size_t k = 0; k < instances; k++) {
        int64_t set = member_set[k], d_loc = delayer_location[k];
        if (set >= (int64_t)m->n_sets || d_loc < 0 || (size_t)d_loc >= m->n_locations) {
            st = earl_fail(err, EARL_ERR_INVALID,
                           "root-cause group starts: instance %zu names set %lld, location %lld",
                           k, (long long)set, (long long)d_loc);
            goto fail;
        }
        int64_t start = -1;
        w.remaining_gen++;
        w.n_remaining = 0;
        if (set >= 0)
            for (int64_t i = m->set_offset[set]; i < m->set_offset[set + 1]; i++) {
                int64_t l = m->set_location[i];
                if (l != d_loc && w.remaining[l] != w.remaining_gen) {
                    w.remaining[l] = w.remaining_gen;
                    w.n_remaining++;
                }
            }
        size_t low = earl_i64_lower_bound(m->point_key, 0, m->n_points, d_loc * stride);
        size_t j = earl_i64_lower_bound(m->point_key, low, m->n_points, d_loc * stride + delayer_event[k]);
        while (j > low && w.n_remaining) {
            j--;
            int64_t event = m->point_key[j] - d_loc * stride;
            int64_t ps = m->point_set[j];
            /* first count: does this point meet everybody left at once? */
            size_t count = 0;
            w.counted_gen++;
            visit(&w, partner_location, partner_offset[j], partner_offset[j + 1], 0, NULL, 0, 0,
                  &count);
            if (ps >= 0)
                visit(&w, m->set_location, m->set_offset[ps], m->set_offset[ps + 1], 0, NULL, 0, 0,
                      &count);
            if (count == w.n_remaining) {
                start = event;
                break;
            }
            if (!count)
                continue;
            /* then record the members met here, one by one */
            w.counted_gen++;
            count = 0;
            if (visit(&w, partner_location, partner_offset[j], partner_offset[j + 1], 1, &met,
                      (int64_t)k, event, &count) < 0 ||
                (ps >= 0 && visit(&w, m->set_location, m->set_offset[ps], m->set_offset[ps + 1], 1,
                                  &met, (int64_t)k, event, &count) < 0))
                goto nomem;
            for (size_t i = met.n - count; i < met.n; i++)
                w.remaining[met.location[i]] = 0;
            w.n_remaining -= count;
        }
        out->start[k] = start;
    }
    free(w.remaining);
    free(w.counted);
    free(partner_offset);
    free(partner_location);
    out->n_met = met.n;
    out->met_instance = met.instance;
    out->met_location = met.location;
    out->met_event = met.event;
    return EARL_OK;
nomem:
    st = earl_fail(err, EARL_ERR_NOMEM, "root-cause group starts: out of memory");
fail:
    free(w.remaining);
    free(w.counted);
    free(partner_offset);
    free(partner_location);
    free(met.instance);
    free(met.location);
    free(met.event);
    earl_rc_group_starts_free(out);
    return st;
}
