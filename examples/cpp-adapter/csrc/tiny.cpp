// The torch this extension was compiled against, baked in at compile time: a cell proves its
// build matches the torch it runs on (a build for 2.13 loaded by 2.14 is the bug this tool exists for).
#include <Python.h>
#include <torch/version.h>

static PyObject* built_for(PyObject*, PyObject*) {
  return Py_BuildValue("(ii)", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}

static PyMethodDef methods[] = {
    {"built_for", built_for, METH_NOARGS, "(major, minor) of the torch this was compiled against"},
    {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
