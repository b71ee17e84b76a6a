// _twinccl: the extension module under the twinccl package (python/twinccl/__init__.py).
// TwinCCL's typed errors become Python exceptions of the same names, all derived from
// twinccl.Error (a RuntimeError).
#include <pybind11/pybind11.h>

#include "call_site.h"
#include "py_comm.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
void bind_run(py::module_& m);         // py_run.cc
void bind_options(py::module_& m);     // py_options.cc
void bind_rank_baton(py::module_& m);  // rank_baton.cc
}  // namespace twinccl::python

PYBIND11_MODULE(_twinccl, m) {
  using namespace twinccl;
  m.doc() = "TwinCCL's emulator, collectives and simulator for Python (see the twinccl package).";
  // The base first: translators are tried last-registered first, so derived types win.
  auto& base = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<InvalidArgument>(m, "InvalidArgument", base.ptr());
  py::register_exception<MismatchError>(m, "MismatchError", base.ptr());
  py::register_exception<TimeoutError>(m, "TimeoutError", base.ptr());
  py::register_exception<AbortedError>(m, "AbortedError", base.ptr());
  py::register_exception<DeadlockError>(m, "DeadlockError", base.ptr());
  py::register_exception<BackendError>(m, "BackendError", base.ptr());
  py::register_exception<ResourceError>(m, "ResourceError", base.ptr());
  py::register_exception<ConfigError>(m, "ConfigError", base.ptr());
  py::register_exception<InternalError>(m, "InternalError", base.ptr());

  python::bind_comm(m);
  python::bind_run(m);
  python::bind_options(m);
  python::bind_rank_baton(m);
  m.def("_call_sites_supported", &python::python_call_sites_supported,
        "True when errors can name Python file:line (the standard library's layout is known).");
  m.def(
      "_describe_call_site",
      [](const std::string& file, unsigned line) {
        return describe_call_site(python::python_call_site(file, line));
      },
      "How a message names the Python call site file:line (for the tests).");
}
