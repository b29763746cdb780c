/*
 * synth_expect.c - the generator's expected-value bookkeeping: call paths,
 * region stacks with exclusive time per (call path, location), the
 * (severity, instances) accumulators of every property and their JSON form
 * in expected.json.  Memory: a few KiB per call path actually used.
 */
#include "synth_expect.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *const sx_prop_names[SX_PROP_COUNT] = {
    "time",
    "visits",
    "late_sender",
    "late_sender_wrong_order_same_source",
    "late_sender_wrong_order_different_source",
    "late_receiver",
    "messages_in_wrong_order",
    "wait_at_barrier",
    "barrier_completion",
    "wait_at_nxn",
    "nxn_completion",
    "late_broadcast",
    "early_reduce",
    "early_scan",
    "omp_barrier_wait_explicit",
    "omp_barrier_wait_implicit",
    "lock_contention",
    "lock_contention_critical",
    "lock_contention_api",
};

int sx_init(sx_book *b, uint32_t n_locs)
{
    memset(b, 0, sizeof(*b));
    b->n_locs = n_locs;
    b->n_paths = 1;
    b->path_parent[0] = UINT32_MAX;
    b->child = calloc((size_t)SX_MAX_PATHS * SX_MAX_REGIONS, sizeof(uint16_t));
    b->stacks = calloc(n_locs ? n_locs : 1, sizeof(sx_stack));
    b->cells = calloc((size_t)SX_MAX_PATHS * SX_PROP_COUNT, sizeof(sx_cell *));
    return b->child && b->stacks && b->cells ? 0 : -1;
}

void sx_free(sx_book *b)
{
    if (b->cells)
        for (size_t i = 0; i < (size_t)b->n_paths * SX_PROP_COUNT; i++)
            free(b->cells[i]);
    free(b->cells);
    free(b->child);
    free(b->stacks);
    memset(b, 0, sizeof(*b));
}

uint32_t sx_child(sx_book *b, uint32_t parent, uint32_t region)
{
    uint16_t *slot = &b->child[(size_t)parent * SX_MAX_REGIONS + region];
    if (*slot)
        return *slot;
    if (b->n_paths >= SX_MAX_PATHS)
        return UINT32_MAX;
    uint32_t id = b->n_paths++;
    b->path_parent[id] = parent;
    b->path_region[id] = (uint16_t)region;
    *slot = (uint16_t)id;
    return id;
}

int sx_add(sx_book *b, sx_prop p, uint32_t path, uint32_t loc, int64_t severity)
{
    sx_cell **row = &b->cells[(size_t)path * SX_PROP_COUNT + (size_t)p];
    if (!*row && !(*row = calloc(b->n_locs ? b->n_locs : 1, sizeof(sx_cell))))
        return -1;
    sx_cell *c = *row + loc;
    c->severity += severity;
    c->instances++;
    return 0;
}

uint32_t sx_push(sx_book *b, uint32_t loc, uint32_t region, uint64_t t)
{
    sx_stack *s = &b->stacks[loc];
    if (s->depth >= SX_MAX_DEPTH)
        return UINT32_MAX;
    uint32_t path = sx_child(b, sx_top(b, loc), region);
    if (path == UINT32_MAX || sx_add(b, SX_VISITS, path, loc, 1) < 0)
        return UINT32_MAX;
    s->path[s->depth] = path;
    s->enter[s->depth] = t;
    s->child[s->depth] = 0;
    s->depth++;
    return path;
}

uint32_t sx_pop(sx_book *b, uint32_t loc, uint64_t t)
{
    sx_stack *s = &b->stacks[loc];
    if (!s->depth)
        return UINT32_MAX;
    s->depth--;
    uint32_t path = s->path[s->depth];
    uint64_t incl = t - s->enter[s->depth];
    if (sx_add(b, SX_TIME, path, loc, (int64_t)(incl - s->child[s->depth])) < 0)
        return UINT32_MAX;
    b->cells[(size_t)path * SX_PROP_COUNT + SX_TIME][loc].instances--; /* time: no instances */
    if (s->depth)
        s->child[s->depth - 1] += incl;
    return path;
}

