/*
 * archive.c - an OTF2 archive as files on disk (see archive.h): finding the
 * anchor file, the paths of the definition and event files, the checks that
 * can name a missing or damaged file before libotf2 reads it, and the scan
 * that tells how much of a damaged event file is whole.
 *
 * The scan reads the framing libotf2 writes, and nothing else: an event file
 * is a sequence of chunks of the archive's event chunk size (the last one
 * shorter); a chunk starts with an 18-byte header (type 3, the byte order,
 * the numbers of its first and last record, both 1-based and counted over the
 * whole file) and holds records up to an END_OF_CHUNK byte (0), or, in the
 * last chunk, an END_OF_FILE byte (2).  A record is its type byte and its
 * data: a TIMESTAMP (5) eight bytes, an attribute list (6) and every event a
 * length (one byte, or 0xff and eight bytes) and that many bytes; the ten
 * events that OTF2 1.1 defined with a single field (ENTER, LEAVE, ...) carry
 * that field alone, as a compressed integer (a byte count 1-8, or 0 or 0xff
 * for a value without bytes).  These are the rules libotf2's own skipping
 * follows, so a record the scan counts is a record libotf2 reads.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "archive.h"
#include "base/errors.h"
#include "base/otf2_errors.h"
#include "base/grow.h"
#include "base/text.h"

/* ---- the anchor ----------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_file(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISREG(s.st_mode);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) {
        /* "dir/" and "dir" give the same path */
        size_t d = strlen(dir);
        snprintf(p, n, "%.*s/%s", (int)(d > 1 && dir[d - 1] == '/' ? d - 1 : d), dir, name);
    }
    return p;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The anchor of a folder: traces.otf2 (Score-P's name) when there, else the
 * only *.otf2 file.  Several without traces.otf2 are refused by name: which
 * archive was meant cannot be guessed. */
static earl_status anchor_in_folder(const char *dir, char **anchor, earl_error *err)
{
    char *a = join(dir, "traces.otf2");
    if (!a)
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", dir);
    if (is_file(a)) {
        *anchor = a;
        return EARL_OK;
    }
    free(a);
    DIR *d = opendir(dir);
    if (!d)
        return earl_fail(err, EARL_ERR_IO, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    earl_status st = EARL_OK;
    for (struct dirent *e; st == EARL_OK && (e = readdir(d)) != NULL;) {
        if (!ends_with(e->d_name, ".otf2") || strlen(e->d_name) == strlen(".otf2"))
            continue;
        char *p = join(dir, e->d_name);
        if (p && !is_file(p)) {
            free(p);
            continue;
        }
        if (!p || EARL_GROW(names, cap, n + 1) != 0) {
            free(p);
            st = earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", dir);
            break;
        }
        names[n++] = p;
    }
    closedir(d);
    if (st == EARL_OK && n == 0)
        st = earl_fail(err, EARL_ERR_NOT_ARCHIVE,
                       "%s: not an OTF2 archive (the folder holds no anchor file *.otf2)", dir);
    if (st == EARL_OK && n > 1) {
        qsort(names, n, sizeof *names, by_name);
        char list[600] = "";
        size_t used = 0;
        for (size_t i = 0; i < n && used < sizeof list - 1; i++) {
            const char *base = strrchr(names[i], '/') + 1;
            int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", base);
            used += w > 0 ? (size_t)w : 0;
        }
        st = earl_fail(err, EARL_ERR_NOT_ARCHIVE,
                       "%s: the folder holds %zu anchor files (%s): give the one to open", dir,
                       n, list);
    }
    if (st == EARL_OK) {
        *anchor = names[0];
        names[0] = NULL;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

earl_status earl_archive_find_anchor(const char *path, char **anchor, earl_error *err)
{
    struct stat s;
    if (!path || !*path)
        return earl_fail(err, EARL_ERR_INVALID, "no trace path given");
    if (stat(path, &s) != 0)
        return earl_fail(err, errno == ENOENT ? EARL_ERR_NOT_FOUND : EARL_ERR_IO,
                         "%s: %s", path, strerror(errno));
    if (S_ISDIR(s.st_mode))
        return anchor_in_folder(path, anchor, err);
    if (!ends_with(path, ".otf2"))
        return earl_fail(err, EARL_ERR_NOT_ARCHIVE,
                         "%s: not an OTF2 archive (expected an anchor file ending in .otf2 or "
                         "the folder that holds one)", path);
    *anchor = earl_strdup(path);
    return *anchor ? EARL_OK : earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path);
}

/* The anchor's layout up to its property count, as libotf2 reads it: chunk
 * header and endianness bytes, "OTF2\0", the anchor format, 38 bytes of fixed
 * fields (trace format, version, chunk sizes, substrate, compression, counts),
 * machine, creator and description as NUL-terminated strings, then (format 2
 * and later) a 32-bit property count.  Each property is a pair of strings,
 * two bytes at least, so a count above half the bytes left is corrupt. */
earl_status earl_archive_check_anchor(const char *anchor, earl_error *err)
{
    FILE *f = fopen(anchor, "rb");
    if (!f)
        return EARL_OK; /* libotf2 reports what is wrong with it */
    unsigned char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 8 + 38 || memcmp(buf + 2, "OTF2", 5) != 0 || buf[7] < 2)
        return EARL_OK;
    /* the byte order: the one under which the event chunk size is sensible */
    uint64_t le = 0;
    for (int i = 0; i < 8; i++)
        le |= (uint64_t)buf[12 + i] << (8 * i);
    int little = le > 0 && le <= ((uint64_t)1 << 40);
    size_t pos = 8 + 38;
    for (int s = 0; s < 3; s++) {
        unsigned char *end = memchr(buf + pos, 0, n - pos);
        if (!end)
            return earl_fail(err, EARL_ERR_CORRUPT,
                             "%s: the anchor file is corrupt or truncated (its strings end "
                             "nowhere)", anchor);
        pos = (size_t)(end - buf) + 1;
    }
    if (n - pos < 4)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the anchor file is truncated (no property count)", anchor);
    uint32_t count = 0;
    for (int i = 0; i < 4; i++)
        count = little ? count | (uint32_t)buf[pos + i] << (8 * i)
                       : (count << 8) | buf[pos + i];
    size_t left = n - pos - 4;
    if (count > left / 2)
        return earl_fail(err, EARL_ERR_CORRUPT,
                         "%s: the anchor file is corrupt: it announces %u properties in %zu "
                         "bytes", anchor, count, left);
    return EARL_OK;
}

/* ---- the archive's files ----------------------------------------------------------- */

/* The anchor's path without ".otf2": DIR/NAME, the stem of every other file. */
static int stem_length(const char *anchor)
{
    size_t n = strlen(anchor);
    return (int)(ends_with(anchor, ".otf2") ? n - strlen(".otf2") : n);
}

void earl_archive_def_file(const char *anchor, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s.def", stem_length(anchor), anchor);
}

void earl_archive_event_file(const char *anchor, uint64_t location_id, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s/%llu.evt", stem_length(anchor), anchor,
             (unsigned long long)location_id);
}

/* An archive may have been written by the SION substrate, or its global
 * definitions may be missing: libotf2 answers those with an error; here we
 * only check what can be named precisely, the POSIX event files. */
earl_status earl_archive_check_event_files(const char *anchor, const earl_location *locations,
                                           size_t n, int allow_empty, uint64_t *bytes,
                                           earl_error *err)
{
    char folder[4096];
    snprintf(folder, sizeof folder, "%.*s", stem_length(anchor), anchor);
    struct stat s;
    if (stat(folder, &s) != 0 || !S_ISDIR(s.st_mode))
        return earl_fail(err, EARL_ERR_MISSING_FILE,
                         "%s: the event folder %s/ of the archive is missing", anchor, folder);
    for (size_t i = 0; i < n; i++) {
        const earl_location *l = &locations[i];
        if (l->held != EARL_HELD_ALL)
            continue; /* not read here (a part of the trace reads its own) */
        char file[4096];
        earl_archive_event_file(anchor, l->id, file, sizeof file);
        int there = stat(file, &s) == 0;
        bytes[i] = there ? (uint64_t)s.st_size : 0;
        if (l->declared_events == 0)
            continue;
        if (!there)
            return earl_fail(err, EARL_ERR_MISSING_FILE,
                             "%s: the event file %s of location %llu is missing (%llu events "
                             "announced)", anchor, file, (unsigned long long)l->id,
                             (unsigned long long)l->declared_events);
        if (s.st_size == 0 && !allow_empty)
            return earl_fail(err, EARL_ERR_CORRUPT,
                             "%s: the event file %s of location %llu is empty (%llu events "
                             "announced)", anchor, file, (unsigned long long)l->id,
                             (unsigned long long)l->declared_events);
    }
    return EARL_OK;
}

/* ---- the framing of an event file --------------------------------------------------- */

enum {
    END_OF_CHUNK = 0,
    END_OF_FILE = 2,
    CHUNK_HEADER = 3,
    TIMESTAMP = 5,
    ATTRIBUTE_LIST = 6,
    FIRST_EVENT = 10,
    CHUNK_HEADER_BYTES = 18
};

/* The events of OTF2 1.1 written without a length: their one field is the
 * whole record.  The list is closed: later events all carry a length. */
static int is_single_field(uint8_t type)
{
    switch (type) {
    case 12: case 13:           /* ENTER, LEAVE */
    case 16: case 17:           /* MPI_ISEND_COMPLETE, MPI_IRECV_REQUEST */
    case 20: case 21:           /* MPI_REQUEST_TEST, MPI_REQUEST_CANCELLED */
    case 24:                    /* OMP_FORK */
    case 28: case 29: case 30:  /* OMP_TASK_CREATE, _SWITCH, _COMPLETE */
        return 1;
    default:
        return 0;
    }
}

static uint64_t read_u64(const unsigned char *p, int little)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = little ? v | (uint64_t)p[i] << (8 * i) : (v << 8) | p[i];
    return v;
}

