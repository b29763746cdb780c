/*
 * test_part_represent.c - the collective members each part gets
 * (earl_part_represent, part_representatives.c), on instances written by
 * hand: 4 locations of one communicator, locations 0 and 1 in part 0, 2 and
 * 3 in part 1.
 *   - without flags a part gets the representatives only, so a member that
 *     begins as late as the latest one but has a lower rank is left out;
 *   - with EARL_REPRESENT_DELAYERS (the root causes) that member, the one
 *     that delays the others, goes to every part, and its part gets every
 *     member of the others;
 *   - an N x N instance whose members do not all overlap goes whole to
 *     every part; a broadcast whole to its root's part, and to the others
 *     with the waiting member that ends first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "earl.h"
#include "earl_part.h"

enum { OP_BARRIER = 0, OP_BCAST = 1, OP_ALLREDUCE = 11 };

static const earl_loc every_location[4] = {0, 1, 2, 3};
static const int32_t part_of[4] = {0, 0, 1, 1};

/* Definitions of one communicator of the 4 locations, in rank order `ranks`. */
typedef struct fixture {
    earl_location locations[4];
    earl_comm comm;
    earl_defs defs;
} fixture;

static void set_up(fixture *f, const earl_loc *ranks)
{
    memset(f, 0, sizeof *f);
    f->comm.defined = 1;
    f->comm.size = 4;
    f->comm.member_locations = ranks;
    f->defs.n_locations = 4;
    f->defs.locations = f->locations;
    f->defs.n_comms = 1;
    f->defs.comms = &f->comm;
}

/* A member on location l, its call from enter to leave, its BEGIN at begin
 * and its END at end (positions: 4 per instance from 0). */
static earl_coll_member member(int32_t l, uint8_t op, uint64_t enter, uint64_t begin,
                               uint64_t end, uint64_t leave)
{
    earl_coll_member m;
    memset(&m, 0, sizeof m);
    uint64_t t[4] = {enter, begin, end, leave};
    for (int k = 0; k < 4; k++) {
        m.time[k] = t[k];
        m.position[k] = (uint64_t)k;
    }
    m.sent = m.received = 8;
    m.location = l;
    m.op = op;
    m.root = op == OP_BCAST ? 0 : -1;
    m.rank = UINT32_MAX;
    return m;
}

/* The members sorted as earl_part_export lists them: by END, then location. */
static int by_end(const void *a, const void *b)
{
    const earl_coll_member *x = a, *y = b;
    if (x->time[EARL_MEMBER_END] != y->time[EARL_MEMBER_END])
        return x->time[EARL_MEMBER_END] < y->time[EARL_MEMBER_END] ? -1 : 1;
    return (x->location > y->location) - (x->location < y->location);
}

/* Per part, which locations' END records it got (a bit per location). */
static void ends_per_part(const fixture *f, earl_coll_member *m, size_t n, unsigned flags,
                          unsigned got[2])
{
    qsort(m, n, sizeof *m, by_end);
    earl_ghosts out;
    earl_error err;
    assert_int_equal(earl_part_represent(&f->defs, m, n, part_of, 2, flags, &out, &err), EARL_OK);
    for (int p = 0; p < 2; p++) {
        got[p] = 0;
        for (size_t k = out.offset[p]; k < out.offset[p + 1]; k++)
            if (out.records[k].kind == EARL_MPI_COLLECTIVE_END) {
                assert_int_not_equal(part_of[out.records[k].location], p);
                got[p] |= 1u << out.records[k].location;
            }
    }
    earl_ghosts_free(&out);
}

/* Locations 1 and 3 begin last at the same time; in rank order 3, 2, 1, 0
 * location 3 has the lower rank: it delays the others, as Scalasca's
 * MPI_MAXLOC picks it.  Location 1 ends first (and is the latest begin the
 * representatives take), location 2 is the first of part 1 to end, location
 * 0 the last: location 3 is no representative. */
