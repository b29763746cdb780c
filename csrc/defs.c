/*
 * defs.c - the global definitions of an archive: strings, regions, system
 * tree, location groups, locations, groups, communicators, metrics and clock.
 *
 * Definitions are read through libotf2's global definition reader into
 * arrays indexed by OTF2 reference.  Afterwards defs_finish derives what the
 * event reader needs: the dense location order, each process's MPI rank and,
 * for every communicator, the location of each of its ranks (through the
 * communicator's group and the COMM_LOCATIONS group of its paradigm).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Make slot ref of a ref-indexed array exist, zero-filling new slots. */
#define ENSURE_SLOT(st, arr, n, cap, ref)                                        \
    do {                                                                         \
        if ((size_t)(ref) >= (st)->n) {                                          \
            if (EARL_GROW((st)->arr, (st)->cap, (size_t)(ref) + 1) != 0) {       \
                (st)->failed = 1;                                                \
                return OTF2_CALLBACK_INTERRUPT;                                  \
            }                                                                    \
            memset(&(st)->arr[(st)->n], 0,                                       \
                   ((size_t)(ref) + 1 - (st)->n) * sizeof(*(st)->arr));           \
            (st)->n = (size_t)(ref) + 1;                                         \
        }                                                                        \
    } while (0)

/* A heap copy of n items (NULL for none); marks the store failed when out of
 * memory. */
static void *copy_items(defs_store *st, const void *items, size_t n, size_t size)
{
    if (!n)
        return NULL;
    void *copy = malloc(n * size);
    if (copy)
        memcpy(copy, items, n * size);
    else
        st->failed = 1;
    return copy;
}

