/*
 * column.c - _core.Column: a read-only buffer over one column of the C
 * store, so that numpy arrays view the trace's memory without copying.
 *
 * A Column keeps a reference to the object that owns the memory (the
 * _core.Trace), and every numpy array made from it keeps the Column alive
 * through the buffer protocol, so the memory outlives all its views.
 */
#include "ext.h"

#include "base/mem.h"

#include <stddef.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    PyObject *owner;
    void *data;
    Py_ssize_t length;   /* items */
    Py_ssize_t itemsize;
    char format[4];
    int writable;        /* a result handed over whole (its owner is nobody else's) */
} ColumnObject;

static int column_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    ColumnObject *c = (ColumnObject *)self;
    static char empty[8];
    if (PyBuffer_FillInfo(view, self, c->data ? c->data : empty, c->length * c->itemsize,
                          !c->writable, flags) != 0)
        return -1;
    view->itemsize = c->itemsize;
    view->format = (flags & PyBUF_FORMAT) ? c->format : NULL;
    if (flags & PyBUF_ND) {
        view->ndim = 1;
        view->shape = &c->length;
    }
    if ((flags & PyBUF_STRIDES) == PyBUF_STRIDES)
        view->strides = &c->itemsize;
    return 0;
}

static PyBufferProcs column_as_buffer = {column_getbuffer, NULL};

static void column_dealloc(PyObject *self)
{
    Py_XDECREF(((ColumnObject *)self)->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *column_len(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSsize_t(((ColumnObject *)self)->length);
}

static PyGetSetDef column_getset[] = {
    {"length", column_len, NULL, "number of items", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "earlc._core.Column",
    .tp_basicsize = sizeof(ColumnObject),
    .tp_dealloc = column_dealloc,
    .tp_as_buffer = &column_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only buffer over one column of the earlc C store.",
    .tp_getset = column_getset,
};

PyObject *earlc_column_new(PyObject *owner, const void *data, size_t length, size_t itemsize,
                           const char *format)
{
    ColumnObject *c = PyObject_New(ColumnObject, &ColumnType);
    if (!c)
        return NULL;
    Py_INCREF(owner);
    c->owner = owner;
    c->data = (void *)data;
    c->length = (Py_ssize_t)length;
    c->itemsize = (Py_ssize_t)itemsize;
    snprintf(c->format, sizeof c->format, "%s", format);
    c->writable = 0;
    return (PyObject *)c;
}

static void free_block(PyObject *capsule)
{
    earl_mem_free(PyCapsule_GetPointer(capsule, "earlc.block"));
}

PyObject *earlc_column_of_block(void *block, size_t length, size_t itemsize, const char *format)
{
    static char empty[8];
    PyObject *owner = PyCapsule_New(block ? block : empty, "earlc.block",
                                    block ? free_block : NULL);
    if (!owner) {
        earl_mem_free(block);
        return NULL;
    }
    PyObject *c = earlc_column_new(owner, block, length, itemsize, format);
    Py_DECREF(owner);
    if (c)
        ((ColumnObject *)c)->writable = 1;
    return c;
}

/* What an owner capsule holds: a C result and the function that frees it.
 * A result taken over by value (earlc_owner_take) lives in `taken`, in the
 * same allocation, so that one free releases the holder and the struct. */
typedef struct owned_result {
    void *result;
    void (*free_result)(void *result);
    max_align_t taken[];
} owned_result;

static void owner_capsule_free(PyObject *capsule)
{
    owned_result *o = PyCapsule_GetPointer(capsule, "earlc.result");
    o->free_result(o->result);
    free(o);
}

/* The one mechanism behind earlc_owner_new (size 0: result is the caller's
 * heap block, kept as it is) and earlc_owner_take (size > 0: *result is
 * moved into the holder and emptied; *held gets where it lives now).  On
 * failure result is freed with free_result, and a struct taken by value is
 * emptied as well, so that no caller keeps pointers to freed memory. */
static PyObject *owner_of(void *result, size_t size, void (*free_result)(void *result),
                          void **held)
{
    owned_result *o = malloc(sizeof *o + size);
    PyObject *c = o ? PyCapsule_New(o, "earlc.result", owner_capsule_free) : NULL;
    if (!c) {
        free(o);
        free_result(result);
        if (size)
            memset(result, 0, size);
        return o ? NULL : PyErr_NoMemory();
    }
    if (size) {
        memcpy(o->taken, result, size);
        memset(result, 0, size);
        result = o->taken;
    }
    o->result = result;
    o->free_result = free_result;
    *held = result;
    return c;
}

PyObject *earlc_owner_new(void *result, void (*free_result)(void *result))
{
    void *held;
    return owner_of(result, 0, free_result, &held);
}

void *earlc_owner_take(void *result, size_t size, void (*free_fields)(void *result),
                       PyObject **owner)
{
    void *taken = NULL;
    *owner = owner_of(result, size, free_fields, &taken);
    return *owner ? taken : NULL;
}

int earlc_add_column_type(PyObject *module)
{
    if (PyType_Ready(&ColumnType) < 0)
        return -1;
    Py_INCREF(&ColumnType);
    return PyModule_AddObject(module, "Column", (PyObject *)&ColumnType);
}
