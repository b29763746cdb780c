/*
 * part_representatives.c - earl_part_representatives: of every collective
 * instance, the members of other parts that a part's analysis needs, as
 * ghost records (earl_part.h explains the choice).
 *
 * The members of one instance come together, sorted by their END in the
 * whole trace's order.  The choice is made once per instance: the first
 * member, the first of a part other than the first's, the member whose END
 * completes the instance (the last, when the instance has as many members as
 * its communicator; an instance with more ends than members, or of a
 * communicator of unknown size, sends every member), and among the members with a
 * call around them (ENTER and LEAVE: those the collective wait states
 * read) the latest begin, the latest begin of a member that is not the
 * root, the earliest end, the root, and for scans each member beginning
 * later than every member of lower rank.  Each part that has a member gets
 * the chosen members of the other parts, ENTER, BEGIN, END and LEAVE; the
 * first of them stands for the members left out too (earl_ghost.members).
 *
 * Why these suffice: the wait states of a member take maxima and minima of
 * the begins and ends over its instance (or over its root, or over the
 * lower ranks), and every such extreme is a chosen member or an own one;
 * the EARL layer numbers an instance by its first member and completes it
 * at the member that brings its count to the communicator's size, both
 * present with the count of the others carried.
 *
 * For the root causes (EARL_REPRESENT_DELAYERS) a member's synchronisation
 * point needs the same extremes, plus the member that delays the others
 * (Scalasca's choice among equal begins: the lowest communicator rank), and
 * the part of that delayer charges the delays of every waiting member:
 * that part gets every member, every other part the representatives, the
 * delayer, and what decides whether the instance synchronises at all (a
 * member with payload; for a broadcast the waiting member that ends first;
 * for a reduction the latest sender).  An N x N instance whose members do
 * not all overlap pairs each waiting member with every other one: every part
 * gets every member of it (rare: only clocks that disagree make one).
 */
#include <stdlib.h>
#include <string.h>

#include "earl_part.h"
#include "internal.h"
#include "part_internal.h"

static int member_cmp(const earl_coll_member *x, const earl_coll_member *y)
{
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    if (x->time[EARL_MEMBER_END] != y->time[EARL_MEMBER_END])
        return x->time[EARL_MEMBER_END] < y->time[EARL_MEMBER_END] ? -1 : 1;
    if (x->location != y->location)
        return x->location < y->location ? -1 : 1;
    return x->position[EARL_MEMBER_END] < y->position[EARL_MEMBER_END] ? -1 :
           x->position[EARL_MEMBER_END] > y->position[EARL_MEMBER_END];
}

static int has_call(const earl_coll_member *m)
{
    return m->position[EARL_MEMBER_ENTER] != EARL_PART_NO_EVENT &&
           m->position[EARL_MEMBER_LEAVE] != EARL_PART_NO_EVENT;
}

/* As mpi_collectives takes it: the BEGIN inside the call, else the ENTER. */
static uint64_t begin_of(const earl_coll_member *m)
{
    return m->position[EARL_MEMBER_BEGIN] != EARL_PART_NO_EVENT ? m->time[EARL_MEMBER_BEGIN]
                                                                : m->time[EARL_MEMBER_ENTER];
}

static int is_scan(uint8_t op)
{
    return op == 14 /* OTF2_COLLECTIVE_OP_SCAN */ || op == 15 /* _EXSCAN */;
}

/* The root causes' kinds of collectives (properties/rootcause/points.py),
 * by OTF2_CollectiveOp; the others have no synchronisation points. */
enum { RC_NONE, RC_BARRIER, RC_NXN, RC_ONE_TO_N, RC_N_TO_ONE };

static int rc_kind(uint8_t op)
{
    switch (op) {
    case 0: return RC_BARRIER;
    case 6: case 7: case 8: case 11: case 13: case 16: return RC_NXN; /* not ALLTOALLV/W */
    case 1: case 4: case 5: return RC_ONE_TO_N;                       /* BCAST, SCATTER(V) */
    case 2: case 3: case 12: return RC_N_TO_ONE;                      /* GATHER(V), REDUCE */
    default: return RC_NONE;
    }
}

