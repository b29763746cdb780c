/*
 * part_steps.c - the steps of a replay in parts, wrapped once for the two
 * handles that have them: _core.PartClocks (hb_part.c) and _core.PartRaces
 * (races_part.c).  earlc.parts.replay drives both the same way (run, take
 * what the other parts wait for, receive theirs, break a cycle with force);
 * each type gives its handle's functions as an earlc_part_ops (ext.h) and
 * keeps what differs (creation, needs, export, finish) to itself.
 */
#include "ext.h"

#include "earl_part.h"

void *earlc_part_handle(PyObject *self)
{
    earlc_part_object *o = (earlc_part_object *)self;
    if (!o->part)
        PyErr_SetString(PyExc_ValueError, o->ops->finished);
    return o->part;
}

PyObject *earlc_part_export_crossing(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *p = earlc_part_handle(self);
    if (!p)
        return NULL;
    earl_error err;
    size_t n = 0;
    if (((earlc_part_object *)self)->ops->export_crossing(p, &n, &err) != EARL_OK)
        return earlc_raise(&err);
    return PyLong_FromSize_t(n);
}

PyObject *earlc_part_run(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *p = earlc_part_handle(self);
    if (!p)
        return NULL;
    const earlc_part_ops *ops = ((earlc_part_object *)self)->ops;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops->run(p, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

PyObject *earlc_part_take(PyObject *self, PyObject *arg)
{
    void *p = earlc_part_handle(self);
    Py_ssize_t n_parts = p ? PyLong_AsSsize_t(arg) : -1;
    if (!p || (n_parts < 0 && PyErr_Occurred()))
        return NULL;
    if (n_parts < 1)
        return PyErr_Format(PyExc_ValueError, "take: %zd parts", n_parts);
    const earlc_part_ops *ops = ((earlc_part_object *)self)->ops;
    earl_outbox out;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops->take(p, (size_t)n_parts, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != EARL_OK)
        return earlc_raise(&err);
    return earlc_outbox_tuple(&out);
}

PyObject *earlc_part_receive(PyObject *self, PyObject *arg)
{
    void *p = earlc_part_handle(self);
    if (!p)
        return NULL;
    const earlc_part_ops *ops = ((earlc_part_object *)self)->ops;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) != 0)
        return NULL;
    earl_error err;
    earl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops->receive(p, buf.buf, (size_t)buf.len, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (st != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}

PyObject *earlc_part_unfinished(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *p = earlc_part_handle(self);
    return p ? PyLong_FromSize_t(((earlc_part_object *)self)->ops->unfinished(p)) : NULL;
}

PyObject *earlc_part_waiting(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *p = earlc_part_handle(self);
    return p ? PyLong_FromLongLong(((earlc_part_object *)self)->ops->waiting(p)) : NULL;
}

PyObject *earlc_part_force(PyObject *self, PyObject *arg)
{
    void *p = earlc_part_handle(self);
    long long e = p ? PyLong_AsLongLong(arg) : -1;
    if (!p || (e == -1 && PyErr_Occurred()))
        return NULL;
    earl_error err;
    if (((earlc_part_object *)self)->ops->force(p, (earl_eid)e, &err) != EARL_OK)
        return earlc_raise(&err);
    Py_RETURN_NONE;
}
