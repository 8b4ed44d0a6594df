/* tiny_openreg._C: a stub that links the device library (lib/libtiny_openreg.so, found through
 * the $ORIGIN/lib rpath) and loads it with the package, as OpenReg's _C does. */
#include <Python.h>

#include "tiny_openreg.h"

static PyObject* built_for(PyObject* self, PyObject* args) {
  int major = 0, minor = 0;
  tiny_openreg_built_for(&major, &minor);
  return Py_BuildValue("(ii)", major, minor);
}

static PyObject* allocations(PyObject* self, PyObject* args) {
  return PyLong_FromUnsignedLongLong(tiny_openreg_allocations());
}

static PyMethodDef methods[] = {
    {"built_for", built_for, METH_NOARGS, "(major, minor) of the torch the device library was compiled against"},
    {"allocations", allocations, METH_NOARGS, "allocations of nonzero size the device's allocator has made"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