static void test_the_delayer_of_equal_begins(void **s)
{
    (void)s;
    static const earl_loc ranks[4] = {3, 2, 1, 0};
    fixture f;
    set_up(&f, ranks);
    for (int op = OP_BARRIER; op <= OP_ALLREDUCE; op += OP_ALLREDUCE) {
        earl_coll_member m[4] = {
            member(0, (uint8_t)op, 10, 10, 104, 105), member(1, (uint8_t)op, 10, 50, 100, 101),
            member(2, (uint8_t)op, 10, 30, 101, 106), member(3, (uint8_t)op, 10, 50, 103, 107)};
        unsigned plain[2], rc[2];
        ends_per_part(&f, m, 4, 0, plain);
        assert_int_equal(plain[0], 1u << 2);
        ends_per_part(&f, m, 4, EARL_REPRESENT_DELAYERS, rc);
        assert_int_equal(rc[0], 1u << 2 | 1u << 3); /* the delayer, to every part */
        assert_int_equal(rc[1], 1u << 0 | 1u << 1); /* the delayer's part: every member */
    }
}

/* An allreduce where location 0 ends before location 3 begins: the members do
 * not all overlap, so each waiting member pairs with every other one.
 * Location 2 is no representative (3 is the first of part 1, 1 the last). */
static void test_members_that_do_not_overlap_go_whole(void **s)
{
    (void)s;
    fixture f;
    set_up(&f, every_location);
    earl_coll_member m[4] = {
        member(0, OP_ALLREDUCE, 0, 1, 20, 21), member(1, OP_ALLREDUCE, 0, 2, 64, 65),
        member(2, OP_ALLREDUCE, 0, 3, 62, 63), member(3, OP_ALLREDUCE, 0, 40, 60, 61)};
    unsigned got[2];
    ends_per_part(&f, m, 4, 0, got);
    assert_int_equal(got[0], 1u << 3);
    ends_per_part(&f, m, 4, EARL_REPRESENT_DELAYERS, got);
    assert_int_equal(got[0], 1u << 2 | 1u << 3);
    assert_int_equal(got[1], 1u << 0 | 1u << 1);
}

/* A broadcast from location 0 (part 0): the root pairs with every waiting
 * member, so its part gets them all; part 1 gets the root and the waiting
 * member that ends first. */
static void test_a_broadcast_goes_whole_to_its_root(void **s)
{
    (void)s;
    fixture f;
    set_up(&f, every_location);
    earl_coll_member m[4] = {
        member(0, OP_BCAST, 0, 50, 51, 52), member(1, OP_BCAST, 0, 10, 70, 71),
        member(2, OP_BCAST, 0, 10, 60, 61), member(3, OP_BCAST, 0, 10, 65, 66)};
    m[0].received = 0; /* the root sends */
    unsigned got[2];
    ends_per_part(&f, m, 4, 0, got);
    assert_int_equal(got[0], 1u << 2);
    ends_per_part(&f, m, 4, EARL_REPRESENT_DELAYERS, got);
    assert_int_equal(got[0], 1u << 2 | 1u << 3);
    assert_true(got[1] & (1u << 0));
}

/* Flags the function does not know are refused, not ignored. */
static void test_unknown_flags_are_refused(void **s)
{
    (void)s;
    fixture f;
    set_up(&f, every_location);
    earl_coll_member m[2] = {member(0, OP_BCAST, 0, 10, 20, 21),
                             member(2, OP_BCAST, 0, 10, 20, 21)};
    qsort(m, 2, sizeof *m, by_end);
    earl_ghosts out;
    earl_error err;
    assert_int_equal(earl_part_represent(&f.defs, m, 2, part_of, 2, 0x80u, &out, &err),
                     EARL_ERR_INVALID);
    assert_non_null(strstr(err.message, "flags"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_delayer_of_equal_begins),
        cmocka_unit_test(test_members_that_do_not_overlap_go_whole),
        cmocka_unit_test(test_a_broadcast_goes_whole_to_its_root),
        cmocka_unit_test(test_unknown_flags_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
