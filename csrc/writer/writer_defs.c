/*
 * writer_defs.c - the definitions an earl_writer collects: strings (interned),
 * system tree, processes, locations, regions, groups, communicators, thread
 * teams, RMA windows and metrics.  They are checked as they come and kept in
 * the writer's state; writer.c writes them as global definitions at close.
 */
#include "writer_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Definitions                                                                */
/* ------------------------------------------------------------------------ */

earl_status earl_writer_string(earl_writer *w, const char *text, uint32_t *ref, earl_error *err)
{
    if (!text)
        text = "";
    uint64_t h = earl_hash_bytes(text, strlen(text));
    const earl_map *index = &w->string_index;
    for (size_t j = earl_map_first(index, h, 0); j != EARL_MAP_END;
         j = earl_map_next(index, j, h, 0))
        if (strcmp(w->strings.v[index->slots[j].val], text) == 0) {
            *ref = (uint32_t)index->slots[j].val;
            return EARL_OK;
        }
    char *copy = strdup(text);
    char **slot = copy ? VEC_PUSH(w->strings) : NULL;
    if (!slot || earl_map_add(&w->string_index, h, 0, (int64_t)w->strings.n - 1) != 0) {
        if (slot)
            w->strings.n--;
        free(copy);
        return wr_nomem(w, err);
    }
    *slot = copy;
    *ref = w->strings.n - 1;
    return EARL_OK;
}

/* Intern a possibly NULL string with a default. */
earl_status wr_intern(earl_writer *w, const char *text, const char *dflt, uint32_t *ref,
                          earl_error *err)
{
    return earl_writer_string(w, text ? text : dflt, ref, err);
}

earl_status earl_writer_system_node(earl_writer *w, const char *name, const char *class_name,
                                    uint32_t parent, uint32_t *ref, earl_error *err)
{
    if (parent != EARL_UNDEFINED_REF && parent >= w->nodes.n)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "system tree node '%s': parent %u is not a defined system tree node",
                     name ? name : "", parent);
    wnode n = { 0, 0, parent };
    earl_status st;
    if ((st = wr_intern(w, name, "", &n.name, err)) || (st = wr_intern(w, class_name, "", &n.class_name, err)))
        return st;
    wnode *slot = VEC_PUSH(w->nodes);
    if (!slot)
        return wr_nomem(w, err);
    *slot = n;
    *ref = w->nodes.n - 1;
    return EARL_OK;
}

earl_status earl_writer_location_group(earl_writer *w, const char *name, uint8_t type,
                                       uint32_t system_node, uint32_t creator, int32_t rank,
                                       uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    if (system_node >= w->nodes.n)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "location group '%s': system tree node %u is not defined", nm, system_node);
    if (creator != EARL_UNDEFINED_REF && creator >= w->lgroups.n)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "location group '%s': creating location group %u is not defined", nm, creator);
    if (rank >= 0) {
        if (w->world != EARL_UNDEFINED_REF)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "location group '%s' with rank %d: MPI_COMM_WORLD is already defined; "
                         "define every MPI process before it", nm, (int)rank);
        if ((uint32_t)rank < w->rank_group.n && w->rank_group.v[rank] >= 0)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "location group '%s': rank %d is already the rank of location group %d",
                         nm, (int)rank, (int)w->rank_group.v[rank]);
        uint32_t old = w->rank_group.n;
        if (wr_vec_grow((void **)&w->rank_group.v, &w->rank_group.cap, (uint32_t)rank + 1,
                     sizeof *w->rank_group.v))
            return wr_nomem(w, err);
        for (uint32_t i = old; i <= (uint32_t)rank; i++)
            w->rank_group.v[i] = -1;
        if ((uint32_t)rank + 1 > w->rank_group.n)
            w->rank_group.n = (uint32_t)rank + 1;
    }
    wlgroup g = { 0, system_node, creator, type, rank < 0 ? -1 : rank, 0, -1 };
    earl_status st = wr_intern(w, name, "", &g.name, err);
    if (st)
        return st;
    wlgroup *slot = VEC_PUSH(w->lgroups);
    if (!slot)
        return wr_nomem(w, err);
    *slot = g;
    *ref = w->lgroups.n - 1;
    if (rank >= 0)
        w->rank_group.v[rank] = (int32_t)*ref;
    return EARL_OK;
}

