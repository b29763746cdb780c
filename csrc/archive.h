/*
 * archive.h - an OTF2 archive as files on disk: where its anchor, global
 * definitions and event files are, whether they are there, and how much of a
 * damaged event file can still be read, and the libotf2 reader that opens
 * it.  Internal: trace.c finds and checks the archive with it before libotf2
 * reads anything, defs.c and reader.c name the files in their messages, the
 * reading and the markers open their readers through it.  Not part of the
 * public API.
 *
 * An archive is an anchor file DIR/NAME.otf2 (Score-P names it traces.otf2,
 * APEX APEX.otf2), its global definitions DIR/NAME.def, and a folder DIR/NAME
 * holding one ID.evt (events) and optionally one ID.def (local definitions)
 * per location.  Nothing here depends on the rest of the trace model.
 */
#ifndef EARL_ARCHIVE_H
#define EARL_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "earl.h"

/* The anchor file of path: path itself when it is a file ending in .otf2;
 * for a folder, its traces.otf2, or else the one *.otf2 file it holds (a
 * folder holding several and no traces.otf2 is refused with their names).
 * *anchor is a malloc'd path. */
earl_status earl_archive_find_anchor(const char *path, char **anchor, earl_error *err);

/* Refuse an anchor file that is damaged in a way libotf2 would not survive:
 * a property count larger than the bytes left could hold (libotf2 trusts it
 * and reads past the end of the file for hours).  Anything else is left to
 * libotf2, which names it. */
earl_status earl_archive_check_anchor(const char *anchor, earl_error *err);

/* A libotf2 reader of the archive whose anchor file is anchor, with the
 * serial collective callbacks every reader of earlc's needs (the reading of
 * one process, and the marker writer a reader makes).  A missing anchor is
 * EARL_ERR_NOT_FOUND, one libotf2 refuses EARL_ERR_NOT_ARCHIVE with its
 * reason.  *out is closed with OTF2_Reader_Close. */
struct OTF2_Reader_struct;
earl_status earl_archive_open_reader(const char *anchor, struct OTF2_Reader_struct **out,
                                     earl_error *err);

/* Paths of the archive's files, derived from its anchor DIR/NAME.otf2: the
 * global definitions DIR/NAME.def and a location's events DIR/NAME/ID.evt
 * (truncated to size, always terminated). */
void earl_archive_def_file(const char *anchor, char *buf, size_t size);
void earl_archive_event_file(const char *anchor, uint64_t location_id, char *buf, size_t size);

/* Check that the event folder and the event file of every location that
 * announces events exist; fill bytes[i] with the size of location i's file
 * (0 for one that announces none and has none).  An empty file is refused,
 * unless allow_empty (a file cut short to nothing, kept as such when
 * salvaging). */
earl_status earl_archive_check_event_files(const char *anchor, const earl_location *locations,
                                           size_t n, int allow_empty, uint64_t *bytes,
                                           earl_error *err);

/* What an event file holds, from its framing alone (chunks, record types and
 * lengths; no record is decoded): the records that lie whole in the file
 * before the first damage, and what the damage cost. */
typedef enum earl_event_file_state {
    EARL_EVENT_FILE_INTACT,    /* its records end where its writer ended the file */
    EARL_EVENT_FILE_CUT_SHORT, /* a record or chunk runs past the end of the file */
    EARL_EVENT_FILE_BROKEN     /* bytes inside the file that no writer makes */
} earl_event_file_state;

typedef struct earl_event_file_scan {
    earl_event_file_state state;
    uint64_t complete;   /* event records before the damage (all, when intact) */
    uint64_t good_bytes; /* bytes up to the end of the last of them */
    uint64_t file_bytes;
    /* records its last readable chunk header says the file held up to that
     * chunk's end (libotf2 writes it when the chunk is full or closed), 0
     * when unknown */
    uint64_t chunk_last_record;
} earl_event_file_scan;

/* Scan the event file at path, written in chunks of chunk_size bytes. */
earl_status earl_archive_scan_event_file(const char *path, uint64_t chunk_size,
                                         earl_event_file_scan *scan, earl_error *err);

#endif
