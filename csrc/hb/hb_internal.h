/*
 * hb_internal.h - what the files of the happened-before subsystem share:
 * the layout of the earl_hb handle (hb.c), the rules that say which events an
 * event depends on (hb_rules.c) and the replay that turns them into vector
 * timestamps (hb_replay.c).  Not part of the public API.
 */
#ifndef EARL_HB_INTERNAL_H
#define EARL_HB_INTERNAL_H

#include "earl_hb.h"
#include "hb_clock.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/mem.h"
#include "base/parts.h"
#include "base/sorted.h"

/* The stamps.  Stamped events are kept sorted by event id; stamp k holds
 * width entries at stamps + k * width. */
struct earl_hb {
    uint32_t width;
    size_t n;
    earl_eid *events;
    earl_loc *location;
    uint32_t *position;
    uint32_t *stamps;
    uint64_t warnings[EARL_HB_WARNING_CODE_COUNT];
    size_t bytes;
};

/* ---- rules (hb_rules.c) ----------------------------------------------------- */

/* How an event takes in the clocks of the events it depends on. */
typedef enum hb_merge {
    HB_MERGE_EACH = 0,  /* the saved clock of every dependency */
    HB_MERGE_INSTANCE   /* all members' begins of an all-to-all instance: their
                           maximum is computed once per instance and shared */
} hb_merge;

/* What saving an event's clock is for: how many later events take it, or
 * HB_REFS_HELD when the rules release it themselves (collective begins when
 * their instance is complete, forks at their join). */
#define HB_REFS_HELD UINT32_MAX

/* The rules of docs/patterns.md over one trace, with what they need
 * precomputed: the begin event of every collective member (the
 * MPI_COLLECTIVE_BEGIN before an MPI_COLLECTIVE_END, the ENTER of an OpenMP
 * barrier's LEAVE), the runs of events each thread spends in a team, and the
 * fork each join closes. */
typedef struct hb_rules {
    const earl_events *ev;
    const earl_defs *defs;
    earl_states *states;
    const earl_states_view *view;
    const earl_eid *forkptr;    /* NULL when the trace has no thread teams */
    earl_eid *member_begin;     /* per entry of view->coll_members */
    uint8_t *keep;              /* bit per event: a collective begin or the last
                                   event of a team run (its clock is saved) */
    uint8_t *member;            /* bit per event: a member of a collective instance */
    earl_eid *join_event;       /* joins sorted by event, with their forks */
    earl_eid *join_fork;
    size_t n_joins;
    earl_eid *run_fork;         /* team runs on non-master threads, sorted by */
    earl_eid *run_last;         /* fork: the last event of each run */
    size_t n_runs;
    int align_collectives;      /* every member's end depends on every member's
                                   begin, whatever the operation's shape (logical
                                   time puts a collective's members on one step) */
} hb_rules;

/* Storage for the dependencies hb_rules_deps returns, one per replaying
 * thread (the rules themselves are read-only once built). */
typedef struct hb_deps {
    earl_eid *ids;
    size_t cap;
} hb_deps;

earl_status hb_rules_init(hb_rules *r, const earl_trace *trace, earl_states *states,
                          earl_error *err);
/* Is location l replayed here: held whole (a ghost location of a part is not)? */
static inline int hb_rules_own(const hb_rules *r, earl_loc l)
{
    return r->defs->locations[l].held == EARL_HELD_ALL;
}
void hb_rules_free(hb_rules *r);

/* The events on other locations that e depends on directly (prev: the event
 * before e on its location, -1), in out->ids; *instance is the collective
 * instance of e or -1.  Returns the count, or SIZE_MAX when out of memory. */
size_t hb_rules_deps(const hb_rules *r, earl_eid e, earl_eid prev, hb_deps *out,
                     hb_merge *merge, int32_t *instance);

/* 0 when no later event needs e's clock, else the references to keep it for
 * (HB_REFS_HELD: until the rules release it).  Only events of replayed
 * locations take saved clocks: a send whose receive is another part's keeps
 * none (its clock goes there instead). */