/* Scratch of the choice, reused from instance to instance. */
typedef struct choice {
    uint8_t *chosen;        /* per member of the instance */
    size_t *by_rank;
    size_t cap;
    size_t *own;            /* per part: members in the instance */
    size_t *stamp;          /* per part: the instance it was last counted for, + 1 */
    int32_t *dests;         /* parts with a member */
    size_t n_dests;
    int32_t every_to;       /* the part that gets every member (-1: none) */
    /* ranks in the communicator of the instances being chosen (they come
     * communicator by communicator), made at the first equal begins */
    const earl_defs *defs;
    int32_t *rank_at;       /* per location: its place among the members, -1: none */
    uint32_t rank_comm;     /* the communicator rank_at holds, UINT32_MAX: none */
    int nomem;
} choice;

static int by_rank_ctx_cmp(const void *a, const void *b, void *ctx)
{
    const earl_coll_member *m = ctx;
    const earl_coll_member *x = &m[*(const size_t *)a], *y = &m[*(const size_t *)b];
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

static void choose_for_root_causes(const earl_coll_member *m, size_t n, const int32_t *part_of,
                                   choice *c);

/* Mark, among members m[0..n) of one instance, those every part needs
 * (with the root causes' too: flags), and set c->every_to. */
static void choose(const earl_coll_member *m, size_t n, uint32_t expected, const int32_t *part_of,
                   unsigned flags, choice *c)
{
    uint8_t *sel = c->chosen;
    c->every_to = -1;
    if (!expected || n > expected) { /* more ends than members: every one, as they are */
        memset(sel, 1, n);
        return;
    }
    memset(sel, 0, n);
    sel[0] = 1;
    for (size_t k = 1; k < n; k++)
        if (part_of[m[k].location] != part_of[m[0].location]) {
            sel[k] = 1;
            break;
        }
    if (n == expected)
        sel[n - 1] = 1;
    int32_t root = m[0].root;
    int64_t late = -1, late_other = -1, early_end = -1;
    for (size_t k = 0; k < n; k++) {
        if (!has_call(&m[k]))
            continue;
        uint64_t b = begin_of(&m[k]);
        if (late < 0 || b > begin_of(&m[late]))
            late = (int64_t)k;
        if (m[k].location != root && (late_other < 0 || b > begin_of(&m[late_other])))
            late_other = (int64_t)k;
        if (early_end < 0 || m[k].time[EARL_MEMBER_END] < m[early_end].time[EARL_MEMBER_END])
            early_end = (int64_t)k;
        if (m[k].location == root)
            sel[k] = 1;
    }
    if (late >= 0)
        sel[late] = 1;
    if (late_other >= 0)
        sel[late_other] = 1;
    if (early_end >= 0)
        sel[early_end] = 1;
    if (is_scan(m[0].op)) {
        size_t nc = 0;
        for (size_t k = 0; k < n; k++)
            if (has_call(&m[k]))
                c->by_rank[nc++] = k;
        qsort_r(c->by_rank, nc, sizeof *c->by_rank, by_rank_ctx_cmp, (void *)m);
        int any = 0;
        uint64_t most = 0;
        for (size_t j = 0; j < nc; j++) {
            uint64_t b = begin_of(&m[c->by_rank[j]]);
            if (!any || b > most) {
                sel[c->by_rank[j]] = 1;
                most = b;
                any = 1;
            }
        }
    }
    if ((flags & EARL_REPRESENT_DELAYERS) && n == expected)
        choose_for_root_causes(m, n, part_of, c);
}

/* The rank of member m's location in its communicator as the root causes
 * order equal begins: its place among the members (the last place, as their
 * table takes it), 0 when none (or out of memory: c->nomem). */
static uint32_t rank_of(choice *c, const earl_coll_member *m)
{
    if (c->rank_comm != m->comm) {
        size_t n = c->defs->n_locations ? c->defs->n_locations : 1;
        if (!c->rank_at && !(c->rank_at = malloc(n * sizeof *c->rank_at))) {
            c->nomem = 1;
            return 0;
        }
        for (size_t l = 0; l < n; l++)
            c->rank_at[l] = -1;
        const earl_comm *cm = m->comm < c->defs->n_comms ? &c->defs->comms[m->comm] : NULL;
        for (uint32_t k = 0; cm && cm->member_locations && k < cm->size; k++)
            if (cm->member_locations[k] >= 0 && (size_t)cm->member_locations[k] < n)
                c->rank_at[cm->member_locations[k]] = (int32_t)k;
        c->rank_comm = m->comm;
    }
    int32_t r = c->rank_at[m->location];
    return r < 0 ? 0 : (uint32_t)r;
}

/* Among members m[0..n) with a call for which want(m, k) holds, the
 * one of latest begin, the lowest rank among equal begins, then the first;
 * -1 when none. */
static int64_t latest_lowest_rank(const earl_coll_member *m, size_t n, choice *c,
                                  int (*want)(const earl_coll_member *, size_t))
{
    int64_t best = -1;
    uint32_t best_rank = 0;
    for (size_t k = 0; k < n; k++) {
        if (!has_call(&m[k]) || !want(m, k))
            continue;
        uint64_t b = begin_of(&m[k]);
        if (best < 0 || b > begin_of(&m[best])) {
            best = (int64_t)k;
            best_rank = UINT32_MAX; /* its rank is looked up only on a tie */
        } else if (b == begin_of(&m[best])) {
            if (best_rank == UINT32_MAX)
                best_rank = rank_of(c, &m[best]);
            uint32_t r = rank_of(c, &m[k]);
            if (r < best_rank) {
                best = (int64_t)k;
                best_rank = r;
            }
        }
    }
    return best;
}

static int any_member(const earl_coll_member *m, size_t k)
{
    (void)m;
    (void)k;
    return 1;
}

static int a_sender(const earl_coll_member *m, size_t k)
{
    return m[k].sent != 0;
}

/* Where everybody meets everybody, the latest to begin delays the others:
 * every part gets it, its part gets every member. */
static void latest_delays(const earl_coll_member *m, size_t n, const int32_t *part_of,
                          choice *c)
{
    int64_t delayer = latest_lowest_rank(m, n, c, any_member);
    c->chosen[delayer] = 1;
    c->every_to = part_of[m[delayer].location];
}

/* What the root causes need besides the representatives (top of this
 * file), for members m[0..n) of a complete instance: more members in sel,
 * and in c->every_to the part that gets every member (or every part gets
 * every member: sel all set). */
static void choose_for_root_causes(const earl_coll_member *m, size_t n, const int32_t *part_of,
                                   choice *c)
{
    uint8_t *sel = c->chosen;
    int kind = rc_kind(m[0].op);
    int32_t root = m[0].root;
    size_t with_call = 0;
    int64_t payload = -1, root_at = -1, first_end = -1;
    uint64_t latest = 0, root_b = 0;
    for (size_t k = 0; k < n; k++) {
        if (!has_call(&m[k]))
            continue;
        with_call++;
        if (payload < 0 && (m[k].sent != 0 || m[k].received != 0))
            payload = (int64_t)k;
        if (with_call == 1 || begin_of(&m[k]) > latest)
            latest = begin_of(&m[k]);
        if (first_end < 0 || m[k].time[EARL_MEMBER_END] < m[first_end].time[EARL_MEMBER_END])
            first_end = (int64_t)k;
        if (m[k].location == root) {
            root_at = (int64_t)k;
            root_b = begin_of(&m[k]);
        }
    }
    if (kind == RC_NONE || with_call < 2)
        return; /* no synchronisation point */
    switch (kind) {
    case RC_NXN:
        if (payload < 0)
            return;
        sel[payload] = 1; /* it makes the instance synchronise */
        if (m[first_end].time[EARL_MEMBER_END] <= latest) { /* not all overlap */
            memset(sel, 1, n);
            return;
        }
        latest_delays(m, n, part_of, c); /* everybody meets everybody */
        return;
    case RC_BARRIER:
        latest_delays(m, n, part_of, c);
        return;
    case RC_ONE_TO_N: {
        if (root_at < 0)
            return;
        int64_t waiter_end = -1; /* the waiting member that ends first */
        for (size_t k = 0; k < n; k++)
            if (has_call(&m[k]) && m[k].location != root && m[k].received > 0 &&
                begin_of(&m[k]) < root_b &&
                (waiter_end < 0 ||
                 m[k].time[EARL_MEMBER_END] < m[waiter_end].time[EARL_MEMBER_END]))
                waiter_end = (int64_t)k;
        if (waiter_end >= 0)
            sel[waiter_end] = 1;
        c->every_to = part_of[m[root_at].location]; /* the root pairs with every waiter */
        return;
    }
    default: { /* N to 1: the root waits for the latest sender */
        int64_t sender = latest_lowest_rank(m, n, c, a_sender);
        if (sender >= 0)
            sel[sender] = 1;
        return;
    }
    }
}

static earl_ghost record(const earl_coll_member *m, int which, uint32_t members)
{
    earl_ghost g;
    memset(&g, 0, sizeof g);
    g.time = m->time[which];
    g.position = m->position[which];
    g.partner = -1;
    g.location = m->location;
    g.ref = EARL_UNDEFINED_REF;
    g.peer = EARL_NONE;
    g.peer_rank = EARL_UNDEFINED_REF;
    g.requested_source = g.requested_tag = EARL_REQUESTED_UNKNOWN;
    switch (which) {
    case EARL_MEMBER_ENTER: g.kind = EARL_ENTER; g.ref = m->region; break;
    case EARL_MEMBER_LEAVE: g.kind = EARL_LEAVE; g.ref = m->region; break;
    case EARL_MEMBER_BEGIN: g.kind = EARL_MPI_COLLECTIVE_BEGIN; break;
    default:
        g.kind = EARL_MPI_COLLECTIVE_END;
        g.ref = m->comm;
        g.peer = m->root;
        g.peer_rank = m->root_rank;
        g.tag = m->op;
        g.bytes = m->sent;
        g.request = m->received;
        g.seq = m->seq;
        g.members = members;
    }
    return g;
}

/* The chosen members (every member: every) of other parts than d, to d's
 * list; the first carries the count of the members d has neither as own nor
 * as ghosts. */
static void send_to(const earl_coll_member *m, size_t n, const uint8_t *sel, int every,
                    const int32_t *part_of, int32_t d, size_t own, part_lists *out)
{
    size_t sent = 0;
    for (size_t k = 0; k < n; k++)
        sent += (every || sel[k]) && part_of[m[k].location] != d;
    int first = 1;
    for (size_t k = 0; k < n; k++) {
        if (!(every || sel[k]) || part_of[m[k].location] == d)
            continue;
        uint32_t members = 1 + (first ? (uint32_t)(n - own - sent) : 0);
        first = 0;
        for (int w = EARL_MEMBER_ENTER; w <= EARL_MEMBER_LEAVE; w++) {
            if (m[k].position[w] == EARL_PART_NO_EVENT)
                continue;
            earl_ghost g = record(&m[k], w, members);
            part_lists_add_record(out, (size_t)d,
                                  part_key((uint64_t)(uint32_t)g.location, g.position), &g);
        }
    }
}

static int choice_reserve(choice *c, size_t n)
{
    if (n <= c->cap)
        return 0;
    uint8_t *sel = realloc(c->chosen, n);
    if (sel)
        c->chosen = sel;
    size_t *r = realloc(c->by_rank, n * sizeof *r);
    if (r)
        c->by_rank = r;
    if (!sel || !r)
        return -1;
    c->cap = n;
    return 0;
}

/* Each part's list sorted by (location, position), laid out as out. */
static int lay_out(part_lists *lists, earl_ghosts *out)
{
    if (part_lists_layout(lists, out) != 0)
        return -1;
    for (size_t p = 0; p < lists->n_parts; p++) {
        size_t n = lists->n[p];
        uint64_t *index = malloc((n ? n : 1) * sizeof *index);
        if (!index)
            return -1;
        for (size_t k = 0; k < n; k++)
            index[k] = k;
        if (part_sort(lists->key[p], index, n) != 0) {
            free(index);
            return -1;
        }
        earl_ghost *dst = out->records + out->offset[p];
        for (size_t k = 0; k < n; k++)
            dst[k] = lists->record[p][index[k]];
        free(index);
    }
    return 0;
}

earl_status earl_part_representatives(const earl_defs *defs, const earl_coll_member *members,
                                      size_t n, const int32_t *part_of, size_t n_parts,
                                      earl_ghosts *out, earl_error *err)
{
    return earl_part_represent(defs, members, n, part_of, n_parts, 0, out, err);
}

earl_status earl_part_represent(const earl_defs *defs, const earl_coll_member *members, size_t n,
                                const int32_t *part_of, size_t n_parts, unsigned flags,
                                earl_ghosts *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
    if (flags & ~EARL_REPRESENT_DELAYERS)
        return earl_fail(err, EARL_ERR_INVALID, "unknown representatives' flags 0x%x", flags);
    for (size_t k = 0; k < n; k++) {
        if (k && member_cmp(&members[k - 1], &members[k]) > 0)
            return earl_fail(err, EARL_ERR_INVALID, "collective member %zu is out of order "
                             "(sort the members by communicator, number and end)", k);
        if (members[k].location < 0 || (uint32_t)members[k].location >= defs->n_locations ||
            part_of[members[k].location] < 0 || (size_t)part_of[members[k].location] >= n_parts)
            return earl_fail(err, EARL_ERR_INVALID, "collective member %zu: location %d is in "
                             "no part", k, members[k].location);
    }
    choice c;
    memset(&c, 0, sizeof c);
    c.defs = defs;
    c.rank_comm = UINT32_MAX;
    part_lists lists;
    memset(&lists, 0, sizeof lists);
    c.own = calloc(n_parts ? n_parts : 1, sizeof *c.own);
    c.stamp = calloc(n_parts ? n_parts : 1, sizeof *c.stamp);
    c.dests = malloc((n_parts ? n_parts : 1) * sizeof *c.dests);
    int failed = !c.own || !c.stamp || !c.dests || part_lists_init(&lists, n_parts, 1) != 0;
    size_t instance = 0;
    for (size_t a = 0, b; a < n && !failed; a = b, instance++) {
        for (b = a + 1; b < n && members[b].comm == members[a].comm &&
                        members[b].seq == members[a].seq; b++)
            ;
        const earl_coll_member *m = members + a;
        size_t count = b - a;
        c.n_dests = 0;
        for (size_t k = 0; k < count; k++) {
            int32_t p = part_of[m[k].location];
            if (c.stamp[p] != instance + 1) {
                c.stamp[p] = instance + 1;
                c.own[p] = 0;
                c.dests[c.n_dests++] = p;
            }
            c.own[p]++;
        }
        if (c.n_dests < 2)
            continue; /* the members of one part: nobody else needs them */
        const earl_comm *cm = m[0].comm < defs->n_comms ? &defs->comms[m[0].comm] : NULL;
        uint32_t expected = cm && cm->defined ? cm->size : 0;
        if (choice_reserve(&c, count) != 0) {
            failed = 1;
            break;
        }
        choose(m, count, expected, part_of, flags, &c);
        for (size_t j = 0; j < c.n_dests; j++)
            send_to(m, count, c.chosen, c.dests[j] == c.every_to, part_of, c.dests[j],
                    c.own[c.dests[j]], &lists);
        failed = lists.nomem || c.nomem;
    }
    if (!failed)
        failed = lay_out(&lists, out) != 0;
    free(c.chosen);
    free(c.by_rank);
    free(c.own);
    free(c.stamp);
    free(c.dests);
    free(c.rank_at);
    part_lists_free(&lists);
    if (failed) {
        earl_ghosts_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory choosing the collectives' "
                         "representatives");
    }
    return EARL_OK;
}
