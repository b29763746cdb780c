/*
 * numpy_memory.c - numpy arrays in the store's memory.
 *
 * The analysis allocates and frees numpy temporaries of kilobytes to
 * hundreds of megabytes, one after another.  numpy takes them from malloc,
 * advising the large ones for transparent huge pages, and malloc maps and
 * unmaps those above 32 MB each time, so they start on fresh pages: zeroed by
 * the kernel and, on a VM that reports free memory to its host, faulted in by
 * the host again (docs/model.md, "Memory").  numpy lets an extension supply
 * the allocator of the current context (NEP 49, PyDataMem_SetHandler); this
 * file supplies mem.c's temporaries: malloc's heap below 32 MB, without the
 * advice, and kept blocks above, warm for the next array of the size.
 * earlc.analysis switches it on for the duration of an analysis and back
 * afterwards (then the heap's free pages go back to the kernel); arrays
 * remember their allocator, so those that outlive the analysis are freed
 * correctly.
 */
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#include "ext.h"
#include "earl_mem.h"

#include <numpy/arrayobject.h>


static void *np_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return earl_mem_alloc_temp(size);
}

static void *np_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    return earl_mem_calloc_temp(nelem, elsize);
}

static void *np_realloc(void *ctx, void *ptr, size_t new_size)
{
    (void)ctx;
    return earl_mem_realloc_temp(ptr, new_size);
}

static void np_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx; (void)size;
    earl_mem_free(ptr);
}

static PyDataMem_Handler store_handler = {
    "earlc_store_memory", 1, {NULL, np_malloc, np_calloc, np_realloc, np_free},
};

/* use_store_memory() -> the previous handler: numpy arrays of this context
 * come from mem.c until restore_numpy_memory(previous). */
static PyObject *use_store_memory(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    PyObject *handler = PyCapsule_New(&store_handler, "mem_handler", NULL);
    if (!handler)
        return NULL;
    PyObject *previous = PyDataMem_SetHandler(handler);
    Py_DECREF(handler);
    return previous;
}

static PyObject *restore_numpy_memory(PyObject *module, PyObject *previous)
{
    (void)module;
    PyObject *current = PyDataMem_SetHandler(previous == Py_None ? NULL : previous);
    if (!current)
        return NULL;
    Py_DECREF(current);
    earl_mem_trim(); /* the temporaries' heap pages, now free */
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"use_store_memory", use_store_memory, METH_NOARGS,
     "use_store_memory() -> previous handler: numpy allocates from earlc's kept memory"},
    {"restore_numpy_memory", restore_numpy_memory, METH_O,
     "restore_numpy_memory(previous): numpy's allocator as before use_store_memory()"},
    {NULL, NULL, 0, NULL},
};

int earlc_add_numpy_memory(PyObject *module)
{
    import_array1(-1);
    return PyModule_AddFunctions(module, methods);
}
