/*
 * states_collectives.c - collective operation instances, the C^G states and
 * coll(e) of paper section 4.3, for MPI and for OpenMP team barriers
 * (section 7).
 *
 * A group is an MPI communicator (MPI_COMM_SELF-like communicators are one
 * group per location: the same reference means a different group on every
 * process), or one team of threads (the fork that opened it).  Within a
 * group the k-th member event of every location belongs to instance k of
 * the group: the k-th MPI_COLLECTIVE_END of location l on communicator c,
 * the LEAVE of the k-th barrier region a thread passes in its team.  A
 * location's sequence number per group sits in a hash map keyed by
 * (location, group) (threads count in a per-location counter the team saves
 * and restores); a group's instances in an array indexed by k.  A ghost
 * collective end of a part of a trace comes with its number and the members
 * it stands for (earl_coll_table.part_seq, .part_members; csrc/part/).  An
 * instance is complete when it has as many members as its group (the event
 * adding the last one is its completing event); incomplete instances and members
 * that disagree on operation or root are counted warnings.  After the pass
 * the members are sorted into CSR arrays by a counting sort; the members
 * list itself (in the total order) answers "which instance is event i in"
 * by binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "states_internal.h"

int collectives_init(states_pass *p)
{
    if (earl_map_init(&p->coll_counts, 64) || earl_map_init(&p->coll_groups, 16))
        return -1;
    return 0;
}

void collectives_free(states_pass *p)
{
    for (size_t g = 0; g < p->n_groups; g++)
        free(p->group_inst[g]);
    free(p->group_inst);
    free(p->group_n);
    free(p->group_cap);
    earl_map_free(&p->coll_counts);
    earl_map_free(&p->coll_groups);
}

static int64_t group_index(states_pass *p, uint64_t k1, uint64_t k2)
{
    int64_t *slot = earl_map_slot(&p->coll_groups, k1, k2, EARL_NONE, NULL);
    if (!slot)
        return EARL_NONE;
    if (*slot >= 0)
        return *slot;
    size_t g = p->n_groups, c1 = p->cap_groups, c2 = p->cap_groups;
    if (EARL_GROW(p->group_inst, c1, g + 1) || EARL_GROW(p->group_n, c2, g + 1) ||
        EARL_GROW(p->group_cap, p->cap_groups, g + 1))
        return EARL_NONE;
    p->group_inst[g] = NULL;
    p->group_n[g] = p->group_cap[g] = 0;
    p->n_groups++;
    *earl_map_find(&p->coll_groups, k1, k2) = (int64_t)g;
    return (int64_t)g;
}

static int32_t new_instance(states_pass *p, uint8_t type, uint32_t comm, earl_eid fork,
                            uint8_t op, earl_loc root, uint32_t expected)
{
    earl_states *s = p->s;
    size_t c = s->n_colls;
    if (c + 1 > s->cap_colls) {
        size_t cap = s->cap_colls;
#define GROW_COLL(a) { size_t cc = cap; if (EARL_GROW(s->a, cc, c + 1)) return -1; s->cap_colls = cc; }
        GROW_COLL(coll_type) GROW_COLL(coll_comm) GROW_COLL(coll_fork) GROW_COLL(coll_op)
        GROW_COLL(coll_root) GROW_COLL(coll_expected) GROW_COLL(coll_count)
        GROW_COLL(coll_complete)
#undef GROW_COLL
    }
    s->coll_type[c] = type;
    s->coll_comm[c] = comm;
    s->coll_fork[c] = fork;
    s->coll_op[c] = op;
    s->coll_root[c] = root;
    s->coll_expected[c] = expected;
    s->coll_count[c] = 0;
    s->coll_complete[c] = EARL_NONE;
    s->n_colls++;
    return (int32_t)c;
}

/* Event i is member number k of group g, standing for `weight` members (1;
 * more for a part's ghost that represents members left out): add it to
 * instance k.  In a whole trace k is at most the group's instances so far
 * (a location passes 0..k-1 first); a part's ghosts may come before the
 * members of earlier instances, which are then made in turn, each waiting
 * for its first member to say its operation and root. */
static void add_member(states_pass *p, earl_eid i, earl_loc l, int64_t g, uint64_t k,
                       uint8_t type, uint32_t comm, earl_eid fork, uint8_t op, earl_loc root,
                       uint32_t expected, uint32_t weight)
{
    earl_states *s = p->s;
    if (k >= p->group_n[g]) {
        if (EARL_GROW(p->group_inst[g], p->group_cap[g], k + 1)) {
            p->nomem = 1;
            return;
        }
        while (p->group_n[g] <= k) {
            int32_t made = new_instance(p, type, comm, fork, op, root, expected);
            if (made < 0) {
                p->nomem = 1;
                return;
            }
            p->group_inst[g][p->group_n[g]++] = made;
        }
    }
    int32_t inst = p->group_inst[g][k];
    size_t cm = s->n_members, c1 = s->cap_members;
    if (EARL_GROW(s->member_event, c1, cm + 1) ||
        EARL_GROW(s->member_inst, s->cap_members, cm + 1)) {
        p->nomem = 1;
        return;
    }
    s->member_event[cm] = i;
    s->member_inst[cm] = inst;
    s->n_members++;
    if (s->coll_count[inst] == 0) { /* the first member says what the instance is */
        s->coll_op[inst] = op;
        s->coll_root[inst] = root;
    } else if (type == EARL_COLL_MPI && (s->coll_op[inst] != op || s->coll_root[inst] != root)) {
        states_warn(p->warnings, EARL_SW_COLL_MISMATCH, l, i,
                    "collective instance %d on communicator %u: operation or root differs "
                    "from its first member's", (int)inst, (unsigned)comm);
    }
    uint32_t before = s->coll_count[inst];
    s->coll_count[inst] += weight;
    if (before < s->coll_expected[inst] && s->coll_count[inst] >= s->coll_expected[inst])
        s->coll_complete[inst] = i;
}

