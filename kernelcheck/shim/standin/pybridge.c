/* The stand-in driver's way into Python.
 *
 * The programs the stand-in serves are Python programs (cuda.bindings.driver), so the
 * interpreter is already in the process. Its C API is looked up with dlsym(RTLD_DEFAULT)
 * rather than linked, so the library builds without Python headers and loads (and fails
 * calls cleanly with CUDA_ERROR_UNKNOWN) in a process without Python. Every call takes the
 * GIL with PyGILState_Ensure, which also works on threads Python did not create. */
#include "pybridge.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

typedef void PyObject;

static struct {
    int ok;
    int (*IsInitialized)(void);
    int (*GILState_Ensure)(void);
    void (*GILState_Release)(int);
    PyObject *(*ImportModule)(const char *);
    PyObject *(*GetAttrString)(PyObject *, const char *);
    PyObject *(*VaBuildValue)(const char *, va_list);
    PyObject *(*CallObject)(PyObject *, PyObject *);
    long long (*AsLongLong)(PyObject *);
    PyObject *(*TupleGetItem)(PyObject *, long);
    long (*TupleSize)(PyObject *);
    void (*DecRef)(PyObject *);
    void (*ErrPrint)(void);
    PyObject *(*ErrOccurred)(void);
    void (*ErrClear)(void);
} py;

static PyObject *module;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOOK(field, name) (*(void **)&py.field = dlsym(RTLD_DEFAULT, name)) != NULL

static void resolve(void)
{
    py.ok = LOOK(IsInitialized, "Py_IsInitialized") &&
            LOOK(GILState_Ensure, "PyGILState_Ensure") &&
            LOOK(GILState_Release, "PyGILState_Release") &&
            LOOK(ImportModule, "PyImport_ImportModule") &&
            LOOK(GetAttrString, "PyObject_GetAttrString") &&
            LOOK(VaBuildValue, "Py_VaBuildValue") &&
            LOOK(CallObject, "PyObject_CallObject") &&
            LOOK(AsLongLong, "PyLong_AsLongLong") &&
            LOOK(TupleGetItem, "PyTuple_GetItem") && LOOK(TupleSize, "PyTuple_Size") &&
            LOOK(DecRef, "Py_DecRef") && LOOK(ErrPrint, "PyErr_Print") &&
            LOOK(ErrOccurred, "PyErr_Occurred") && LOOK(ErrClear, "PyErr_Clear");
    if (py.ok && !py.IsInitialized())
        py.ok = 0;
    if (!py.ok)
        fprintf(stderr, "kernelcheck stand-in driver: no Python interpreter in this process; "
                        "every call fails with CUDA_ERROR_UNKNOWN\n");
}

int kc_py_ints(const char *fn, long long *out, int max_out, const char *fmt, ...)
{
    pthread_once(&once, resolve);
    if (!py.ok)
        return -1;
    int gil = py.GILState_Ensure();
    int n = -1;
    PyObject *args = NULL, *func = NULL, *res = NULL;
    if (module == NULL) {
        module = py.ImportModule("kernelcheck.standin.driver");
        if (module == NULL)
            goto fail;
    }
    func = py.GetAttrString(module, fn);
    if (func == NULL)
        goto fail;
    va_list ap;
    va_start(ap, fmt);
    args = py.VaBuildValue(fmt, ap);
    va_end(ap);
    if (args == NULL)
        goto fail;
    res = py.CallObject(func, args);
    if (res == NULL)
        goto fail;
    long size = py.TupleSize(res);
    if (size < 0) { /* a single int */
        py.ErrClear();
        out[0] = py.AsLongLong(res);
        n = 1;
    } else {
        n = 0;
        for (long k = 0; k < size && n < max_out; k++)
            out[n++] = py.AsLongLong(py.TupleGetItem(res, k));
    }
    if (py.ErrOccurred() != NULL)
        goto fail;
    goto done;
fail:
    n = -1;
    if (py.ErrOccurred() != NULL)
        py.ErrPrint();
done:
    if (res)
        py.DecRef(res);
    if (args)
        py.DecRef(args);
    if (func)
        py.DecRef(func);
    py.GILState_Release(gil);
    return n;
}
