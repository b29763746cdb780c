/*
 * part_export.c - earl_part_export: what other parts need of this part's
 * own locations (the ghosts, see earl_part.h).
 *
 * One pass over each own location's reading buffer, in its recorded order,
 * with the stack of its open regions.  An event another part needs (a
 * message whose peer is there, a collective of a communicator with a member
 * there) is marked for that part, and so is the region open around it: its
 * ENTER and, once the region is left, its LEAVE.  MPI_Init and MPI_Finalize
 * calls are marked for every part.  A location's marks, (part, position)
 * keys, are sorted (part_sort) and made unique, and go to their parts'
 * lists; the lists are then made into records, part after part: 80 bytes
 * each (earl_part_export, for the MPI parts' messages), or packed narrow as
 * they are made (earl_part_export_packed, for the scratch folder of the
 * analysis in turn).
 *
 * Each collective end is numbered on its location per communicator, as the
 * EARL layer numbers it (earl_ghost.seq).  With a member list asked for,
 * collectives are not marked: each end of a communicator that has members
 * in other parts becomes a member row with its call around it instead
 * (its LEAVE filled in when the call's region closes).
 */
#include <stdlib.h>
#include <string.h>

#include "earl_part.h"
#include "internal.h"
#include "part_internal.h"

/* ---- who needs what ------------------------------------------------------------ */

/* The parts of each communicator's members, as rows of a CSR table. */
typedef struct comm_parts {
    size_t *offset; /* n_comms + 1 */
    int32_t *part;
} comm_parts;

static int comm_parts_build(const earl_defs *d, const int32_t *part_of, size_t n_parts,
                            comm_parts *out)
{
    out->offset = calloc((size_t)d->n_comms + 1, sizeof *out->offset);
    uint32_t *seen = calloc(n_parts ? n_parts : 1, sizeof *seen); /* comm + 1 */
    size_t cap = 0, n = 0;
    out->part = NULL;
    if (!out->offset || !seen) {
        free(seen);
        return -1;
    }
    for (uint32_t c = 0; c < d->n_comms; c++) {
        const earl_comm *cm = &d->comms[c];
        for (uint32_t r = 0; cm->defined && !cm->is_inter && cm->member_locations &&
                             r < cm->size; r++) {
            earl_loc l = cm->member_locations[r];
            int32_t p = l >= 0 ? part_of[l] : -1;
            if (p < 0 || seen[p] == c + 1)
                continue;
            seen[p] = c + 1;
            if (n == cap && EARL_GROW(out->part, cap, n + 1) != 0) {
                free(seen);
                return -1;
            }
            out->part[n++] = p;
        }
        out->offset[c + 1] = n;
    }
    free(seen);
    return 0;
}

static void comm_parts_free(comm_parts *c)
{
    free(c->offset);
    free(c->part);
}

/* Regions that every process calls once and that are compared across all of
 * them (MPI_Init, MPI_Init_thread, MPI_Finalize). */
static uint8_t *everybody_regions(const earl_defs *d)
{
    uint8_t *mask = calloc(d->n_regions ? d->n_regions : 1, 1);
    if (!mask)
        return NULL;
    for (uint32_t r = 0; r < d->n_regions; r++) {
        if (!d->regions[r].defined || d->regions[r].name >= d->strings.count)
            continue;
        const char *name = d->strings.text[d->regions[r].name];
        mask[r] = !strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread") ||
                  !strcmp(name, "MPI_Finalize");
    }
    return mask;
}

/* ---- the pass over one location ------------------------------------------------- */

/* An open region: its ENTER and the parts that need it (dest[first..] of the
 * pass's stack of parts, appended while it is the innermost). */
typedef struct frame {
    uint64_t enter;
    size_t first;
    uint64_t serial;   /* tells parts marked on this frame from older ones */
    int everybody;
    int64_t member;    /* the member row whose END it encloses, -1 */
} frame;

typedef struct pass {
    const int32_t *part_of;
    size_t n_parts;
    int32_t self;
    const earl_defs *defs;
    const comm_parts *comms;
    const uint8_t *everybody;
    frame *frames; size_t depth, cap_frames;
    int32_t *dest; size_t n_dest, cap_dest;
    uint64_t *marked_by; /* per part: the serial of the frame it was last marked on */
    uint64_t serial;
    uint64_t *keys; size_t n_keys, cap_keys;  /* this location's marks */
    uint32_t *comm_seq;  /* per communicator: this location's collective ends so far */
    uint32_t *seq_of_row; /* per collective row of this location: its seq */
    /* members (a member list was asked for), and per communicator the rank
     * of each location, made for the scans' communicators when first needed */
    earl_coll_member *members; size_t n_members, cap_members;
    int32_t **rank_of;
    int nomem;
} pass;

