/*
 * markers.c - the marker file of an OTF2 archive, read and rewritten through
 * libotf2 (earl_markers.h states the model).
 *
 * Reading registers two callbacks on libotf2's marker reader and copies what
 * they get (libotf2 lends the strings only for the call).  Rewriting reads
 * the file first, then opens libotf2's marker writer on the same archive,
 * which starts the file anew, and writes the kept definitions and markers
 * followed by the added ones.  Only NAME.marker is ever written: libotf2's
 * reader opens the anchor, definition and event files for reading alone.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "archive.h"
#include "earl_markers.h"
#include "base/errors.h"
#include "base/grow.h"
#include "base/otf2_errors.h"
#include "base/text.h"

/* The set, with the strings it owns. */
struct earl_markers {
    earl_marker_set set;
    earl_marker_def *defs;
    size_t cap_defs;
    earl_marker *markers;
    size_t cap_markers;
    uint32_t *def_ref;      /* the OTF2 reference of every definition read */
    size_t cap_refs;
    int nomem;
};

static void install_error_handler(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, earl_otf2_install_error_handler);
}

/* DIR/NAME.marker of the anchor DIR/NAME.otf2, or NULL (out of memory). */
static char *marker_file(const char *anchor)
{
    size_t n = strlen(anchor);
    size_t stem = n > 5 && !strcmp(anchor + n - 5, ".otf2") ? n - 5 : n;
    char *path = malloc(stem + sizeof ".marker");
    if (path) {
        memcpy(path, anchor, stem);
        memcpy(path + stem, ".marker", sizeof ".marker");
    }
    return path;
}