uint32_t hb_rules_saves(const hb_rules *r, earl_eid e);

/* The fork a join closes, -1. */
earl_eid hb_rules_join_fork(const hb_rules *r, earl_eid join);

/* ---- the walk in dependency order (hb_walk.c) ------------------------------------ */

typedef struct hb_walk hb_walk;

/* One event handed to a visitor: the event e, its location l, its position
 * there and the event before it on l (-1), the events on other locations it
 * depends on (hb_rules_deps: deps, n, merge, instance), and whether it is
 * visited without some of them (forced: a cycle broken there; the visitor
 * takes in only the dependencies hb_walk_done says were visited). */
typedef struct hb_step {
    earl_eid e;
    earl_loc l;
    size_t pos;
    earl_eid prev;
    const earl_eid *deps;
    size_t n;
    hb_merge merge;
    int32_t instance;
    int forced;
} hb_step;

/* What a replay does with one event: 0, or -1 when out of memory (the walk
 * stops). */
typedef int (*hb_visit_fn)(void *data, hb_walk *walk, const hb_step *step);

/* A walk over the events in dependency order.  The caller sets the fields
 * above the line, then either calls hb_walk_run (the whole walk at once) or
 * drives it in steps (hb_walk_init, hb_walk_resume, ..., hb_walk_free): a
 * replay in parts stops where its own locations wait for events of other
 * parts and goes on when they arrive.  The rest is the walk's own state. */
struct hb_walk {
    const earl_events *ev;
    const hb_rules *rules;
    size_t nl;                 /* locations */
    const int32_t *row;        /* per location: >= 0 when the walk visits it (a
                                  part's own locations); NULL: every location */
    hb_visit_fn visit;
    void *data;
    earl_progress_fn progress; /* NULL: none */
    void *progress_data;
    const char *phase;
    /* ---- */
    size_t *cursor;            /* per location: positions visited so far */
    uint8_t *done;             /* bit per event: visited (or arrived) */
    hb_waiters waiters;        /* locations waiting for an event not visited yet */
    earl_loc *work;            /* locations to advance */
    size_t n_work;
    hb_deps deps;
    uint64_t visited;
    uint64_t forced;           /* visits forced to break a cycle */
    int started;               /* the pass in total order is done */
    int nomem;
};

/* Visit every event once, each after its dependencies, cycles broken at the
 * earliest waiting event (see hb_walk.c): hb_walk_init, hb_walk_complete,
 * hb_walk_free.  0, or -1 when out of memory. */
int hb_walk_run(hb_walk *walk);

/* The steps.  init: the walk's state (0, or -1 when out of memory); free:
 * releases it. */
int hb_walk_init(hb_walk *walk);
void hb_walk_free(hb_walk *walk);
/* The first call visits in the total order, later calls catch up the
 * locations that stopped waiting since (hb_walk_arrived, hb_walk_force);
 * each returns when every visited location is done or waits.  0, or -1. */
int hb_walk_resume(hb_walk *walk);
/* Resume, and break every cycle left at its earliest waiting event, until
 * no location waits.  0, or -1. */
int hb_walk_complete(hb_walk *walk);
/* The waiting location whose next event comes first in the total order
 * (*next: that event), -1 when none waits. */
earl_loc hb_walk_earliest(hb_walk *walk, earl_eid *next);
/* The next event of location l when l waits, -1 otherwise. */
earl_eid hb_walk_waiting_next(hb_walk *walk, earl_loc l);
/* Break a cycle: visit the next event of waiting location l (forced). */
void hb_walk_force(hb_walk *walk, earl_loc l);
/* Event e, of a location the walk does not visit, is done elsewhere (a
 * ghost whose owner replayed it): the locations waiting for it go on at the
 * next resume.  0, or -1 when out of memory. */
int hb_walk_arrived(hb_walk *walk, earl_eid e);
/* Visited locations not done. */
size_t hb_walk_unfinished(const hb_walk *walk);