static OTF2_CallbackCode on_clock(void *ud, uint64_t resolution, uint64_t offset,
                                  uint64_t length, uint64_t realtime)
{
    defs_store *st = ud;
    st->n_defs_read++;
    st->view.clock = (earl_clock){resolution, offset, length, realtime};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_string(void *ud, OTF2_StringRef self, const char *text)
{
    defs_store *st = ud;
    st->n_defs_read++;
    if (self == OTF2_UNDEFINED_STRING)
        return OTF2_CALLBACK_SUCCESS;
    ENSURE_SLOT(st, strings, n_strings, cap_strings, self);
    free(st->strings[self]);
    st->strings[self] = earl_strdup(text);
    if (!st->strings[self]) {
        st->failed = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_paradigm(void *ud, OTF2_Paradigm paradigm, OTF2_StringRef name,
                                     OTF2_ParadigmClass cls)
{
    (void)cls;
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, paradigm_names, n_paradigms, cap_paradigms, paradigm);
    st->paradigm_names[paradigm] = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_system_node(void *ud, OTF2_SystemTreeNodeRef self,
                                        OTF2_StringRef name, OTF2_StringRef cls,
                                        OTF2_SystemTreeNodeRef parent)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, nodes, n_nodes, cap_nodes, self);
    st->nodes[self] = (earl_system_node){1, name, cls, parent};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location_group(void *ud, OTF2_LocationGroupRef self,
                                           OTF2_StringRef name, OTF2_LocationGroupType type,
                                           OTF2_SystemTreeNodeRef parent,
                                           OTF2_LocationGroupRef creator)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, lgroups, n_lgroups, cap_lgroups, self);
    st->lgroups[self] = (earl_location_group){1, type, name, parent, creator, -1};
    if (EARL_GROW(st->lgroup_order, st->cap_lgroup_order, st->n_lgroup_order + 1) != 0) {
        st->failed = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    st->lgroup_order[st->n_lgroup_order++] = self;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t n_events,
                                     OTF2_LocationGroupRef group)
{
    defs_store *st = ud;
    st->n_defs_read++;
    if (EARL_GROW(st->locations, st->cap_locations, st->n_locations + 1) != 0) {
        st->failed = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    st->locations[st->n_locations++] = (earl_location){
        .id = self, .name = name, .type = type, .group = group,
        .declared_events = n_events, .thread = -1};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region(void *ud, OTF2_RegionRef self, OTF2_StringRef name,
                                   OTF2_StringRef canonical, OTF2_StringRef description,
                                   OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file,
                                   uint32_t begin_line, uint32_t end_line)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, regions, n_regions, cap_regions, self);
    st->regions[self] = (earl_region){
        .defined = 1, .role = role, .paradigm = paradigm, .flags = flags,
        .name = name, .canonical_name = canonical, .description = description,
        .source_file = file, .begin_line = begin_line, .end_line = end_line};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *ud, OTF2_GroupRef self, OTF2_StringRef name,
                                  OTF2_GroupType type, OTF2_Paradigm paradigm,
                                  OTF2_GroupFlag flags, uint32_t n, const uint64_t *members)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, groups, n_groups, cap_groups, self);
    uint64_t *copy = copy_items(st, members, n, sizeof *members);
    if (st->failed)
        return OTF2_CALLBACK_INTERRUPT;
    free((void *)st->groups[self].members);
    st->groups[self] = (earl_group){1, type, paradigm, flags, name, n, copy};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name,
                                 OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, comms, n_comms, cap_comms, self);
    st->comms[self] = (earl_comm){.defined = 1, .name = name, .group = group,
                                  .parent = parent, .flags = flags};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_inter_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name,
                                       OTF2_GroupRef group_a, OTF2_GroupRef group_b,
                                       OTF2_CommRef common, OTF2_CommFlag flags)
{
    (void)group_b;
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, comms, n_comms, cap_comms, self);
    st->comms[self] = (earl_comm){.defined = 1, .is_inter = 1, .name = name,
                                  .group = group_a, .parent = common, .flags = flags};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_metric_member(void *ud, OTF2_MetricMemberRef self,
                                          OTF2_StringRef name, OTF2_StringRef description,
                                          OTF2_MetricType type, OTF2_MetricMode mode,
                                          OTF2_Type value_type, OTF2_Base base,
                                          int64_t exponent, OTF2_StringRef unit)
{
    defs_store *st = ud;
    st->n_defs_read++;
    ENSURE_SLOT(st, mmembers, n_mmembers, cap_mmembers, self);
    st->mmembers[self] = (earl_metric_member){1, value_type, type, mode, base, exponent,
                                              name, description, unit};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode store_metric_class(defs_store *st, OTF2_MetricRef self,
                                            uint8_t n, const uint32_t *members)
{
    ENSURE_SLOT(st, mclasses, n_mclasses, cap_mclasses, self);
    uint32_t *copy = copy_items(st, members, n, sizeof *members);
    if (st->failed)
        return OTF2_CALLBACK_INTERRUPT;
    free((void *)st->mclasses[self].members);
    st->mclasses[self] = (earl_metric_class){1, n, copy};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_metric_class(void *ud, OTF2_MetricRef self, uint8_t n,
                                         const OTF2_MetricMemberRef *members,
                                         OTF2_MetricOccurrence occurrence,
                                         OTF2_RecorderKind recorder)
{
    (void)occurrence; (void)recorder;
    defs_store *st = ud;
    st->n_defs_read++;
    return store_metric_class(st, self, n, members);
}

/* A metric instance shares its class's members; METRIC records may name
 * either, so both live in the same ref-indexed array. */
static OTF2_CallbackCode on_metric_instance(void *ud, OTF2_MetricRef self,
                                            OTF2_MetricRef cls, OTF2_LocationRef recorder,
                                            OTF2_MetricScope scope, uint64_t scope_ref)
{
    (void)recorder; (void)scope; (void)scope_ref;
    defs_store *st = ud;
    st->n_defs_read++;
    if (cls < st->n_mclasses && st->mclasses[cls].defined)
        return store_metric_class(st, self, st->mclasses[cls].n_members,
                                  st->mclasses[cls].members);
    return store_metric_class(st, self, 0, NULL);
}

/* Definitions we do not keep still count as read. */
static OTF2_CallbackCode on_other(void *ud)
{
    ((defs_store *)ud)->n_defs_read++;
    return OTF2_CALLBACK_SUCCESS;
}

/* Stands for every string the archive leaves undefined. */
static char empty_string[] = "";

/* The text of a string already read, or NULL. */
static const char *string_text(const defs_store *st, OTF2_StringRef ref)
{
    return ref < st->n_strings ? st->strings[ref] : NULL;
}

static int string_is(const defs_store *st, OTF2_StringRef ref, const char *text)
{
    const char *s = string_text(st, ref);
    return s && strcmp(s, text) == 0;
}

/* Attributes: only those `earlc record` writes are kept (their refs), the
 * reader then looks them up on the records that may carry them. */
static OTF2_CallbackCode on_attribute(void *ud, OTF2_AttributeRef self, OTF2_StringRef name,
                                      OTF2_StringRef description, OTF2_Type type)
{
    (void)description;
    defs_store *st = ud;
    st->n_defs_read++;
    if (type == OTF2_TYPE_INT32 && string_is(st, name, EARL_ATTR_REQUESTED_SOURCE))
        st->attr_requested_source = self + 1;
    else if (type == OTF2_TYPE_INT32 && string_is(st, name, EARL_ATTR_REQUESTED_TAG))
        st->attr_requested_tag = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

/* Location properties with a string value are kept, by location id, until
 * defs_finish has the dense location order; others are counted. */
static OTF2_CallbackCode on_location_property(void *ud, OTF2_LocationRef location,
                                              OTF2_StringRef name, OTF2_Type type,
                                              OTF2_AttributeValue value)
{
    defs_store *st = ud;
    if (type != OTF2_TYPE_STRING)
        return on_other(ud);
    st->n_defs_read++;
    if (EARL_GROW(st->props, st->cap_props, st->n_props + 1) != 0) {
        st->failed = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    st->props[st->n_props++] = (struct property_mark){ location, name, value.stringRef };
    return OTF2_CALLBACK_SUCCESS;
}

/* The generated callbacks ignore their definition's fields by design. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define COUNT_ONLY(name, ...)                                                  \
    static OTF2_CallbackCode count_##name(void *ud, __VA_ARGS__) { return on_other(ud); }

COUNT_ONLY(callpath, OTF2_CallpathRef a, OTF2_CallpathRef b, OTF2_RegionRef c)
COUNT_ONLY(parameter, OTF2_ParameterRef a, OTF2_StringRef b, OTF2_ParameterType c)
COUNT_ONLY(paradigm_property, OTF2_Paradigm a, OTF2_ParadigmProperty b, OTF2_Type c,
           OTF2_AttributeValue d)
COUNT_ONLY(node_domain, OTF2_SystemTreeNodeRef a, OTF2_SystemTreeDomain b)
COUNT_ONLY(node_property, OTF2_SystemTreeNodeRef a, OTF2_StringRef b, OTF2_Type c,
           OTF2_AttributeValue d)
COUNT_ONLY(lgroup_property, OTF2_LocationGroupRef a, OTF2_StringRef b, OTF2_Type c,
           OTF2_AttributeValue d)
COUNT_ONLY(rma_win, OTF2_RmaWinRef a, OTF2_StringRef b, OTF2_CommRef c, OTF2_RmaWinFlag d)
COUNT_ONLY(source_code_location, OTF2_SourceCodeLocationRef a, OTF2_StringRef b, uint32_t c)
COUNT_ONLY(calling_context, OTF2_CallingContextRef a, OTF2_RegionRef b,
           OTF2_SourceCodeLocationRef c, OTF2_CallingContextRef d)
COUNT_ONLY(interrupt_generator, OTF2_InterruptGeneratorRef a, OTF2_StringRef b,
           OTF2_InterruptGeneratorMode c, OTF2_Base d, int64_t e, uint64_t f)
COUNT_ONLY(cart_dimension, OTF2_CartDimensionRef a, OTF2_StringRef b, uint32_t c,
           OTF2_CartPeriodicity d)
COUNT_ONLY(cart_topology, OTF2_CartTopologyRef a, OTF2_StringRef b, OTF2_CommRef c,
           uint8_t d, const OTF2_CartDimensionRef *e)
COUNT_ONLY(cart_coordinate, OTF2_CartTopologyRef a, uint32_t b, uint8_t c, const uint32_t *d)
COUNT_ONLY(io_paradigm, OTF2_IoParadigmRef a, OTF2_StringRef b, OTF2_StringRef c,
           OTF2_IoParadigmClass d, OTF2_IoParadigmFlag e, uint8_t f,
           const OTF2_IoParadigmProperty *g, const OTF2_Type *h, const OTF2_AttributeValue *i)
COUNT_ONLY(io_file, OTF2_IoFileRef a, OTF2_StringRef b, OTF2_SystemTreeNodeRef c)
COUNT_ONLY(io_handle, OTF2_IoHandleRef a, OTF2_StringRef b, OTF2_IoFileRef c,
           OTF2_IoParadigmRef d, OTF2_IoHandleFlag e, OTF2_CommRef f, OTF2_IoHandleRef g)
COUNT_ONLY(io_pre_created, OTF2_IoHandleRef a, OTF2_IoAccessMode b, OTF2_IoStatusFlag c)
COUNT_ONLY(callpath_parameter, OTF2_CallpathRef a, OTF2_ParameterRef b, OTF2_Type c,
           OTF2_AttributeValue d)
COUNT_ONLY(calling_context_property, OTF2_CallingContextRef a, OTF2_StringRef b, OTF2_Type c,
           OTF2_AttributeValue d)
#pragma GCC diagnostic pop

static void register_callbacks(OTF2_GlobalDefReaderCallbacks *cb)
{
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(cb, on_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, on_system_node);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_location_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, on_inter_comm);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, on_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, on_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb, on_metric_instance);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, on_attribute);
    OTF2_GlobalDefReaderCallbacks_SetCallpathCallback(cb, count_callpath);
    OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, count_parameter);
    OTF2_GlobalDefReaderCallbacks_SetParadigmPropertyCallback(cb, count_paradigm_property);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeDomainCallback(cb, count_node_domain);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(cb, count_node_property);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cb, count_lgroup_property);
    OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cb, on_location_property);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, count_rma_win);
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(cb, count_source_code_location);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, count_calling_context);
    OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(cb, count_interrupt_generator);
    OTF2_GlobalDefReaderCallbacks_SetCartDimensionCallback(cb, count_cart_dimension);
    OTF2_GlobalDefReaderCallbacks_SetCartTopologyCallback(cb, count_cart_topology);
    OTF2_GlobalDefReaderCallbacks_SetCartCoordinateCallback(cb, count_cart_coordinate);
    OTF2_GlobalDefReaderCallbacks_SetIoParadigmCallback(cb, count_io_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(cb, count_io_file);
    OTF2_GlobalDefReaderCallbacks_SetIoDirectoryCallback(cb, count_io_file);
    OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(cb, count_io_handle);
    OTF2_GlobalDefReaderCallbacks_SetIoPreCreatedHandleStateCallback(cb, count_io_pre_created);
    OTF2_GlobalDefReaderCallbacks_SetCallpathParameterCallback(cb, count_callpath_parameter);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextPropertyCallback(cb,
                                                                    count_calling_context_property);
}

/* ---- derived definitions --------------------------------------------------- */

static const earl_group *group_at(const defs_store *st, uint32_t ref)
{
    return ref < st->n_groups && st->groups[ref].defined ? &st->groups[ref] : NULL;
}

/* The COMM_LOCATIONS group of a paradigm: the rank -> location table that
 * COMM_GROUP members index.  Some archives define several (otf2-print warns
 * about duplicates); the first non-empty one is taken. */
static const earl_group *comm_locations(const defs_store *st, uint8_t paradigm)
{
    const earl_group *first = NULL;
    for (size_t g = 0; g < st->n_groups; g++) {
        const earl_group *grp = &st->groups[g];
        if (!grp->defined || grp->type != OTF2_GROUP_TYPE_COMM_LOCATIONS ||
            grp->paradigm != paradigm)
            continue;
        if (grp->n_members)
            return grp;
        if (!first)
            first = grp;
    }
    return first;
}

earl_loc earl_defs_location_index(const earl_defs *defs, uint64_t id)
{
    /* defs is the view embedded first in defs_store */
    const defs_store *st = (const defs_store *)defs;
    size_t lo = earl_u64_lower_bound(st->loc_ids_sorted, 0, st->n_locations, id);
    return lo < st->n_locations && st->loc_ids_sorted[lo] == id ? st->loc_index_sorted[lo]
                                                                 : EARL_NONE;
}

const char *earl_defs_region_name(const earl_defs *defs, uint32_t region)
{
    if (region >= defs->n_regions || !defs->regions[region].defined)
        return "?";
    uint32_t name = defs->regions[region].name;
    return name < defs->strings.count ? defs->strings.text[name] : "?";
}

/* Sort key of the dense location order. */
typedef struct location_key {
    size_t group_position; /* of the location group in definition order */
    uint64_t id;
    size_t index;          /* in definition order */
} location_key;

static int by_group_then_id(const void *a, const void *b)
{
    const location_key *x = a, *y = b;
    if (x->group_position != y->group_position)
        return x->group_position < y->group_position ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static earl_status order_locations(defs_store *st, const char *anchor, earl_error *err)
{
    size_t n = st->n_locations;
    location_key *keys = malloc(n * sizeof *keys);
    size_t *group_position = calloc(st->n_lgroups + 1, sizeof *group_position);
    earl_location *sorted = malloc(n * sizeof *sorted);
    if (!keys || !group_position || !sorted) {
        free(keys); free(group_position); free(sorted);
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
    }
    for (size_t g = 0; g < st->n_lgroups; g++)
        group_position[g] = SIZE_MAX; /* groups never defined sort last */
    for (size_t i = 0; i < st->n_lgroup_order; i++)
        group_position[st->lgroup_order[i]] = i;
    for (size_t i = 0; i < n; i++) {
        uint32_t g = st->locations[i].group;
        keys[i] = (location_key){g < st->n_lgroups ? group_position[g] : SIZE_MAX,
                                 st->locations[i].id, i};
    }
    qsort(keys, n, sizeof *keys, by_group_then_id);
    for (size_t i = 0; i < n; i++)
        sorted[i] = st->locations[keys[i].index];
    memcpy(st->locations, sorted, n * sizeof *sorted);
    free(keys); free(group_position); free(sorted);
    return EARL_OK;
}

static int by_id(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static earl_status resolve_comms(defs_store *st, const char *anchor, earl_error *err)
{
    for (size_t c = 0; c < st->n_comms; c++) {
        earl_comm *comm = &st->comms[c];
        if (!comm->defined)
            continue;
        const earl_group *grp = group_at(st, comm->group);
        if (!grp)
            continue; /* size 0: every peer on it is reported unresolved */
        comm->paradigm = grp->paradigm;
        if (grp->type == OTF2_GROUP_TYPE_COMM_SELF) {
            comm->is_self = 1;
            comm->size = 1;
            continue;
        }
        earl_loc *members = malloc((grp->n_members ? grp->n_members : 1) * sizeof *members);
        if (!members)
            return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory resolving communicators",
                             anchor);
        const earl_group *table = grp->type == OTF2_GROUP_TYPE_COMM_GROUP
                                      ? comm_locations(st, grp->paradigm) : NULL;
        for (uint32_t r = 0; r < grp->n_members; r++) {
            uint64_t id = grp->members[r];
            if (grp->type == OTF2_GROUP_TYPE_COMM_GROUP)
                id = table && id < table->n_members ? table->members[id] : UINT64_MAX;
            members[r] = id == UINT64_MAX ? EARL_NONE : earl_defs_location_index(&st->view, id);
        }
        comm->size = grp->n_members;
        comm->member_locations = members;
    }
    return EARL_OK;
}

static earl_status defs_finish(defs_store *st, const char *anchor, earl_error *err)
{
    earl_status s = order_locations(st, anchor, err);
    if (s != EARL_OK)
        return s;

    size_t n = st->n_locations;
    st->loc_ids_sorted = malloc((n ? n : 1) * sizeof(uint64_t) * 2);
    st->loc_index_sorted = malloc((n ? n : 1) * sizeof(earl_loc));
    if (!st->loc_ids_sorted || !st->loc_index_sorted)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
    /* sort (id, index) pairs through a temporary interleaved array */
    uint64_t *pairs = st->loc_ids_sorted;
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = st->locations[i].id;
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, n, 2 * sizeof(uint64_t), by_id);
    for (size_t i = 0; i < n; i++) {
        st->loc_index_sorted[i] = (earl_loc)pairs[2 * i + 1];
        pairs[i] = pairs[2 * i];
    }
    for (size_t i = 1; i < n; i++)
        if (pairs[i] == pairs[i - 1])
            return earl_fail(err, EARL_ERR_CORRUPT,
                             "%s: location %llu is defined twice in the global definitions",
                             anchor, (unsigned long long)pairs[i]);

    /* thread index of each CPU thread within its process */
    for (size_t i = 0; i < n; i++) {
        earl_location *l = &st->locations[i];
        /* locations of a group are contiguous in the dense order */
        int32_t k = i > 0 && st->locations[i - 1].group == l->group
                        ? st->locations[i - 1].thread + (st->locations[i - 1].type ==
                                                         OTF2_LOCATION_TYPE_CPU_THREAD)
                        : 0;
        l->thread = k;
    }
    for (size_t i = 0; i < n; i++)
        if (st->locations[i].type != OTF2_LOCATION_TYPE_CPU_THREAD)
            st->locations[i].thread = -1;

    /* MPI rank of each process: position of its location in MPI's
     * COMM_LOCATIONS group */
    const earl_group *mpi = comm_locations(st, OTF2_PARADIGM_MPI);
    for (uint32_t r = 0; mpi && r < mpi->n_members; r++) {
        earl_loc l = earl_defs_location_index(&st->view, mpi->members[r]);
        if (l >= 0 && st->locations[l].group < st->n_lgroups)
            st->lgroups[st->locations[l].group].rank = (int32_t)r;
    }

    s = resolve_comms(st, anchor, err);
    if (s != EARL_OK)
        return s;

    for (size_t i = 0; i < n; i++)
        st->locations[i].incomplete_reason = EARL_UNDEFINED_REF;
    st->location_properties = malloc((st->n_props ? st->n_props : 1) *
                                     sizeof *st->location_properties);
    if (!st->location_properties)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
    size_t n_props = 0;
    for (size_t i = 0; i < st->n_props; i++) {
        earl_loc l = earl_defs_location_index(&st->view, st->props[i].id);
        if (l < 0)
            continue;
        st->location_properties[n_props++] = (earl_location_property){
            l, st->props[i].name, st->props[i].value};
        if (string_is(st, st->props[i].name, EARL_PROPERTY_INCOMPLETE)) {
            st->locations[l].incomplete = 1;
            st->locations[l].incomplete_reason = st->props[i].value;
        }
    }

    earl_defs *v = &st->view;
    v->strings.count = (uint32_t)st->n_strings;
    for (size_t i = 0; i < st->n_strings; i++)
        if (!st->strings[i])
            st->strings[i] = (char *)empty_string;
    v->strings.text = (const char **)st->strings;
    v->n_regions = (uint32_t)st->n_regions; v->regions = st->regions;
    v->n_system_nodes = (uint32_t)st->n_nodes; v->system_nodes = st->nodes;
    v->n_location_groups = (uint32_t)st->n_lgroups; v->location_groups = st->lgroups;
    v->n_locations = (uint32_t)st->n_locations; v->locations = st->locations;
    v->n_groups = (uint32_t)st->n_groups; v->groups = st->groups;
    v->n_comms = (uint32_t)st->n_comms; v->comms = st->comms;
    v->n_metric_members = (uint32_t)st->n_mmembers; v->metric_members = st->mmembers;
    v->n_metric_classes = (uint32_t)st->n_mclasses; v->metric_classes = st->mclasses;
    v->n_paradigms = (uint32_t)st->n_paradigms; v->paradigm_names = st->paradigm_names;
    v->n_location_properties = (uint32_t)n_props;
    v->location_properties = st->location_properties;
    v->n_defs_read = st->n_defs_read;
    v->creator = st->creator ? st->creator : empty_string;
    return EARL_OK;
}

earl_status defs_read(defs_store *st, OTF2_Reader *reader, const char *anchor, earl_error *err)
{
    char *creator = NULL;
    if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
        st->creator = earl_strdup(creator);
        free(creator);
    }
    OTF2_Reader_GetVersion(reader, &st->view.version[0], &st->view.version[1],
                           &st->view.version[2]);

    char file[4096];
    earl_archive_def_file(anchor, file, sizeof file);
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(reader);
    if (!gdr) {
        /* libotf2 says the same for a file that is absent and for one it
         * cannot decode: which it is decides the status */
        struct stat sb;
        int present = stat(file, &sb) == 0;
        if (present && access(file, R_OK) != 0)
            return earl_fail(err, EARL_ERR_IO, "%s: cannot be read (%s)", file, strerror(errno));
        return earl_fail(err, present ? EARL_ERR_CORRUPT : EARL_ERR_MISSING_FILE,
                         "%s: %s (%s)", file,
                         present ? "not a readable OTF2 definition file"
                                 : "cannot open the global definitions",
                         earl_otf2_last_message());
    }
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!cb)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", anchor);
    register_callbacks(cb);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, cb, st);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);

    uint64_t n_read = 0;
    earl_otf2_clear_message();
    OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n_read);
    if (st->failed)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory reading definitions", anchor);
    if (rc != OTF2_SUCCESS)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the global definitions are corrupt or truncated: %s", file,
                         earl_otf2_last_message()[0] ? earl_otf2_last_message()
                                                     : OTF2_Error_GetDescription(rc));
    if (st->n_locations == 0)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the global definitions define no location", file);
    /* Every time in seconds divides by the resolution.  Without one (the
     * OTF2 library's own test archives have no ClockProperties) the ticks are
     * taken as nanoseconds, the most common timer of tracers; trace.c takes
     * the trace's start and length from its events. */
    if (st->view.clock.resolution == 0) {
        st->clock_missing = 1;
        st->view.clock.resolution = EARL_FALLBACK_RESOLUTION;
    }
    return defs_finish(st, anchor, err);
}

void defs_free(defs_store *st)
{
    for (size_t i = 0; i < st->n_strings; i++)
        if (st->strings[i] != empty_string)
            free(st->strings[i]);
    free(st->strings);
    for (size_t i = 0; i < st->n_groups; i++)
        free((void *)st->groups[i].members);
    for (size_t i = 0; i < st->n_comms; i++)
        free((void *)st->comms[i].member_locations);
    for (size_t i = 0; i < st->n_mclasses; i++)
        free((void *)st->mclasses[i].members);
    free(st->regions); free(st->nodes); free(st->lgroups); free(st->locations);
    free(st->groups); free(st->comms); free(st->mmembers); free(st->mclasses);
    free(st->paradigm_names); free(st->lgroup_order);
    free(st->loc_ids_sorted); free(st->loc_index_sorted);
    free(st->props);
    free(st->location_properties);
    free(st->creator);
    memset(st, 0, sizeof *st);
}