static void mark(pass *s, int32_t p, uint64_t position)
{
    if (s->n_keys == s->cap_keys && EARL_GROW(s->keys, s->cap_keys, s->n_keys + 1) != 0) {
        s->nomem = 1;
        return;
    }
    s->keys[s->n_keys++] = part_key((uint64_t)p, position);
}

/* Part p needs event i, and the region open around it. */
static void need(pass *s, int32_t p, uint64_t i)
{
    if (p < 0 || p == s->self)
        return;
    mark(s, p, i);
    if (!s->depth)
        return;
    frame *f = &s->frames[s->depth - 1];
    if (s->marked_by[p] == f->serial)
        return;
    s->marked_by[p] = f->serial;
    if (s->n_dest == s->cap_dest && EARL_GROW(s->dest, s->cap_dest, s->n_dest + 1) != 0) {
        s->nomem = 1;
        return;
    }
    s->dest[s->n_dest++] = p;
}

static void enter(pass *s, uint64_t i, uint32_t region)
{
    if (s->depth == s->cap_frames && EARL_GROW(s->frames, s->cap_frames, s->depth + 1) != 0) {
        s->nomem = 1;
        return;
    }
    s->frames[s->depth++] = (frame){i, s->n_dest, ++s->serial,
                                    region < s->defs->n_regions && s->everybody[region], -1};
}

/* The region opened by the innermost frame is left at event `leave` (-1:
 * never): its parts get its ENTER and LEAVE, its member its LEAVE. */
static void leave(pass *s, const loc_events *b, int64_t leave_at)
{
    frame f = s->frames[--s->depth];
    if (f.member >= 0 && leave_at >= 0) {
        earl_coll_member *m = &s->members[f.member];
        m->position[EARL_MEMBER_LEAVE] = (uint64_t)leave_at;
        m->time[EARL_MEMBER_LEAVE] = b->time[leave_at];
    }
    if (f.everybody) {
        for (size_t p = 0; p < s->n_parts; p++)
            if ((int32_t)p != s->self) {
                mark(s, (int32_t)p, f.enter);
                if (leave_at >= 0)
                    mark(s, (int32_t)p, (uint64_t)leave_at);
            }
    } else {
        for (size_t k = f.first; k < s->n_dest; k++) {
            mark(s, s->dest[k], f.enter);
            if (leave_at >= 0)
                mark(s, s->dest[k], (uint64_t)leave_at);
        }
    }
    s->n_dest = f.first;
}

/* The records of a message that another part's analysis reads: the send with
 * its completion (the call completing a send is a column of every message),
 * the receive with the MPI_IRECV_REQUEST that posted it. */
static int is_message_half(uint8_t kind)
{
    return kind == EARL_MPI_SEND || kind == EARL_MPI_ISEND || kind == EARL_MPI_ISEND_COMPLETE ||
           kind == EARL_MPI_RECV || kind == EARL_MPI_IRECV || kind == EARL_MPI_IRECV_REQUEST;
}

static int is_scan(uint8_t op)
{
    return op == 14 /* OTF2_COLLECTIVE_OP_SCAN */ || op == 15 /* _EXSCAN */;
}

/* The rank of location l in communicator comm (UINT32_MAX: no member). */
static uint32_t rank_in(pass *s, uint32_t comm, earl_loc l)
{
    const earl_comm *cm = &s->defs->comms[comm];
    if (!s->rank_of[comm]) {
        size_t n = s->defs->n_locations ? s->defs->n_locations : 1;
        int32_t *r = malloc(n * sizeof *r);
        if (!r) {
            s->nomem = 1;
            return UINT32_MAX;
        }
        for (size_t k = 0; k < n; k++)
            r[k] = -1;
        for (uint32_t k = 0; cm->member_locations && k < cm->size; k++)
            if (cm->member_locations[k] >= 0 && (size_t)cm->member_locations[k] < n &&
                r[cm->member_locations[k]] < 0)
                r[cm->member_locations[k]] = (int32_t)k;
        s->rank_of[comm] = r;
    }
    int32_t r = s->rank_of[comm][l];
    return r < 0 ? UINT32_MAX : (uint32_t)r;
}

/* The collective end i (row `row`, number seq on its communicator) as an
 * own member, with the BEGIN before it inside its call and the call. */
