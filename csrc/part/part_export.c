/*
 * part_export.c - earl_part_export: what other parts need of this part's
 * own locations (the ghosts, see earl_part.h).
 *
 * One pass over each own location's reading buffer, in its recorded order,
 * with the stack of its open regions.  An event another part needs (a
 * message whose peer is there, a collective of a communicator with a member
 * there) is marked for that part, and so is the region open around it: its
 * ENTER and, once the region is left, its LEAVE.  MPI_Init and MPI_Finalize
 * calls are marked for every part.  The marks, (part, location, position)
 * triples, are sorted and made unique, then packed into records.
 */
#include <stdlib.h>
#include <string.h>

#include "earl_part.h"
#include "internal.h"

/* ---- marks ------------------------------------------------------------------ */

typedef struct mark {
    int32_t part;
    earl_loc location;
    uint64_t position;
} mark;

typedef struct marks {
    mark *items;
    size_t n, cap;
    int nomem;
} marks;

static void mark_add(marks *m, int32_t part, earl_loc loc, uint64_t position)
{
    if (m->n == m->cap && EARL_GROW(m->items, m->cap, m->n + 1) != 0) {
        m->nomem = 1;
        return;
    }
    m->items[m->n++] = (mark){part, loc, position};
}

static int by_part_location_position(const void *a, const void *b)
{
    const mark *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    if (x->location != y->location)
        return x->location < y->location ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

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
} frame;

typedef struct pass {
    const int32_t *part_of;
    size_t n_parts;
    int32_t self;
    const comm_parts *comms;
    const uint8_t *everybody;
    uint32_t n_regions;
    uint32_t n_comms;
    frame *frames; size_t depth, cap_frames;
    int32_t *dest; size_t n_dest, cap_dest;
    uint64_t *marked_by; /* per part: the serial of the frame it was last marked on */
    uint64_t serial;
    marks *out;
    int nomem;
} pass;

/* Part p needs event i of location loc, and the region open around it. */
static void need(pass *s, int32_t p, earl_loc loc, uint64_t i)
{
    if (p < 0 || p == s->self)
        return;
    mark_add(s->out, p, loc, i);
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
                                    region < s->n_regions && s->everybody[region]};
}

/* The region opened by the innermost frame is left at event `leave` (-1:
 * never): its parts get its ENTER and LEAVE. */
static void leave(pass *s, earl_loc loc, int64_t leave_at)
{
    frame f = s->frames[--s->depth];
    if (f.everybody) {
        for (size_t p = 0; p < s->n_parts; p++)
            if ((int32_t)p != s->self) {
                mark_add(s->out, (int32_t)p, loc, f.enter);
                if (leave_at >= 0)
                    mark_add(s->out, (int32_t)p, loc, (uint64_t)leave_at);
            }
    } else {
        for (size_t k = f.first; k < s->n_dest; k++) {
            mark_add(s->out, s->dest[k], loc, f.enter);
            if (leave_at >= 0)
                mark_add(s->out, s->dest[k], loc, (uint64_t)leave_at);
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

static void scan_location(pass *s, const loc_events *b)
{
    const earl_msg_table *m = &b->tables.msg;
    const earl_coll_table *c = &b->tables.coll;
    int64_t begin = -1; /* the location's latest MPI_COLLECTIVE_BEGIN */
    s->depth = 0;
    s->n_dest = 0;
    for (size_t i = 0; i < b->n && !s->nomem; i++) {
        uint8_t k = b->kind[i];
        uint32_t row = b->payload[i];
        if (k == EARL_ENTER) {
            enter(s, i, row);
        } else if (k == EARL_LEAVE) {
            if (s->depth)
                leave(s, b->loc, (int64_t)i);
        } else if (is_message_half(k) && row != EARL_UNDEFINED_REF) {
            earl_loc peer = m->peer[row];
            if (peer >= 0 && peer != b->loc)
                need(s, s->part_of[peer], b->loc, i);
        } else if (k == EARL_MPI_COLLECTIVE_BEGIN) {
            begin = (int64_t)i;
        } else if (k == EARL_MPI_COLLECTIVE_END && row != EARL_UNDEFINED_REF) {
            uint32_t comm = c->comm[row];
            if (comm >= s->n_comms)
                continue; /* undefined: the reader warned */
            for (size_t q = s->comms->offset[comm]; q < s->comms->offset[comm + 1]; q++) {
                need(s, s->comms->part[q], b->loc, i);
                if (begin >= 0 && s->comms->part[q] != s->self)
                    mark_add(s->out, s->comms->part[q], b->loc, (uint64_t)begin);
            }
            begin = -1;
        }
    }
    while (s->depth && !s->nomem)
        leave(s, b->loc, -1); /* regions never left: their ENTERs */
}

/* ---- packing ------------------------------------------------------------------ */

static earl_ghost pack(const loc_events *b, uint64_t i)
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

earl_status earl_part_export(earl_reading *reading, const int32_t *part_of, size_t n_parts,
                             int32_t self, earl_ghosts *out, earl_error *err)
{
    memset(out, 0, sizeof *out);
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
    marks mk = {0};
    comm_parts comms = {0};
    pass s = {part_of, n_parts, self, &comms, NULL, d->n_regions, d->n_comms};
    s.out = &mk;
    s.everybody = everybody_regions(d);
    s.marked_by = calloc(n_parts ? n_parts : 1, sizeof *s.marked_by);
    int failed = !s.everybody || !s.marked_by || comm_parts_build(d, part_of, n_parts, &comms);
    for (size_t l = 0; l < n_locs && !failed; l++) {
        if (d->locations[l].held != EARL_HELD_ALL)
            continue;
        scan_location(&s, &bufs[l]);
        failed = s.nomem || mk.nomem;
    }
    free(s.frames); free(s.dest); free(s.marked_by); free((void *)s.everybody);
    comm_parts_free(&comms);
    if (!failed) {
        qsort(mk.items, mk.n, sizeof *mk.items, by_part_location_position);
        out->n_parts = n_parts;
        out->offset = calloc(n_parts + 1, sizeof *out->offset);
        out->records = malloc((mk.n ? mk.n : 1) * sizeof *out->records);
        failed = !out->offset || !out->records;
    }
    if (failed) {
        free(mk.items);
        earl_ghosts_free(out);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory exporting a part's ghosts");
    }
    size_t n = 0;
    for (size_t k = 0; k < mk.n; k++) {
        const mark *x = &mk.items[k];
        if (k && x->part == mk.items[k - 1].part && x->location == mk.items[k - 1].location &&
            x->position == mk.items[k - 1].position)
            continue;
        out->records[n++] = pack(&bufs[x->location], x->position);
        out->offset[x->part + 1] = n;
    }
    for (size_t p = 1; p <= n_parts; p++) /* parts without records */
        if (out->offset[p] < out->offset[p - 1])
            out->offset[p] = out->offset[p - 1];
    free(mk.items);
    return EARL_OK;
}
