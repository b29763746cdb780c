/*
 * buffers.c - numpy arrays as C arrays for the glue of the analysis kernels
 * (catalog.c, rootcause.c): each argument is taken through the buffer
 * protocol, checked for its item type and length, and held until the call
 * returns, when earlc_buffers_release gives every one back.
 */
#include "ext.h"

#include <string.h>

void earlc_buffers_release(earlc_buffers *held)
{
    for (int i = 0; i < held->n; i++)
        PyBuffer_Release(&held->view[i]);
    held->n = 0;
}

/* The format character of a buffer, with the native size/byte-order prefix
 * dropped and C's long spelled as the fixed-size type it is. */
static char item_format(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return '?';
    if (*f == 'l' && b->itemsize == 8)
        return 'q';
    if (*f == 'L' && b->itemsize == 8)
        return 'Q';
    return *f;
}

static const char *format_name(char format)
{
    switch (format) {
    case 'q': return "int64";
    case 'Q': return "uint64";
    case 'i': return "int32";
    case 'I': return "uint32";
    case 'B': return "uint8";
    default: return "float64";
    }
}

void *earlc_buffer_array(earlc_buffers *held, PyObject *obj, char format, int writable,
                         size_t *count, const char *name)
{
    static int64_t no_items; /* the address of an empty buffer without one */
    if (held->n == EARLC_MAX_BUFFERS) {
        PyErr_Format(PyExc_SystemError, "glue: more than %d arrays in one call",
                     EARLC_MAX_BUFFERS);
        return NULL;
    }
    Py_buffer *b = &held->view[held->n];
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                       (writable ? PyBUF_WRITABLE : 0)) < 0)
        return NULL;
    held->n++;
    if (item_format(b) != format) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous %s array", name,
                     format_name(format));
        return NULL;
    }
    size_t n = (size_t)b->len / (size_t)b->itemsize;
    if (*count != (size_t)-1 && n != *count) {
        PyErr_Format(PyExc_ValueError, "%s holds %zu values, %zu expected", name, n, *count);
        return NULL;
    }
    *count = n;
    return b->buf ? b->buf : &no_items;
}