static void add_member(pass *s, const loc_events *b, uint64_t i, uint32_t row, uint32_t seq,
                       int64_t begin)
{
    if (s->n_members == s->cap_members &&
        EARL_GROW(s->members, s->cap_members, s->n_members + 1) != 0) {
        s->nomem = 1;
        return;
    }
    const earl_coll_table *c = &b->tables.coll;
    earl_coll_member *m = &s->members[s->n_members];
    memset(m, 0, sizeof *m);
    for (int k = 0; k < 4; k++)
        m->position[k] = EARL_PART_NO_EVENT;
    m->position[EARL_MEMBER_END] = i;
    m->time[EARL_MEMBER_END] = b->time[i];
    frame *f = s->depth ? &s->frames[s->depth - 1] : NULL;
    if (begin >= 0 && (!f || (uint64_t)begin > f->enter)) {
        m->position[EARL_MEMBER_BEGIN] = (uint64_t)begin;
        m->time[EARL_MEMBER_BEGIN] = b->time[begin];
    }
    m->region = EARL_UNDEFINED_REF;
    if (f) {
        m->position[EARL_MEMBER_ENTER] = f->enter;
        m->time[EARL_MEMBER_ENTER] = b->time[f->enter];
        m->region = b->payload[f->enter];
        f->member = (int64_t)s->n_members;
    }
    m->sent = c->sent[row];
    m->received = c->received[row];
    m->comm = c->comm[row];
    m->seq = seq;
    m->location = b->loc;
    m->root = c->root[row];
    m->root_rank = c->root_rank[row];
    m->op = c->op[row];
    m->rank = is_scan(m->op) ? rank_in(s, m->comm, b->loc) : UINT32_MAX;
    s->n_members++;
}

/* Does communicator comm have members in a part other than this one? */
static int spans_parts(const pass *s, uint32_t comm)
{
    for (size_t q = s->comms->offset[comm]; q < s->comms->offset[comm + 1]; q++)
        if (s->comms->part[q] != s->self)
            return 1;
    return 0;
}

static void collective_end(pass *s, const loc_events *b, uint64_t i, uint32_t row,
                           int64_t begin, int list_members)
{
    uint32_t comm = b->tables.coll.comm[row];
    uint32_t seq = s->comm_seq[comm]++;
    s->seq_of_row[row] = seq;
    if (list_members) {
        if (spans_parts(s, comm))
            add_member(s, b, i, row, seq, begin);
        return;
    }
    for (size_t q = s->comms->offset[comm]; q < s->comms->offset[comm + 1]; q++) {
        int32_t p = s->comms->part[q];
        need(s, p, i);
        if (begin >= 0 && p != s->self)
            mark(s, p, (uint64_t)begin);
    }
}

static void scan_location(pass *s, const loc_events *b, int list_members)
{
    const earl_msg_table *m = &b->tables.msg;
    const earl_coll_table *c = &b->tables.coll;
    int64_t begin = -1; /* the location's latest MPI_COLLECTIVE_BEGIN */
    s->depth = 0;
    s->n_dest = 0;
    s->n_keys = 0;
    memset(s->comm_seq, 0, (s->defs->n_comms ? s->defs->n_comms : 1) * sizeof *s->comm_seq);
    for (size_t i = 0; i < b->n && !s->nomem; i++) {
        uint8_t k = b->kind[i];
        uint32_t row = b->payload[i];
        if (k == EARL_ENTER) {
            enter(s, i, row);
        } else if (k == EARL_LEAVE) {
            if (s->depth)
                leave(s, b, (int64_t)i);
        } else if (is_message_half(k) && row != EARL_UNDEFINED_REF) {
            earl_loc peer = m->peer[row];
            if (peer >= 0 && peer != b->loc)
                need(s, s->part_of[peer], i);
        } else if (k == EARL_MPI_COLLECTIVE_BEGIN) {
            begin = (int64_t)i;
        } else if (k == EARL_MPI_COLLECTIVE_END && row != EARL_UNDEFINED_REF) {
            if (c->comm[row] < s->defs->n_comms) /* undefined: the reader warned */
                collective_end(s, b, i, row, begin, list_members);
            begin = -1;
        }
    }
    while (s->depth && !s->nomem)
        leave(s, b, -1); /* regions never left: their ENTERs */
}

/* ---- packing ------------------------------------------------------------------ */