earl_status earl_writer_process(earl_writer *w, const char *name, uint32_t system_node,
                                int32_t rank, uint32_t *ref, earl_error *err)
{
    return earl_writer_location_group(w, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, system_node,
                                      EARL_UNDEFINED_REF, rank, ref, err);
}

int64_t wr_id_find(const earl_writer *w, uint64_t id)
{
    const int64_t *index = earl_map_find(&w->location_index, id, 0);
    return index ? *index : -1;
}

earl_status earl_writer_location(earl_writer *w, uint32_t group, const char *name, uint8_t type,
                                 uint64_t id, earl_loc *loc, earl_error *err)
{
    const char *nm = name ? name : "";
    if (group >= w->lgroups.n)
        return wr_fail(w, err, EARL_ERR_INVALID, "location '%s': location group %u is not defined",
                     nm, group);
    if (w->locs.n >= (uint32_t)INT32_MAX)
        return wr_fail(w, err, EARL_ERR_INVALID, "too many locations");
    wlgroup *g = &w->lgroups.v[group];
    if (id == EARL_WRITER_AUTO_ID)
        id = ((uint64_t)g->n_locs << 32) |
             (g->rank >= 0 ? (uint64_t)(uint32_t)g->rank : ((uint64_t)1 << 31) | group);
    int64_t other = wr_id_find(w, id);
    if (other >= 0)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "location '%s': id %llu is already the id of location %lld", nm,
                     (unsigned long long)id, (long long)other);
    wloc l = { .id = id, .group = group, .type = type };
    earl_status st = wr_intern(w, name, "", &l.name, err);
    if (st)
        return st;
    l.evt = OTF2_Archive_GetEvtWriter(w->archive, id);
    if (!l.evt) {
        w->broken = 1;
        return wr_fail(w, err, EARL_ERR_IO, "libotf2 could not create the event writer of location %llu",
                     (unsigned long long)id);
    }
    if (!earl_map_slot(&w->location_index, id, 0, (int64_t)w->locs.n, NULL))
        return wr_nomem(w, err);
    wloc *slot = VEC_PUSH(w->locs);
    if (!slot) {
        earl_map_take(&w->location_index, id, 0, NULL);
        return wr_nomem(w, err);
    }
    *slot = l;
    *loc = (earl_loc)(w->locs.n - 1);
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD && g->master < 0)
        g->master = *loc;
    g->n_locs++;
    return EARL_OK;
}

earl_status earl_writer_region(earl_writer *w, const earl_writer_region_def *def, uint32_t *ref,
                               earl_error *err)
{
    if (!def || !def->name)
        return wr_fail(w, err, EARL_ERR_INVALID, "a region needs a name");
    wregion r = { .role = def->role, .paradigm = def->paradigm, .flags = def->flags,
                  .begin = def->begin_line, .end = def->end_line };
    earl_status st;
    if ((st = wr_intern(w, def->name, "", &r.name, err)) ||
        (st = wr_intern(w, def->canonical_name, def->name, &r.canonical, err)) ||
        (st = wr_intern(w, def->description, "", &r.description, err)) ||
        (st = wr_intern(w, def->source_file, "", &r.file, err)))
        return st;
    wregion *slot = VEC_PUSH(w->regions);
    if (!slot)
        return wr_nomem(w, err);
    *slot = r;
    *ref = w->regions.n - 1;
    return EARL_OK;
}

/* Add a group, or find an identical one (as Score-P shares them). */
static earl_status add_group(earl_writer *w, uint32_t name, uint8_t type, uint8_t paradigm,
                             uint32_t flags, uint32_t n, const uint64_t *members, int share,
                             uint32_t *ref, earl_error *err)
{
    if (share) {
        for (uint32_t g = 0; g < w->groups.n; g++) {
            const wgroup *o = &w->groups.v[g];
            if (o->type == type && o->paradigm == paradigm && o->flags == flags && o->n == n &&
                o->name == name && (n == 0 || memcmp(o->members, members, n * sizeof *members) == 0)) {
                *ref = g;
                return EARL_OK;
            }
        }
    }
    wgroup g = { name, type, paradigm, flags, n, NULL };
    if (n) {
        g.members = malloc(n * sizeof *members);
        if (!g.members)
            return wr_nomem(w, err);
        memcpy(g.members, members, n * sizeof *members);
    }
    wgroup *slot = VEC_PUSH(w->groups);
    if (!slot) {
        free(g.members);
        return wr_nomem(w, err);
    }
    *slot = g;
    *ref = w->groups.n - 1;
    return EARL_OK;
}