void collectives_mpi(states_pass *p, earl_eid i, earl_loc l)
{
    const earl_coll_table *t = &p->ev->coll;
    int32_t row = p->ev->ref[i];
    if (row < 0)
        return;
    uint32_t comm = t->comm[row];
    const earl_defs *d = p->defs;
    const earl_comm *c = comm < d->n_comms && d->comms[comm].defined ? &d->comms[comm] : NULL;
    uint64_t k1 = 1;
    uint32_t expected = c ? c->size : 0;
    if (c && c->is_self) {
        k1 = (uint64_t)(uint32_t)l << 8 | 2; /* one group per location */
        expected = 1;
    }
    int64_t g = group_index(p, k1, comm);
    if (g < 0) {
        p->nomem = 1;
        return;
    }
    uint64_t k;
    uint32_t weight = 1;
    if (t->part_members && t->part_members[row]) { /* a part's ghost: numbered by its owner */
        k = t->part_seq[row];
        weight = t->part_members[row];
    } else {
        int64_t *seq = earl_map_slot(&p->coll_counts, (uint64_t)(uint32_t)l, (uint64_t)g, 0,
                                     NULL);
        if (!seq) {
            p->nomem = 1;
            return;
        }
        k = (uint64_t)(*seq)++;
    }
    add_member(p, i, l, g, k, EARL_COLL_MPI, comm, EARL_NONE, t->op[row], t->root[row],
               expected, weight);
}

void collectives_barrier(states_pass *p, earl_eid i, earl_loc l)
{
    earl_eid f = p->cur_fork[l];
    int64_t trow = p->team_row[l];
    uint32_t team = trow >= 0 ? p->ev->sync.comm[trow] : EARL_UNDEFINED_REF;
    const earl_defs *d = p->defs;
    uint32_t expected = team < d->n_comms && d->comms[team].defined ? d->comms[team].size : 0;
    if (!expected && f >= 0 && p->ev->ref[f] >= 0) /* no team records: the threads asked for */
        expected = p->ev->sync.count_[p->ev->ref[f]];
    int64_t g = group_index(p, 3, (uint64_t)f);
    if (g < 0) {
        p->nomem = 1;
        return;
    }
    uint64_t k = p->barrier_count[l]++;
    add_member(p, i, l, g, k, EARL_COLL_OMP_BARRIER, team, f, 0 /* OTF2_COLLECTIVE_OP_BARRIER */,
               EARL_NONE, expected, 1);
}

void collectives_finish(states_pass *p)
{
    earl_states *s = p->s;
    size_t nc = s->n_colls;
    for (size_t c = 0; c < nc; c++)
        if (s->coll_expected[c] == 0) /* group of unknown size: take what came */
            s->coll_expected[c] = s->coll_count[c];
    s->coll_member_start = calloc(nc + 1, sizeof *s->coll_member_start);
    s->coll_members = malloc((s->n_members + 1) * sizeof *s->coll_members);
    /* members present per instance (coll_count counts those a ghost stands
     * for too), then the fill cursor */
    uint32_t *present = calloc(nc ? nc : 1, sizeof *present);
    if (!s->coll_member_start || !s->coll_members || !present) {
        free(present);
        p->nomem = 1;
        return;
    }
    for (size_t m = 0; m < s->n_members; m++)
        present[s->member_inst[m]]++;
    for (size_t c = 0; c < nc; c++) {
        s->coll_member_start[c + 1] = s->coll_member_start[c] + present[c];
        present[c] = 0;
    }
    for (size_t m = 0; m < s->n_members; m++) {
        int32_t c = s->member_inst[m];
        s->coll_members[s->coll_member_start[c] + present[c]++] = s->member_event[m];
    }
    free(present);
    const earl_loc *loc = p->ev->location;
    for (size_t c = 0; c < nc; c++) {
        if (s->coll_count[c] >= s->coll_expected[c] ||
            s->coll_member_start[c] == s->coll_member_start[c + 1])
            continue;
        earl_eid first = s->coll_members[s->coll_member_start[c]];
        states_warn(p->warnings, EARL_SW_COLL_INCOMPLETE, loc[first], first,
                    "collective instance %zu (%s %u) has %u of %u members", c,
                    s->coll_type[c] == EARL_COLL_MPI ? "communicator" : "team",
                    (unsigned)s->coll_comm[c], (unsigned)s->coll_count[c],
                    (unsigned)s->coll_expected[c]);
    }
}

/* The member row of event i in the members list (sorted by event), -1. */
static int64_t member_row(const earl_states *s, earl_eid i)
{
    size_t lo = earl_i64_lower_bound(s->member_event, 0, s->n_members, i);
    return lo < s->n_members && s->member_event[lo] == i ? (int64_t)lo : -1;
}

int32_t earl_states_instance_of(const earl_states *s, earl_eid i)
{
    int64_t m = member_row(s, i);
    return m < 0 ? -1 : s->member_inst[m];
}

int32_t earl_states_coll(const earl_states *s, earl_eid i, const earl_eid **members, size_t *n)
{
    *n = 0;
    if (members)
        *members = NULL;
    int32_t c = earl_states_instance_of(s, i);
    if (c < 0 || s->coll_complete[c] != i)
        return -1;
    if (members)
        *members = s->coll_members + s->coll_member_start[c];
    *n = s->coll_member_start[c + 1] - s->coll_member_start[c];
    return c;
}
