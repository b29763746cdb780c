/*
 * ext.h - shared declarations of the earlc._core glue.
 *
 * The glue converts between Python objects and the C core (csrc/) and
 * delegates; it holds no analysis logic.  Each glue file owns one Python
 * type and registers it on the module through an earlc_add_*_type function
 * that module.c calls at import.
 */
#ifndef EARLC_EXT_H
#define EARLC_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "earl.h"

/* earlc.Error, the base of earlc's exceptions; earlc.TraceError, raised for
 * every earl_status other than EARL_OK and EARL_ERR_NOMEM; and
 * earlc.OutOfMemoryError (also a MemoryError), raised for EARL_ERR_NOMEM. */
extern PyObject *earlc_Error;
extern PyObject *earlc_TraceError;
extern PyObject *earlc_OutOfMemoryError;

/* Raise earlc.TraceError (earlc.OutOfMemoryError for EARL_ERR_NOMEM) from a
 * filled earl_error; returns NULL. */
PyObject *earlc_raise(const earl_error *err);

/* A read-only buffer of length items over data, kept alive with owner. */
PyObject *earlc_column_new(PyObject *owner, const void *data, size_t length,
                           size_t itemsize, const char *format);
/* A writable buffer that owns block (an earl_mem block, freed with the last
 * view; NULL for none): a result handed over to numpy without a copy.  On
 * failure the block is freed. */
PyObject *earlc_column_of_block(void *block, size_t length, size_t itemsize,
                                const char *format);
/* An owner for columns over a C result: a capsule that frees it with
 * free_result when the last column over it goes (column.c).  NULL, with the
 * result freed, on failure. */
PyObject *earlc_owner_new(void *result, void (*free_result)(void *result));
/* The same for a C result returned by value (a struct filled through an
 * out-parameter, whose own free function frees what it points to but not
 * the struct): *owner takes the struct over (size bytes, moved into the
 * owner; *result is emptied, also on failure) and frees it with free_fields
 * when the last column over it goes.  Returns the owner's copy, for the
 * columns to view; NULL, with the result freed and an exception set, on
 * failure. */
void *earlc_owner_take(void *result, size_t size, void (*free_fields)(void *result),
                       PyObject **owner);

/* Progress of long C work reported to a Python callable(phase, done, total)
 * from any thread (the GIL is taken for the call).  A callback that raises is
 * not called again and does not stop the work.  Ctrl-C arrives as a
 * KeyboardInterrupt raised in the callback (SIGTERM, in a command that cleans
 * up, as its subclass): it is kept, and earlc_progress_interrupted raises it
 * once the work returns, instead of losing it. */
typedef struct earlc_progress_bridge {
    PyObject *callback;
    int failed;
    PyObject *pending; /* the interrupt raised in the callback, or NULL */
} earlc_progress_bridge;
void earlc_call_progress(void *bridge, const char *phase, uint64_t done, uint64_t total);
/* After the work: 1 with the kept interrupt raised (return NULL then), else 0. */
int earlc_progress_interrupted(earlc_progress_bridge *bridge);

/* The definitions as the dict of plain tuples that python/earlc wraps. */
PyObject *earlc_definitions(const earl_defs *defs, const char *path);

/* A _core.Trace owning tr (closed on failure). */
PyObject *earlc_trace_new(earl_trace *tr);

/* The C trace behind a _core.Trace, or NULL with TypeError set. */
earl_trace *earlc_trace_of(PyObject *obj);

/* The EARL layer behind a _core.States and the _core.Trace it belongs to,
 * or NULL with TypeError set. */
struct earl_states *earlc_states_of(PyObject *obj, PyObject **trace_obj);

/* Arrays passed to a kernel, held until the call returns (buffers.c). */
#define EARLC_MAX_BUFFERS 24
typedef struct earlc_buffers {
    Py_buffer view[EARLC_MAX_BUFFERS];
    int n;
} earlc_buffers;
void earlc_buffers_release(earlc_buffers *held);
/* obj as a C-contiguous array of the struct-module format `format` ('q'
 * int64, 'Q' uint64, 'i' int32, 'I' uint32, 'B' uint8, 'd' float64),
 * writable if asked; *count gets its number of items, or must equal it when
 * it is not (size_t)-1.  NULL with ValueError naming the argument otherwise. */
void *earlc_buffer_array(earlc_buffers *held, PyObject *obj, char format, int writable,
                         size_t *count, const char *name);

/* What a replay step in parts hands over for the other parts (an
 * earl_outbox), as (offsets, records) bytes for the exchange; frees out, also
 * on failure (part.c). */
struct earl_outbox;
PyObject *earlc_outbox_tuple(struct earl_outbox *out);

/* The steps that drive a replay in parts (earlc.parts.replay), the same for
 * _core.PartClocks (hb_part.c, earl_hb_part_*) and _core.PartRaces
 * (races_part.c, earl_races_part_*): each type lists its handle's functions
 * in an earlc_part_ops and starts its object with an earlc_part_object, and
 * part_steps.c wraps them once (the GIL released around the replay's work).
 * The methods take the handle as void *: each type's ops are one-line
 * adapters to its typed functions. */
