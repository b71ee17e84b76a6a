// twinccl.run's emulator options (world_size, check, timeout_s, algorithm and every other keyword
// the Python code does not own) set by name from the emulator's options table
// (twinccl/emu/option_table.h): a name the table does not have is a TypeError, a value of the
// wrong type InvalidArgument, a value out of range ConfigError, each naming the keyword and the
// value, as the table's range check words them for C++ and the environment.
#include <pybind11/pybind11.h>

#include <string>

#include "twinccl/emu/option_table.h"
#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {

constexpr std::string_view kWho = "twinccl.run: ";
using O = emu::EmulatorOptions;

void set_one(O& options, const std::string& name, py::handle value) {
  const emu::OptionRow* row = emu::find_option(name);
  if (row == nullptr) {
    std::string names;
    for (const emu::OptionRow& r : emu::option_table())
      names += (names.empty() ? "" : ", ") + std::string(r.name);
    throw py::type_error("twinccl.run() got an unexpected keyword argument '" + name +
                         "' (emulator options: " + names + ")");
  }
  auto wrong = [&](const char* wanted) {
    throw InvalidArgument(std::string(kWho) + name + " must be " + wanted + ", got " +
                          std::string(py::repr(value)));
  };
  PyObject* v = value.ptr();
  const emu::OptionField& field = row->field;
  if (std::holds_alternative<bool O::*>(field)) {
    if (!PyBool_Check(v)) wrong("True or False");
    emu::set_switch(options, *row, v == Py_True);
  } else if (std::holds_alternative<std::string O::*>(field)) {
    py::object text = value.is_none() ? py::str("") : py::reinterpret_borrow<py::object>(value);
    if (PyObject_HasAttrString(v, "__fspath__"))
      text = py::module_::import("os").attr("fspath")(value);
    if (!py::isinstance<py::str>(text)) wrong("a str or None");
    emu::set_text(options, *row, text.cast<std::string>());
  } else if (std::holds_alternative<double O::*>(field)) {
    const PyNumberMethods* number = Py_TYPE(v)->tp_as_number;
    if (PyBool_Check(v) || number == nullptr || (!number->nb_float && !number->nb_index))
      wrong("a number of seconds");
    const double seconds = PyFloat_AsDouble(v);
    if (seconds == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    emu::set_seconds(options, *row, seconds, kWho);
  } else {  // a whole number; a CheckLevel takes True and False too
    if ((PyBool_Check(v) && !std::holds_alternative<CheckLevel O::*>(field)) || !PyIndex_Check(v))
      wrong("an int");
    int overflow = 0;
    const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(v));
    if (!index) throw py::error_already_set();
    const long long whole = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) emu::refuse_value(*row, kWho, py::repr(value));
    emu::set_whole(options, *row, whole, kWho);
  }
}

}  // namespace

void set_emulator_options(O& options, const py::dict& given) {
  for (const auto& [name, value] : given) set_one(options, py::str(name), value);
}

void bind_options(py::module_& m) {
  m.def(
      "_check_emulator_options",
      [](const py::dict& given) {
        O options;
        set_emulator_options(options, given);
      },
      py::arg("options"), "Raises as twinccl.run would for these emulator options.");
  m.def(
      "_emulator_options",
      [] {
        py::list lines;
        for (const emu::OptionRow& r : emu::option_table()) lines.append(emu::help_line(r));
        return lines;
      },
      "One help line per emulator option: name=default: what (range; TWINCCL_* variable).");
}

}  // namespace twinccl::python