static earl_ghost pack(const loc_events *b, uint64_t i, const uint32_t *seq_of_row)
{
    earl_ghost g;
    memset(&g, 0, sizeof g);
    g.time = b->time[i];
    g.position = i;
    g.partner = -1;
    g.location = b->loc;
    g.kind = b->kind[i];
    g.ref = EARL_UNDEFINED_REF;
    g.peer = EARL_NONE;
    g.peer_rank = EARL_UNDEFINED_REF;
    g.requested_source = g.requested_tag = EARL_REQUESTED_UNKNOWN;
    uint32_t row = b->payload[i];
    if (earl_kind_has_region(g.kind)) {
        g.ref = row;
    } else if (earl_kind_family(g.kind) == EARL_FAMILY_MSG && row != EARL_UNDEFINED_REF) {
        const earl_msg_table *m = &b->tables.msg;
        g.ref = m->comm[row];
        g.peer = m->peer[row];
        g.peer_rank = m->peer_rank[row];
        g.tag = m->tag[row];
        g.bytes = m->bytes[row];
        g.request = m->request[row];
        g.partner = m->partner[row] == EARL_EID32_NONE ? -1 : (int64_t)m->partner[row];
        g.requested_source = earl_msg_requested_source(m, row);
        g.requested_tag = earl_msg_requested_tag(m, row);
    } else if (g.kind == EARL_MPI_COLLECTIVE_END && row != EARL_UNDEFINED_REF) {
        const earl_coll_table *c = &b->tables.coll;
        g.ref = c->comm[row];
        g.peer = c->root[row];
        g.peer_rank = c->root_rank[row];
        g.tag = c->op[row];
        g.bytes = c->sent[row];
        g.request = c->received[row];
        g.seq = seq_of_row ? seq_of_row[row] : 0;
        g.members = 1;
    }
    return g;
}

void earl_ghosts_free(earl_ghosts *g)
{
    if (!g)
        return;
    free(g->offset);
    free(g->records);
    memset(g, 0, sizeof *g);
}

/* A location's marks, sorted and unique, to their parts' lists. */
static void hand_out(pass *s, part_lists *lists, earl_loc loc)
{
    if (part_sort(s->keys, NULL, s->n_keys) != 0) {
        s->nomem = 1;
        return;
    }
    for (size_t k = 0; k < s->n_keys; k++)
        if (!k || s->keys[k] != s->keys[k - 1])
            part_lists_add(lists, part_key_high(s->keys[k]),
                           part_key((uint64_t)loc, part_key_position(s->keys[k])));
}

static void pass_free(pass *s)
{
    free(s->frames);
    free(s->dest);
    free(s->marked_by);
    free(s->keys);
    free(s->comm_seq);
    free(s->seq_of_row);
    for (uint32_t c = 0; s->rank_of && c < s->defs->n_comms; c++)
        free(s->rank_of[c]);
    free(s->rank_of);
    free((void *)s->everybody);
}