typedef struct earlc_part_ops {
    const char *finished; /* the error once finish() took the handle */
    earl_status (*export_crossing)(void *part, size_t *n, earl_error *err);
    earl_status (*run)(void *part, earl_error *err);
    earl_status (*take)(void *part, size_t n_parts, struct earl_outbox *out, earl_error *err);
    earl_status (*receive)(void *part, const void *records, size_t bytes, earl_error *err);
    size_t (*unfinished)(const void *part);
    earl_eid (*waiting)(void *part);
    earl_status (*force)(void *part, earl_eid e, earl_error *err);
} earlc_part_ops;
typedef struct earlc_part_object {
    PyObject_HEAD
    void *part;                 /* the handle; NULL once finished */
    const earlc_part_ops *ops;
} earlc_part_object;
/* The handle of a part object, or NULL with ValueError (ops->finished). */
void *earlc_part_handle(PyObject *self);
PyObject *earlc_part_export_crossing(PyObject *self, PyObject *unused);
PyObject *earlc_part_run(PyObject *self, PyObject *unused);
PyObject *earlc_part_take(PyObject *self, PyObject *n_parts);
PyObject *earlc_part_receive(PyObject *self, PyObject *records);
PyObject *earlc_part_unfinished(PyObject *self, PyObject *unused);
PyObject *earlc_part_waiting(PyObject *self, PyObject *unused);
PyObject *earlc_part_force(PyObject *self, PyObject *event);
/* Their entries in a type's method table. */
#define EARLC_PART_STEP_METHODS                                                               \
    {"run", earlc_part_run, METH_NOARGS, "replay until every own location waits or is done"}, \
    {"take", earlc_part_take, METH_O, "take(n_parts) -> (offsets, records)"},                 \
    {"receive", earlc_part_receive, METH_O, "receive(records)"},                              \
    {"unfinished", earlc_part_unfinished, METH_NOARGS, "own locations not done"},             \
    {"waiting", earlc_part_waiting, METH_NOARGS, "the earliest waiting own event, -1"},       \
    {"force", earlc_part_force, METH_O, "force(event): break a cycle there"}

/* A _core.VectorClocks owning hb, keeping owner (may be NULL) alive (hb.c). */
struct earl_hb;
PyObject *earlc_clocks_new(struct earl_hb *hb, PyObject *owner);

/* The search's glue shared with the search of a trace in parts (search.c):
 * the program of a _core.SearchProgram (NULL with TypeError), the dict of a
 * result (which takes the result over: numpy views its matches without a
 * copy), and an execution of a prepared query that Ctrl-C stops (the
 * options' interrupt is set there); NULL with an exception on failure. */
struct earl_search_program;
struct earl_search_query;
struct earl_search_result;
struct earl_search_options;
struct earl_search_program *earlc_program_of(PyObject *obj);
PyObject *earlc_search_result_dict(const struct earl_search_query *q,
                                   struct earl_search_result *r, double prepare_seconds);
PyObject *earlc_search_execute(struct earl_search_query *q,
                               const struct earl_search_options *options);

/* A _core.Races owning races, keeping trace and states alive (races.c); an
 * optional buffer of int32 per message-table row (-1 with an exception, 0
 * for None, 1 held in buf). */
struct earl_races;
PyObject *earlc_races_new(struct earl_races *races, PyObject *trace_obj, PyObject *states_obj);
int earlc_races_rows(PyObject *obj, Py_buffer *buf, size_t rows, const char *what);

int earlc_add_trace_type(PyObject *module);   /* trace.c */
int earlc_add_hb_type(PyObject *module);      /* hb.c */
int earlc_add_logical_type(PyObject *module); /* logical.c */
int earlc_add_states_type(PyObject *module);  /* states.c */
int earlc_add_column_type(PyObject *module);  /* column.c */
int earlc_add_writer_type(PyObject *module);  /* writer.c */
int earlc_add_calltree_type(PyObject *module); /* calltree.c */
int earlc_add_races_type(PyObject *module);   /* races.c */

int earlc_add_synth(PyObject *module);       /* synth.c */
int earlc_add_search(PyObject *module);      /* search.c */
int earlc_add_catalog(PyObject *module);     /* catalog.c */
int earlc_add_profile(PyObject *module);      /* profile.c */
int earlc_add_overview(PyObject *module);     /* overview.c */
int earlc_add_numpy_memory(PyObject *module); /* numpy_memory.c */
int earlc_add_rootcause(PyObject *module);    /* rootcause.c */
int earlc_add_markers(PyObject *module);      /* markers.c */
int earlc_add_reading_type(PyObject *module); /* part.c */
int earlc_add_part_clocks_type(PyObject *module); /* hb_part.c */
int earlc_add_search_query_type(PyObject *module); /* search_parts.c */
int earlc_add_part_races_type(PyObject *module); /* races_part.c */
#endif