/* What follows the type byte at p[0], or 0 when it is not whole in the n
 * bytes; *bad when it cannot be a record at all. */
static uint64_t record_bytes(const unsigned char *p, size_t n, int little, int *bad)
{
    uint8_t type = p[0];
    if (type == TIMESTAMP)
        return n >= 9 ? 9 : 0;
    if (type != ATTRIBUTE_LIST && type < FIRST_EVENT) {
        *bad = 1;
        return 0;
    }
    if (n < 2)
        return 0;
    if (is_single_field(type)) {
        uint8_t k = p[1];
        if (k > 8 && k != 0xff) {
            *bad = 1;
            return 0;
        }
        uint64_t size = 2 + (k == 0xff ? 0 : k);
        return size <= n ? size : 0;
    }
    uint64_t length = p[1], head = 2;
    if (length == 0xff) {
        if (n < 10)
            return 0;
        length = read_u64(p + 2, little);
        head = 10;
    }
    /* a length beyond the chunk is damage within the chunk, or a cut */
    return length <= n - head ? head + length : 0;
}

/* Walk one chunk of n bytes (the file's bytes of it); returns 1 when the
 * walk goes on with the next chunk, 0 when it ended (scan->state says how). */
static int scan_chunk(const unsigned char *c, size_t n, uint64_t offset, int last_piece,
                      earl_event_file_scan *scan)
{
    if (n < CHUNK_HEADER_BYTES) {
        scan->state = EARL_EVENT_FILE_CUT_SHORT;
        return 0;
    }
    if (c[0] != CHUNK_HEADER || (c[1] != 0x23 && c[1] != 0x42)) {
        scan->state = EARL_EVENT_FILE_BROKEN;
        return 0;
    }
    int little = c[1] == 0x42;
    scan->chunk_last_record = read_u64(c + 10, little);
    size_t pos = CHUNK_HEADER_BYTES;
    while (pos < n) {
        if (c[pos] == END_OF_CHUNK) {
            if (last_piece)
                scan->state = EARL_EVENT_FILE_CUT_SHORT; /* the next chunk is gone */
            return !last_piece;
        }
        if (c[pos] == END_OF_FILE) {
            scan->state = EARL_EVENT_FILE_INTACT;
            return 0;
        }
        int bad = 0;
        uint64_t size = record_bytes(c + pos, n - pos, little, &bad);
        if (!size) {
            scan->state = bad ? EARL_EVENT_FILE_BROKEN : EARL_EVENT_FILE_CUT_SHORT;
            return 0;
        }
        pos += size;
        if (c[pos - size] >= FIRST_EVENT) {
            scan->complete++;
            scan->good_bytes = offset + pos;
        }
    }
    /* a chunk's bytes ended before its end marker */
    scan->state = EARL_EVENT_FILE_CUT_SHORT;
    return 0;
}