/* The MPI COMM_LOCATIONS group's ref, taken before the first group of ranks so
 * that it comes before them in the file (its members are known at close). */
static earl_status reserve_mpi_locations(earl_writer *w, earl_error *err)
{
    if (w->mpi_locations != EARL_UNDEFINED_REF)
        return EARL_OK;
    uint32_t empty;
    earl_status st = wr_intern(w, NULL, "", &empty, err);
    if (st)
        return st;
    wgroup *slot = VEC_PUSH(w->groups);
    if (!slot)
        return wr_nomem(w, err);
    *slot = (wgroup){ empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                      0, NULL };
    w->mpi_locations = w->groups.n - 1;
    return EARL_OK;
}

earl_status earl_writer_group(earl_writer *w, const char *name, uint8_t type, uint8_t paradigm,
                              uint32_t flags, uint32_t n_members, const uint64_t *members,
                              uint32_t *ref, earl_error *err)
{
    if (n_members && !members)
        return wr_fail(w, err, EARL_ERR_INVALID, "group '%s': no member list", name ? name : "");
    earl_status st = EARL_OK;
    if (type == OTF2_GROUP_TYPE_COMM_GROUP && paradigm == OTF2_PARADIGM_MPI)
        st = reserve_mpi_locations(w, err);  /* its members are ranks */
    uint32_t nm;
    if (!st)
        st = wr_intern(w, name, "", &nm, err);
    if (st)
        return st;
    return add_group(w, nm, type, paradigm, flags, n_members, members, 0, ref, err);
}

static earl_status add_comm(earl_writer *w, const wcomm *c, uint32_t *ref, earl_error *err)
{
    wcomm *slot = VEC_PUSH(w->comms);
    if (!slot)
        return wr_nomem(w, err);
    *slot = *c;
    *ref = w->comms.n - 1;
    return EARL_OK;
}

static earl_status check_parent(earl_writer *w, const char *what, const char *name, uint32_t parent,
                                earl_error *err)
{
    if (parent != EARL_UNDEFINED_REF && parent >= w->comms.n)
        return wr_fail(w, err, EARL_ERR_INVALID, "%s '%s': parent communicator %u is not defined",
                     what, name ? name : "", parent);
    return EARL_OK;
}

earl_status earl_writer_comm_world(earl_writer *w, const char *name, uint32_t *ref, earl_error *err)
{
    if (w->world != EARL_UNDEFINED_REF)
        return wr_fail(w, err, EARL_ERR_INVALID, "MPI_COMM_WORLD is already defined (communicator %u)",
                     w->world);
    uint32_t size = w->rank_group.n;
    if (size == 0)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "MPI_COMM_WORLD: no MPI process (location group with a rank) is defined");
    for (uint32_t r = 0; r < size; r++)
        if (w->rank_group.v[r] < 0)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "MPI_COMM_WORLD: rank %u has no process while rank %u does", r, size - 1);
    uint64_t *members = malloc(size * sizeof *members);
    if (!members)
        return wr_nomem(w, err);
    for (uint32_t r = 0; r < size; r++)
        members[r] = r;
    wcomm c = { .kind = COMM_MPI, .paradigm = OTF2_PARADIGM_MPI, .parent = EARL_UNDEFINED_REF,
                .size = size };
    uint32_t gname;
    earl_status st = reserve_mpi_locations(w, err);
    if (!st)
        st = wr_intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       size, members, 1, &c.group, err);
    free(members);
    if (!st)
        st = wr_intern(w, name, "MPI_COMM_WORLD", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    if (!st)
        w->world = *ref;
    return st;
}

earl_status earl_writer_comm(earl_writer *w, const char *name, uint32_t parent, uint32_t n,
                             const uint32_t *world_ranks, uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    earl_status st = check_parent(w, "communicator", name, parent, err);
    if (st)
        return st;
    if (n == 0 || !world_ranks)
        return wr_fail(w, err, EARL_ERR_INVALID, "communicator '%s': no members", nm);
    uint64_t *members = malloc(n * sizeof *members);
    if (!members)
        return wr_nomem(w, err);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = world_ranks[i];
        if (r >= w->rank_group.n || w->rank_group.v[r] < 0) {
            free(members);
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "communicator '%s': member %u is world rank %u, which no process has",
                         nm, i, r);
        }
        for (uint32_t j = 0; j < i; j++)
            if (members[j] == r) {
                free(members);
                return wr_fail(w, err, EARL_ERR_INVALID,
                             "communicator '%s': world rank %u is listed twice", nm, r);
            }
        members[i] = r;
    }
    wcomm c = { .kind = COMM_MPI, .paradigm = OTF2_PARADIGM_MPI, .parent = parent, .size = n };
    uint32_t gname;
    st = reserve_mpi_locations(w, err);
    if (!st)
        st = wr_intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       n, members, 1, &c.group, err);
    free(members);
    if (!st)
        st = wr_intern(w, name, "", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    return st;
}