void sx_path_string(const sx_book *b, uint32_t path, char *buf, size_t size)
{
    uint32_t chain[SX_MAX_PATHS];
    uint32_t n = 0;
    for (uint32_t p = path; p && p != UINT32_MAX && n < SX_MAX_PATHS; p = b->path_parent[p])
        chain[n++] = p;
    size_t len = 0;
    buf[0] = 0;
    while (n--) {
        int k = snprintf(buf + len, size - len, "%s%s", len ? "/" : "",
                         b->region_names[b->path_region[chain[n]]]);
        if (k < 0 || (size_t)k >= size - len)
            break;
        len += (size_t)k;
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

void sx_write_properties(const sx_book *b, FILE *f, uint32_t tpr)
{
    char path[4096];
    int64_t *by_loc = calloc(b->n_locs ? b->n_locs : 1, sizeof(int64_t));
    fprintf(f, "{");
    for (int p = 0; p < SX_PROP_COUNT; p++) {
        int64_t total = 0;
        uint64_t inst = 0;
        if (by_loc)
            memset(by_loc, 0, sizeof(int64_t) * b->n_locs);
        for (uint32_t c = 1; c < b->n_paths; c++) {
            const sx_cell *cells = sx_cells(b, c, p);
            if (!cells)
                continue;
            for (uint32_t l = 0; l < b->n_locs; l++) {
                const sx_cell *x = &cells[l];
                total += x->severity;
                inst += x->instances;
                if (by_loc)
                    by_loc[l] += x->severity;
            }
        }
        fprintf(f, "%s\n    ", p ? "," : "");
        json_string(f, sx_prop_names[p]);
        fprintf(f, ": {\n      \"total\": %" PRId64 ", \"instances\": %" PRIu64
                   ",\n      \"by_location\": [",
                total, inst);
        for (uint32_t l = 0; l < b->n_locs; l++)
            fprintf(f, "%s%" PRId64, l ? ", " : "", by_loc ? by_loc[l] : 0);
        fprintf(f, "],\n      \"by_callpath\": {");
        int first = 1;
        for (uint32_t c = 1; c < b->n_paths; c++) {
            const sx_cell *cells = sx_cells(b, c, p);
            if (!cells)
                continue;
            int64_t sum = 0;
            uint64_t n = 0;
            for (uint32_t l = 0; l < b->n_locs; l++) {
                sum += cells[l].severity;
                n += cells[l].instances;
            }
            if (!sum && !n)
                continue;
            sx_path_string(b, c, path, sizeof(path));
            fprintf(f, "%s\n        ", first ? "" : ",");
            json_string(f, path);
            fprintf(f, ": %" PRId64, sum);
            first = 0;
        }
        fprintf(f, "%s},\n      \"entries\": [", first ? "" : "\n      ");
        first = 1;
        for (uint32_t c = 1; c < b->n_paths; c++) {
            const sx_cell *cells = sx_cells(b, c, p);
            if (!cells)
                continue;
            sx_path_string(b, c, path, sizeof(path));
            for (uint32_t l = 0; l < b->n_locs; l++) {
                const sx_cell *x = &cells[l];
                if (!x->severity && !x->instances)
                    continue;
                fprintf(f, "%s\n        {\"callpath\": ", first ? "" : ",");
                json_string(f, path);
                fprintf(f,
                        ", \"location\": %u, \"rank\": %u, \"thread\": %u, \"severity\": %" PRId64
                        ", \"instances\": %" PRIu64 "}",
                        l, l / tpr, l % tpr, x->severity, x->instances);
                first = 0;
            }
        }
        fprintf(f, "%s]\n    }", first ? "" : "\n      ");
    }
    fprintf(f, "\n  }");
    free(by_loc);
}