static OTF2_CallbackCode on_def(void *data, OTF2_MarkerRef self, const char *group,
                                const char *category, OTF2_MarkerSeverity severity)
{
    earl_markers *m = data;
    size_t k = m->set.n_defs;
    char *g = earl_strdup(group ? group : ""), *c = earl_strdup(category ? category : "");
    if (!g || !c || EARL_GROW(m->defs, m->cap_defs, k + 1) != 0 ||
        EARL_GROW(m->def_ref, m->cap_refs, k + 1) != 0) {
        free(g);
        free(c);
        m->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    m->defs[k] = (earl_marker_def){g, c, severity};
    m->def_ref[k] = self;
    m->set.n_defs = k + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_marker(void *data, OTF2_TimeStamp time, OTF2_TimeStamp duration,
                                   OTF2_MarkerRef ref, OTF2_MarkerScope scope, uint64_t scope_ref,
                                   const char *text)
{
    earl_markers *m = data;
    size_t k = m->set.n_markers;
    char *t = earl_strdup(text ? text : "");
    if (!t || EARL_GROW(m->markers, m->cap_markers, k + 1) != 0) {
        free(t);
        m->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    /* definitions come first in a marker file: the reference is resolved at
     * the end, when all are known */
    m->markers[k] = (earl_marker){time, duration, ref, scope, scope_ref, t};
    m->set.n_markers = k + 1;
    return OTF2_CALLBACK_SUCCESS;
}

/* Marker references (OTF2 refs) to definition indices, UINT32_MAX when none. */
static void resolve_refs(earl_markers *m)
{
    for (size_t k = 0; k < m->set.n_markers; k++) {
        uint32_t ref = m->markers[k].def, index = UINT32_MAX;
        for (size_t d = m->set.n_defs; d-- > 0;) /* a later definition wins */
            if (m->def_ref[d] == ref) {
                index = (uint32_t)d;
                break;
            }
        m->markers[k].def = index;
    }
}

static earl_status read_file(OTF2_Reader *r, const char *anchor, earl_markers *m, earl_error *err)
{
    OTF2_MarkerReader *mr = OTF2_Reader_GetMarkerReader(r);
    if (!mr)
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: cannot read the marker file: %s", anchor,
                         earl_otf2_last_message());
    OTF2_MarkerReaderCallbacks *cb = OTF2_MarkerReaderCallbacks_New();
    if (!cb) {
        OTF2_Reader_CloseMarkerReader(r, mr);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory reading the markers of %s", anchor);
    }
    OTF2_MarkerReaderCallbacks_SetDefMarkerCallback(cb, on_def);
    OTF2_MarkerReaderCallbacks_SetMarkerCallback(cb, on_marker);
    OTF2_ErrorCode rc = OTF2_Reader_RegisterMarkerCallbacks(r, mr, cb, m);
    uint64_t n = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_ReadAllMarkers(r, mr, &n);
    OTF2_MarkerReaderCallbacks_Delete(cb);
    OTF2_Reader_CloseMarkerReader(r, mr);
    if (m->nomem)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory reading the markers of %s", anchor);
    if (rc != OTF2_SUCCESS && rc != OTF2_ERROR_INTERRUPTED_BY_CALLBACK)
        return earl_fail(err, EARL_ERR_CORRUPT, "%s: the marker file is corrupt: %s (%s)", anchor,
                         OTF2_Error_GetDescription(rc), earl_otf2_last_message());
    resolve_refs(m);
    return EARL_OK;
}

/* Read into m through the open reader r (no marker file: nothing). */
static earl_status read_markers(OTF2_Reader *r, const char *anchor, earl_markers *m,
                                earl_error *err)
{
    char *path = marker_file(anchor);
    if (!path)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory reading the markers of %s", anchor);
    struct stat st;
    int exists = stat(path, &st) == 0;
    free(path);
    return exists ? read_file(r, anchor, m, err) : EARL_OK;
}

static void publish(earl_markers *m)
{
    m->set.defs = m->defs;
    m->set.markers = m->markers;
}

earl_status earl_markers_read(const char *path, earl_markers **out, earl_error *err)
{
    *out = NULL;
    install_error_handler();
    char *anchor = NULL;
    earl_status rc = earl_archive_find_anchor(path, &anchor, err);
    if (rc != EARL_OK)
        return rc;
    earl_markers *m = calloc(1, sizeof *m);
    if (!m) {
        free(anchor);
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory reading the markers of %s", path);
    }
    OTF2_Reader *r = NULL;
    rc = earl_archive_open_reader(anchor, &r, err);
    if (rc == EARL_OK) {
        rc = read_markers(r, anchor, m, err);
        OTF2_Reader_Close(r);
    }
    free(anchor);
    if (rc != EARL_OK) {
        earl_markers_free(m);
        return rc;
    }
    publish(m);
    *out = m;
    return EARL_OK;
}

const earl_marker_set *earl_markers_get(const earl_markers *m)
{
    return &m->set;
}

void earl_markers_free(earl_markers *m)
{
    if (!m)
        return;
    for (size_t k = 0; k < m->set.n_defs; k++) {
        free((char *)m->defs[k].group);
        free((char *)m->defs[k].category);
    }
    for (size_t k = 0; k < m->set.n_markers; k++)
        free((char *)m->markers[k].text);
    free(m->defs);
    free(m->def_ref);
    free(m->markers);
    free(m);
}

static earl_status update(const char *anchor, const char *const *drop, size_t n_drop,
                          const earl_marker_set *add, size_t *kept, earl_error *err);

static int dropped(const char *group, const char *const *drop, size_t n_drop)
{
    for (size_t k = 0; k < n_drop; k++)
        if (!strcmp(group, drop[k]))
            return 1;
    return 0;
}

/* Write the definitions of set (renumbered from *next_ref on, those with
 * keep[d] == 0 left out) and its markers whose definitions are written. */
static OTF2_ErrorCode write_set(OTF2_MarkerWriter *w, const earl_marker_set *set,
                                const uint8_t *keep, uint32_t *ref, uint32_t *next_ref,
                                size_t *written)
{
    OTF2_ErrorCode rc = OTF2_SUCCESS;
    for (size_t d = 0; d < set->n_defs && rc == OTF2_SUCCESS; d++) {
        ref[d] = UINT32_MAX;
        if (keep && !keep[d])
            continue;
        ref[d] = (*next_ref)++;
        rc = OTF2_MarkerWriter_WriteDefMarker(w, ref[d], set->defs[d].group,
                                              set->defs[d].category, set->defs[d].severity);
    }
    for (size_t k = 0; k < set->n_markers && rc == OTF2_SUCCESS; k++) {
        const earl_marker *mk = &set->markers[k];
        if (mk->def >= set->n_defs || ref[mk->def] == UINT32_MAX)
            continue; /* a marker without a definition cannot be written */
        rc = OTF2_MarkerWriter_WriteMarker(w, mk->time, mk->duration, ref[mk->def], mk->scope,
                                           mk->scope_ref, mk->text ? mk->text : "");
        (*written)++;
    }
    return rc;
}

earl_status earl_markers_update(const char *path, const char *const *drop, size_t n_drop,
                                const earl_marker_set *add, size_t *kept, earl_error *err)
{
    char *anchor = NULL;
    earl_status rc = earl_archive_find_anchor(path, &anchor, err);
    if (rc != EARL_OK)
        return rc;
    rc = update(anchor, drop, n_drop, add, kept, err);
    free(anchor);
    return rc;
}

/* earl_markers_update on the archive's anchor file. */
static earl_status update(const char *anchor, const char *const *drop, size_t n_drop,
                          const earl_marker_set *add, size_t *kept, earl_error *err)
{
    static const earl_marker_set none = {0, NULL, 0, NULL};
    if (!add)
        add = &none;
    for (size_t k = 0; k < add->n_markers; k++)
        if (add->markers[k].def >= add->n_defs)
            return earl_fail(err, EARL_ERR_INVALID, "marker %zu names definition %u of %zu", k,
                             (unsigned)add->markers[k].def, add->n_defs);
    install_error_handler();
    earl_markers *old = calloc(1, sizeof *old);
    if (!old)
        return earl_fail(err, EARL_ERR_NOMEM, "out of memory writing the markers of %s", anchor);
    OTF2_Reader *r = NULL;
    earl_status rc = earl_archive_open_reader(anchor, &r, err);
    if (rc == EARL_OK)
        rc = read_markers(r, anchor, old, err);
    publish(old);
    size_t n_ref = old->set.n_defs > add->n_defs ? old->set.n_defs : add->n_defs;
    uint8_t *keep = calloc(old->set.n_defs + 1, 1);
    uint32_t *ref = malloc((n_ref + 1) * sizeof *ref);
    if (rc == EARL_OK && (!keep || !ref))
        rc = earl_fail(err, EARL_ERR_NOMEM, "out of memory writing the markers of %s", anchor);
    size_t n_kept = 0, n_added = 0;
    if (rc == EARL_OK) {
        for (size_t d = 0; d < old->set.n_defs; d++)
            keep[d] = !dropped(old->defs[d].group, drop, n_drop);
        OTF2_MarkerWriter *w = OTF2_Reader_GetMarkerWriter(r);
        if (!w) {
            rc = earl_fail(err, EARL_ERR_IO, "%s: cannot write the marker file: %s", anchor,
                           earl_otf2_last_message());
        } else {
            uint32_t next = 0;
            OTF2_ErrorCode orc = write_set(w, &old->set, keep, ref, &next, &n_kept);
            if (orc == OTF2_SUCCESS)
                orc = write_set(w, add, NULL, ref, &next, &n_added);
            OTF2_ErrorCode crc = OTF2_Reader_CloseMarkerWriter(r, w);
            if (orc == OTF2_SUCCESS)
                orc = crc;
            if (orc != OTF2_SUCCESS)
                rc = earl_fail(err, EARL_ERR_IO, "%s: cannot write the marker file: %s (%s)",
                               anchor, OTF2_Error_GetDescription(orc), earl_otf2_last_message());
        }
    }
    if (r)
        OTF2_Reader_Close(r);
    free(keep);
    free(ref);
    earl_markers_free(old);
    if (rc == EARL_OK && kept)
        *kept = n_kept;
    return rc;
}