earl_status earl_writer_comm_self(earl_writer *w, const char *name, uint32_t *ref, earl_error *err)
{
    wcomm c = { .kind = COMM_SELF, .paradigm = OTF2_PARADIGM_MPI, .parent = EARL_UNDEFINED_REF,
                .size = 1 };
    uint32_t gname;
    earl_status st = wr_intern(w, NULL, "", &gname, err);
    if (!st)
        st = add_group(w, gname, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                       0, NULL, 1, &c.group, err);
    if (!st)
        st = wr_intern(w, name, "MPI_COMM_SELF", &c.name, err);
    if (!st)
        st = add_comm(w, &c, ref, err);
    return st;
}

earl_status earl_writer_thread_team(earl_writer *w, const char *name, uint8_t paradigm,
                                    uint32_t parent, uint32_t n, const earl_loc *threads,
                                    uint32_t *ref, earl_error *err)
{
    const char *nm = name ? name : "";
    earl_status st = check_parent(w, "thread team", name, parent, err);
    if (st)
        return st;
    if (n == 0 || !threads)
        return wr_fail(w, err, EARL_ERR_INVALID, "thread team '%s': no threads", nm);
    for (uint32_t i = 0; i < n; i++) {
        if (threads[i] < 0 || (uint32_t)threads[i] >= w->locs.n)
            return wr_fail(w, err, EARL_ERR_INVALID,
                         "thread team '%s': thread %u is location %d, which is not defined", nm, i,
                         (int)threads[i]);
        for (uint32_t j = 0; j < i; j++)
            if (threads[j] == threads[i])
                return wr_fail(w, err, EARL_ERR_INVALID,
                             "thread team '%s': location %d is listed twice", nm, (int)threads[i]);
    }
    wcomm c = { .kind = COMM_TEAM, .paradigm = paradigm, .group = EARL_UNDEFINED_REF,
                .parent = parent, .size = n };
    if ((st = wr_intern(w, name, "", &c.name, err)))
        return st;
    c.threads = malloc(n * sizeof *threads);
    if (!c.threads)
        return wr_nomem(w, err);
    memcpy(c.threads, threads, n * sizeof *threads);
    st = add_comm(w, &c, ref, err);
    if (st)
        free(c.threads);
    return st;
}

earl_status earl_writer_rma_win(earl_writer *w, const char *name, uint32_t comm, uint32_t *ref,
                                earl_error *err)
{
    if (comm >= w->comms.n)
        return wr_fail(w, err, EARL_ERR_INVALID, "RMA window '%s': communicator %u is not defined",
                     name ? name : "", comm);
    wwin win = { 0, comm };
    earl_status st = wr_intern(w, name, "", &win.name, err);
    if (st)
        return st;
    wwin *slot = VEC_PUSH(w->wins);
    if (!slot)
        return wr_nomem(w, err);
    *slot = win;
    *ref = w->wins.n - 1;
    return EARL_OK;
}

earl_status earl_writer_attribute(earl_writer *w, const char *name, const char *description,
                                  uint8_t type, uint32_t *ref, earl_error *err)
{
    if (!name || !*name)
        return wr_fail(w, err, EARL_ERR_INVALID, "an attribute needs a name");
    switch (type) {
    case OTF2_TYPE_INT32: case OTF2_TYPE_UINT32: case OTF2_TYPE_INT64: case OTF2_TYPE_UINT64:
        break;
    default:
        return wr_fail(w, err, EARL_ERR_INVALID,
                       "attribute '%s': type %u is not INT32, UINT32, INT64 or UINT64", name,
                       (unsigned)type);
    }
    wattr a = { .type = type };
    earl_status st = wr_intern(w, name, "", &a.name, err);
    if (!st)
        st = wr_intern(w, description, "", &a.description, err);
    if (st)
        return st;
    wattr *slot = VEC_PUSH(w->attrs);
    if (!slot)
        return wr_nomem(w, err);
    *slot = a;
    *ref = w->attrs.n - 1;
    return EARL_OK;
}

