//===- LaunchModule.c - rowred._launch: the package's launch call ---------===//
//
// Part of the softmax kernel compiler.
//
// A CPython extension with one call, launch(), that hands a kernel launch's
// arguments to the runtime's rowred_kernel_launch_operands: the Python
// package's launch path. Through ctypes, the same launch builds two ctypes
// arrays and converts ten arguments, which costs the host more than the
// launch itself; here the arguments are read straight from the Python ints.
//
// The module does not link the runtime: the package loads
// librowred_runtime.so (with ctypes, for its other calls) and binds this
// module to that library's function with bind(), so that both use one copy
// of the runtime, wherever the package found it.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

/// rowred_kernel_launch_operands (rowred_runtime.h).
typedef int (*LaunchOperandsFn)(const void *kernel, void *stream,
                                const uint64_t *operands, int numOperands,
                                const int64_t *rowStrides, int numStrides,
                                int64_t rows, int64_t cols, uint64_t workspace,
                                int64_t grid);

static LaunchOperandsFn launchOperands;

/// The most operands and row strides one launch passes (the family's
/// kernels take at most nine operands).
enum { kMaxOperands = 64 };

/// Reads the ints of `seq` (a list or tuple) into `out` as unsigned (the
/// operands' addresses) or signed (row strides) 64-bit values; the count, or
/// -1 with a Python exception set.
static Py_ssize_t readInts(PyObject *seq, const char *what, int isUnsigned,
                           uint64_t *out) {
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
    PyErr_Format(PyExc_TypeError, "launch: %s must be a list or tuple of ints",
                 what);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > kMaxOperands) {
    PyErr_Format(PyExc_ValueError, "launch: %zd %s, more than %d", n, what,
                 (int)kMaxOperands);
    return -1;
  }
  PyObject **items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = isUnsigned ? (uint64_t)PyLong_AsUnsignedLongLong(items[i])
                        : (uint64_t)PyLong_AsLongLong(items[i]);
    if (PyErr_Occurred())
      return -1;
  }
  return n;
}

/// launch(kernel, stream, operands, row_strides, rows, cols, workspace,
/// grid) -> int: the runtime's return code (0, or 1 with
/// rowred_last_error() set). `kernel` and `stream` are addresses (a
/// rowred_kernel handle, a CUstream or 0), `operands` the device address of
/// each operand, `row_strides` the row stride of each input and output,
/// `grid` 0 for the derived grid.
static PyObject *launch(PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs) {
  (void)self;
  if (nargs != 8) {
    PyErr_Format(PyExc_TypeError, "launch() takes 8 arguments (%zd given)",
                 nargs);
    return NULL;
  }
  if (!launchOperands) {
    PyErr_SetString(PyExc_RuntimeError,
                    "launch: not bound to the runtime library (bind())");
    return NULL;
  }
  void *kernel = PyLong_AsVoidPtr(args[0]);
  void *stream = PyLong_AsVoidPtr(args[1]);
  if (PyErr_Occurred())
    return NULL;
  uint64_t operands[kMaxOperands], strides[kMaxOperands];
  Py_ssize_t numOperands = readInts(args[2], "operands", 1, operands);
  if (numOperands < 0)
    return NULL;
  Py_ssize_t numStrides = readInts(args[3], "row strides", 0, strides);
  if (numStrides < 0)
    return NULL;
  int64_t rows = PyLong_AsLongLong(args[4]);
  int64_t cols = PyLong_AsLongLong(args[5]);
  uint64_t workspace = PyLong_AsUnsignedLongLong(args[6]);
  int64_t grid = PyLong_AsLongLong(args[7]);
  if (PyErr_Occurred())
    return NULL;
  int rc;
  // The launch may wait for room in the stream's queue: other Python
  // threads run meanwhile.
  Py_BEGIN_ALLOW_THREADS
  rc = launchOperands(kernel, stream, operands, (int)numOperands,
                      (const int64_t *)strides, (int)numStrides, rows, cols,
                      workspace, grid);
  Py_END_ALLOW_THREADS
  return PyLong_FromLong(rc);
}

/// bind(address): launch() calls the rowred_kernel_launch_operands at
/// `address` (the runtime library the package loaded).
static PyObject *bind(PyObject *self, PyObject *address) {
  (void)self;
  void *fn = PyLong_AsVoidPtr(address);
  if (PyErr_Occurred())
    return NULL;
  if (!fn) {
    PyErr_SetString(PyExc_ValueError, "bind: a null address");
    return NULL;
  }
  launchOperands = (LaunchOperandsFn)fn;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(kernel, stream, operands, row_strides, rows, cols, workspace, "
     "grid) -> int: rowred_kernel_launch_operands' return code."},
    {"bind", bind, METH_O,
     "bind(address): the rowred_kernel_launch_operands that launch() "
     "calls."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_launch",
    .m_doc = "The rowred package's launch call into the runtime library.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&module); }