/* Whether event e was visited already (or arrived). */
static inline int hb_walk_done(const hb_walk *walk, earl_eid e)
{
    return HB_BIT_GET(walk->done, e);
}

/* ---- replay (hb_replay.c) ----------------------------------------------------- */

/* What a replay replays and what it hands to other parts: the whole trace
 * (every location has a row), or a part's own locations (ghost locations
 * have none: their events are never replayed, their clocks arrive from
 * their owners), with the events whose clocks other parts wait for. */
typedef struct hb_scope {
    int32_t *row;               /* per location: its running clock's row, -1 */
    uint32_t n_rows;
    uint32_t *instance_members; /* per collective instance: members on replayed
                                   locations (their ends release its begins) */
    uint8_t *exported;          /* bit per event: its clock goes to other parts;
                                   NULL: to none */
} hb_scope;

earl_status hb_scope_init(hb_scope *s, const earl_trace *trace, const hb_rules *rules,
                          earl_error *err);
void hb_scope_free(hb_scope *s);

/* One replay computing the clock entries [first, first + width) of the
 * stamps: resumable, so that a part can stop where its own locations wait
 * for clocks of other parts and go on when they arrive (hb_part.c). */
typedef struct hb_columns hb_columns;

/* NULL when out of memory.  The leader (one per set of column replays)
 * writes the stamps' places, the warnings and the progress. */
hb_columns *hb_columns_new(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                           const hb_scope *scope, uint32_t first, uint32_t width, int leader,
                           const earl_hb_options *options);
void hb_columns_free(hb_columns *c);
/* The first call replays in the total order, later calls catch up the
 * locations that stopped waiting since (hb_columns_receive,
 * hb_columns_force); each returns when every location is done or waits.
 * 0, or -1 when out of memory. */
int hb_columns_run(hb_columns *c);
/* The waiting location whose next event comes first in the total order
 * (*next: that event), -1 when none waits. */
earl_loc hb_columns_earliest(hb_columns *c, earl_eid *next);
/* The next event of location l when l waits, -1 otherwise. */
earl_eid hb_columns_waiting_next(hb_columns *c, earl_loc l);
/* Break a cycle: replay the next event of waiting location l with the
 * clocks of those of its dependencies that are replayed (or received). */
void hb_columns_force(hb_columns *c, earl_loc l);
/* The clock of ghost event e (its entries [first, first + width)), sent by
 * its owner: saved for the events that take it, and the locations waiting
 * for it go on at the next run.  0, or -1 when out of memory. */
int hb_columns_receive(hb_columns *c, earl_eid e, const uint32_t *entries);
/* The clocks of exported events replayed since the last clear, in replay
 * order: n x width entries, and (leader only) their events. */
size_t hb_columns_sent(const hb_columns *c, const uint32_t **entries, const earl_eid **events);
void hb_columns_clear_sent(hb_columns *c);
/* Replayed locations not done. */
size_t hb_columns_unfinished(const hb_columns *c);

/* Replay the whole trace in dependency order and fill hb's stamps (hb->events,
 * n and width set, stamps allocated).  With several threads each replays
 * the same schedule for its own range of clock entries (locations), so the
 * stamps do not depend on the thread count. */
earl_status hb_replay(earl_hb *hb, const earl_trace *trace, hb_rules *rules,
                      const earl_hb_options *options, earl_error *err);
/* Threads for a replay of width entries (options->threads, 0: automatic). */
uint32_t hb_replay_threads(const earl_hb_options *options, uint32_t width);

/* ---- the handle (hb.c) ------------------------------------------------------------ */

/* A handle for n stamps of width entries over events stamped[] (sorted),
 * its stamps not yet computed.  NULL with err when they cannot fit. */
earl_hb *hb_alloc(const earl_trace *trace, const earl_eid *stamped, size_t n, earl_error *err);

#endif /* EARL_HB_INTERNAL_H */