earl_status earl_archive_scan_event_file(const char *path, uint64_t chunk_size,
                                         earl_event_file_scan *scan, earl_error *err)
{
    memset(scan, 0, sizeof *scan);
    FILE *f = fopen(path, "rb");
    if (!f)
        return earl_fail(err, errno == ENOENT ? EARL_ERR_MISSING_FILE : EARL_ERR_IO,
                         "%s: %s", path, strerror(errno));
    struct stat s;
    if (fstat(fileno(f), &s) == 0)
        scan->file_bytes = (uint64_t)s.st_size;
    if (chunk_size < CHUNK_HEADER_BYTES || chunk_size > ((uint64_t)1 << 32)) {
        fclose(f);
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: the archive's event chunk size %llu is "
                         "impossible", path, (unsigned long long)chunk_size);
    }
    unsigned char *chunk = malloc(chunk_size);
    if (!chunk) {
        fclose(f);
        return earl_fail(err, EARL_ERR_NOMEM, "%s: out of memory", path);
    }
    uint64_t offset = 0;
    scan->state = EARL_EVENT_FILE_CUT_SHORT; /* an empty file */
    for (;;) {
        size_t n = fread(chunk, 1, chunk_size, f);
        if (n == 0 && ferror(f)) {
            free(chunk);
            fclose(f);
            return earl_fail(err, EARL_ERR_IO, "%s: %s", path, strerror(errno));
        }
        if (n == 0)
            break;
        if (!scan_chunk(chunk, n, offset, offset + n >= scan->file_bytes, scan))
            break;
        offset += n;
    }
    free(chunk);
    fclose(f);
    return EARL_OK;
}

earl_status earl_archive_open_reader(const char *anchor, OTF2_Reader **out, earl_error *err)
{
    struct stat st;
    if (stat(anchor, &st) != 0)
        return earl_fail(err, EARL_ERR_NOT_FOUND, "%s: no such file", anchor);
    earl_otf2_clear_message();
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    if (!r)
        return earl_fail(err, EARL_ERR_NOT_ARCHIVE, "%s: not an OTF2 archive (%s)", anchor,
                         earl_otf2_last_message()[0] ? earl_otf2_last_message()
                                                     : "libotf2 cannot open the anchor file");
    if (OTF2_Reader_SetSerialCollectiveCallbacks(r) != OTF2_SUCCESS) {
        OTF2_Reader_Close(r);
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: cannot set up reading: %s", anchor,
                         earl_otf2_last_message());
    }
    *out = r;
    return EARL_OK;
}