earl_status earl_writer_clock_offset(earl_writer *w, earl_loc loc, uint64_t time, int64_t offset,
                                     double stddev, earl_error *err)
{
    if (loc < 0 || (uint32_t)loc >= w->locs.n)
        return wr_fail(w, err, EARL_ERR_INVALID, "clock offset: location %d is not defined", (int)loc);
    for (uint32_t i = w->clocks.n; i > 0; i--)
        if (w->clocks.v[i - 1].loc == loc) {
            if (w->clocks.v[i - 1].time >= time)
                return wr_fail(w, err, EARL_ERR_INVALID,
                               "clock offset of location %d at time %llu: not after its previous "
                               "one at %llu", (int)loc, (unsigned long long)time,
                               (unsigned long long)w->clocks.v[i - 1].time);
            break;
        }
    wclock *slot = VEC_PUSH(w->clocks);
    if (!slot)
        return wr_nomem(w, err);
    *slot = (wclock){ loc, time, offset, stddev };
    return EARL_OK;
}

earl_status earl_writer_location_property(earl_writer *w, earl_loc loc, const char *name,
                                          const char *value, earl_error *err)
{
    if (loc < 0 || (uint32_t)loc >= w->locs.n)
        return wr_fail(w, err, EARL_ERR_INVALID, "location property '%s': location %d is not defined",
                       name ? name : "", (int)loc);
    if (!name || !*name)
        return wr_fail(w, err, EARL_ERR_INVALID, "a location property needs a name");
    wlprop p = { .loc = loc };
    earl_status st = wr_intern(w, name, "", &p.name, err);
    if (!st)
        st = wr_intern(w, value, "", &p.value, err);
    if (st)
        return st;
    wlprop *slot = VEC_PUSH(w->lprops);
    if (!slot)
        return wr_nomem(w, err);
    *slot = p;
    return EARL_OK;
}

earl_status earl_writer_metric_member(earl_writer *w, const earl_writer_metric_member_def *def,
                                      uint32_t *ref, earl_error *err)
{
    if (!def || !def->name)
        return wr_fail(w, err, EARL_ERR_INVALID, "a metric member needs a name");
    if (def->value_type != OTF2_TYPE_INT64 && def->value_type != OTF2_TYPE_UINT64 &&
        def->value_type != OTF2_TYPE_DOUBLE)
        return wr_fail(w, err, EARL_ERR_INVALID,
                     "metric member '%s': value type %u is not INT64, UINT64 or DOUBLE", def->name,
                     def->value_type);
    wmember m = { .metric_type = def->metric_type, .mode = def->mode,
                  .value_type = def->value_type, .base = def->base, .exponent = def->exponent };
    earl_status st;
    if ((st = wr_intern(w, def->name, "", &m.name, err)) ||
        (st = wr_intern(w, def->description, "", &m.description, err)) ||
        (st = wr_intern(w, def->unit, "#", &m.unit, err)))
        return st;
    wmember *slot = VEC_PUSH(w->members);
    if (!slot)
        return wr_nomem(w, err);
    *slot = m;
    *ref = w->members.n - 1;
    return EARL_OK;
}

earl_status earl_writer_metric_class(earl_writer *w, uint32_t n, const uint32_t *members,
                                     uint8_t occurrence, uint8_t recorder_kind, uint32_t *ref,
                                     earl_error *err)
{
    if (n == 0 || n > 255 || !members)
        return wr_fail(w, err, EARL_ERR_INVALID, "a metric class needs 1 to 255 members (got %u)", n);
    wclass c = { n, malloc(n * sizeof *members), occurrence, recorder_kind,
                 malloc(n * sizeof(OTF2_Type)) };
    if (!c.members || !c.types) {
        free(c.members);
        free(c.types);
        return wr_nomem(w, err);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (members[i] >= w->members.n) {
            free(c.members);
            free(c.types);
            return wr_fail(w, err, EARL_ERR_INVALID, "metric class: member %u (%u) is not defined", i,
                         members[i]);
        }
        c.members[i] = members[i];
        c.types[i] = w->members.v[members[i]].value_type;
    }
    wclass *slot = VEC_PUSH(w->classes);
    if (!slot) {
        free(c.members);
        free(c.types);
        return wr_nomem(w, err);
    }
    *slot = c;
    *ref = w->classes.n - 1;
    return EARL_OK;
}

