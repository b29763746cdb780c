/*
 * tables.c - the side tables that hold event payloads (messages,
 * collectives, threading records, program records, metrics, RMA), each a
 * struct of arrays.  Listing every table's columns once lets the reader grow
 * them and the ordering pass concatenate them with one generic mechanism.
 */
#include <stdlib.h>

#include "internal.h"

#define COL(s, field) ((s)->col[(s)->n++] = (earl_colspec){(void **)&(field), sizeof(*(field))})

void msg_table_columns(earl_msg_table *t, int with_requested, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->peer); COL(s, t->peer_rank); COL(s, t->comm);
    COL(s, t->tag); COL(s, t->bytes); COL(s, t->request); COL(s, t->partner);
    if (with_requested) {
        COL(s, t->requested_source); COL(s, t->requested_tag);
    }
}

void coll_table_columns(earl_coll_table *t, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->op); COL(s, t->comm); COL(s, t->root_rank);
    COL(s, t->root); COL(s, t->sent); COL(s, t->received);
}

void sync_table_columns(earl_sync_table *t, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->model); COL(s, t->comm); COL(s, t->id); COL(s, t->count_);
}

void program_table_columns(earl_program_table *t, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->name); COL(s, t->exit_status);
}

void metric_table_columns(earl_metric_table *t, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->metric); COL(s, t->first); COL(s, t->n);
}

void rma_table_columns(earl_rma_table *t, earl_colset *s)
{
    s->n = 0;
    COL(s, t->event); COL(s, t->win); COL(s, t->remote); COL(s, t->bytes); COL(s, t->matching);
}

void side_tables_columns(side_tables *t, earl_family family, earl_colset *s)
{
    s->n = 0;
    switch (family) {
    case EARL_FAMILY_MSG: msg_table_columns(&t->msg, t->msg_requested, s); break;
    case EARL_FAMILY_COLL: coll_table_columns(&t->coll, s); break;
    case EARL_FAMILY_SYNC: sync_table_columns(&t->sync, s); break;
    case EARL_FAMILY_PROGRAM: program_table_columns(&t->program, s); break;
    case EARL_FAMILY_METRIC: metric_table_columns(&t->metric, s); break;
    case EARL_FAMILY_RMA: rma_table_columns(&t->rma, s); break;
    case EARL_FAMILY_NONE: break;
    }
}

void side_tables_row_columns(side_tables *t, earl_family family, earl_colset *s)
{
    side_tables_columns(t, family, s);
    if (s->n == 0)
        return;
    /* every table lists its event column first */
    for (int c = 1; c < s->n; c++)
        s->col[c - 1] = s->col[c];
    s->n--;
}

size_t *side_tables_count(side_tables *t, earl_family family)
{
    switch (family) {
    case EARL_FAMILY_MSG: return &t->msg.count;
    case EARL_FAMILY_COLL: return &t->coll.count;
    case EARL_FAMILY_SYNC: return &t->sync.count;
    case EARL_FAMILY_PROGRAM: return &t->program.count;
    case EARL_FAMILY_METRIC: return &t->metric.count;
    case EARL_FAMILY_RMA: return &t->rma.count;
    case EARL_FAMILY_NONE: break;
    }
    return NULL;
}

static void side_tables_free_with(side_tables *t, void (*free_set)(const earl_colset *))
{
    for (int f = EARL_FAMILY_MSG; f < N_FAMILIES; f++) {
        earl_colset s;
        side_tables_columns(t, (earl_family)f, &s);
        free_set(&s);
        *side_tables_count(t, (earl_family)f) = 0;
        t->cap[f] = 0;
    }
    free(t->metric.values);
    free(t->metric.value_types);
    t->metric.values = NULL;
    t->metric.value_types = NULL;
    t->metric.n_values = 0;
    t->cap_values = 0;
}

void side_tables_free(side_tables *t) { side_tables_free_with(t, earl_colset_free); }
void side_tables_free_unkept(side_tables *t) { side_tables_free_with(t, earl_colset_free_unkept); }