static int by_instance(const void *a, const void *b)
{
    const earl_coll_member *x = a, *y = b;
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

void earl_packed_ghosts_free(earl_packed_ghosts *g)
{
    if (!g)
        return;
    free(g->count);
    free(g->offset);
    free(g->bytes);
    memset(g, 0, sizeof *g);
}

/* The records of the lists, part after part, wide into *wide (laid out
 * by part_lists_layout) or packed into *narrow, one run per part. */
static int write_records(const part_lists *lists, const loc_events *bufs, uint32_t *const *seqs,
                         earl_ghosts *wide, earl_packed_ghosts *narrow)
{
    size_t n_parts = lists->n_parts;
    if (wide) {
        if (part_lists_layout(lists, wide) != 0)
            return -1;
        size_t n = 0;
        for (size_t p = 0; p < n_parts; p++)
            for (size_t k = 0; k < lists->n[p]; k++) {
                earl_loc l = (earl_loc)part_key_high(lists->key[p][k]);
                wide->records[n++] = pack(&bufs[l], part_key_position(lists->key[p][k]), seqs[l]);
            }
        return 0;
    }
    memset(narrow, 0, sizeof *narrow);
    narrow->n_parts = n_parts;
    narrow->count = calloc(n_parts + 1, sizeof *narrow->count);
    narrow->offset = calloc(n_parts + 1, sizeof *narrow->offset);
    size_t total = 0;
    for (size_t p = 0; p < n_parts; p++)
        total += lists->n[p];
    part_packer pk;
    if (!narrow->count || !narrow->offset || part_packer_init(&pk, total) != 0)
        return -1;
    for (size_t p = 0; p < n_parts; p++) {
        part_packer_restart(&pk); /* a run per part: unpacked on its own */
        for (size_t k = 0; k < lists->n[p]; k++) {
            earl_loc l = (earl_loc)part_key_high(lists->key[p][k]);
            earl_ghost g = pack(&bufs[l], part_key_position(lists->key[p][k]), seqs[l]);
            if (part_packer_add(&pk, &g) != 0) {
                part_packer_free(&pk);
                return -1;
            }
        }
        narrow->count[p + 1] = narrow->count[p] + lists->n[p];
        narrow->offset[p + 1] = pk.used;
    }
    size_t bytes;
    narrow->bytes = part_packer_take(&pk, &bytes);
    return 0;
}

/* earl_part_export (wide) or earl_part_export_packed (narrow): the one
 * pass over the own locations, then the records written either way. */
static earl_status export(earl_reading *reading, const int32_t *part_of, size_t n_parts,
                          int32_t self, earl_coll_member **members, size_t *n_members,
                          earl_ghosts *wide, earl_packed_ghosts *narrow, earl_error *err)
{
    if (wide)
        memset(wide, 0, sizeof *wide);
    else
        memset(narrow, 0, sizeof *narrow);
    if (members) {
        *members = NULL;
        *n_members = 0;
    }
    const defs_store *defs;
    size_t n_locs;
    loc_events *bufs = reading_buffers(reading, &defs, &n_locs);
    const earl_defs *d = &defs->view;
    for (size_t l = 0; l < n_locs; l++) {
        if (part_of[l] >= (int32_t)n_parts)
            return earl_fail(err, EARL_ERR_INVALID, "earl_part_export: location %zu is in part "
                             "%d of %zu", l, part_of[l], n_parts);
        if (d->locations[l].held == EARL_HELD_ALL && part_of[l] != self)
            return earl_fail(err, EARL_ERR_INVALID, "earl_part_export: location %zu was read "
                             "but belongs to part %d, not to part %d", l, part_of[l], self);
    }
    comm_parts comms = {0};
    part_lists lists;
    memset(&lists, 0, sizeof lists);
    pass s;
    memset(&s, 0, sizeof s);
    s.part_of = part_of;
    s.n_parts = n_parts;
    s.self = self;
    s.defs = d;
    s.comms = &comms;
    s.everybody = everybody_regions(d);
    s.marked_by = calloc(n_parts ? n_parts : 1, sizeof *s.marked_by);
    s.comm_seq = calloc(d->n_comms ? d->n_comms : 1, sizeof *s.comm_seq);
    s.rank_of = calloc(d->n_comms ? d->n_comms : 1, sizeof *s.rank_of);
    int failed = !s.everybody || !s.marked_by || !s.comm_seq || !s.rank_of ||
                 comm_parts_build(d, part_of, n_parts, &comms) || part_lists_init(&lists, n_parts, 0);
    /* every location's rows' numbers, for packing: kept until then */
    uint32_t **seqs = failed ? NULL : calloc(n_locs ? n_locs : 1, sizeof *seqs);
    failed = failed || !seqs;
    for (size_t l = 0; l < n_locs && !failed; l++) {
        if (d->locations[l].held != EARL_HELD_ALL)
            continue;
        size_t rows = bufs[l].tables.coll.count;
        s.seq_of_row = seqs[l] = malloc((rows ? rows : 1) * sizeof *seqs[l]);
        if (!s.seq_of_row) {
            failed = 1;
            break;
        }
        scan_location(&s, &bufs[l], members != NULL);
        hand_out(&s, &lists, (earl_loc)l);
        failed = s.nomem || lists.nomem;
    }
    s.seq_of_row = NULL;
    if (!failed)
        failed = write_records(&lists, bufs, seqs, wide, narrow) != 0;
    if (!failed && members) {
        qsort(s.members, s.n_members, sizeof *s.members, by_instance);
        *members = s.members;
        *n_members = s.n_members;
        s.members = NULL;
    }
    for (size_t l = 0; seqs && l < n_locs; l++)
        free(seqs[l]);
    free(seqs);
    free(s.members);
    pass_free(&s);
    part_lists_free(&lists);
    comm_parts_free(&comms);
    if (failed) {
        earl_ghosts_free(wide);
        earl_packed_ghosts_free(narrow);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory exporting a part's ghosts");
    }
    return EARL_OK;
}

earl_status earl_part_export(earl_reading *reading, const int32_t *part_of, size_t n_parts,
                             int32_t self, earl_coll_member **members, size_t *n_members,
                             earl_ghosts *out, earl_error *err)
{
    return export(reading, part_of, n_parts, self, members, n_members, out, NULL, err);
}

earl_status earl_part_export_packed(earl_reading *reading, const int32_t *part_of,
                                    size_t n_parts, int32_t self, earl_coll_member **members,
                                    size_t *n_members, earl_packed_ghosts *out, earl_error *err)
{
    return export(reading, part_of, n_parts, self, members, n_members, NULL, out, err);
}
