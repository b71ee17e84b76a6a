// rank_slots.h: a rank's memory and dict slots, saved and installed without Python code.
#include "rank_slots.h"

#include <cstdlib>
#include <cstring>

#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {

// CPython gives a dict a new, never reused version tag at every change (up to 3.11; 0 where this
// CPython has none: the contents are then copied at every save).
std::uint64_t version_of(PyObject* dict) {
#if PY_VERSION_HEX >= 0x030C0000
  (void)dict;
  return 0;
#else
  return reinterpret_cast<PyDictObject*>(dict)->ma_version_tag;
#endif
}

PyObject* item(PyObject* dict, PyObject* key) {  // borrowed; nullptr: absent
  PyObject* v = PyDict_GetItemWithError(dict, key);
  if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

void check(int status) {
  if (status != 0) throw py::error_already_set();
}

// The C library's environment as os.putenv/os.unsetenv keep it (os.environ._data holds bytes).
void set_c_environment(PyObject* key, PyObject* value) {
  if (!PyBytes_Check(key) || (value != nullptr && !PyBytes_Check(value))) return;
  if (value != nullptr)
    setenv(PyBytes_AS_STRING(key), PyBytes_AS_STRING(value), 1);
  else
    unsetenv(PyBytes_AS_STRING(key));
}

}  // namespace

void RankSlots::add(const py::handle& spec) {
  const auto t = py::reinterpret_borrow<py::tuple>(spec);
  const std::string kind = t[0].cast<std::string>();
  Slot slot;
  if (kind == "memory") {
    slot.kind = Kind::memory;
    slot.address = t[1].cast<std::uintptr_t>();
    slot.bytes = t[2].cast<std::size_t>();
    slot.dict = py::reinterpret_borrow<py::object>(t[3]);  // the owner: the memory stays valid
  } else if (kind == "attributes") {  // setattr: a class's attribute cache stays right
    slot.kind = Kind::attributes;
    slot.dict = py::reinterpret_borrow<py::object>(t[1]);
    for (const py::handle name : t[2])
      slot.keys.push_back(py::reinterpret_borrow<py::object>(name));
  } else if (kind == "keys" || kind == "dict" || kind == "environ") {
    slot.kind = kind == "keys" ? Kind::keys : kind == "dict" ? Kind::dict : Kind::environ;
    slot.dict = py::reinterpret_borrow<py::object>(t[1]);
    if (!PyDict_Check(slot.dict.ptr())) throw py::type_error("rank slot: not a dict");
    if (slot.kind == Kind::keys) {
      for (const py::handle key : t[2])
        slot.keys.push_back(py::reinterpret_borrow<py::object>(key));
      if (t.size() > 3 && !t[3].is_none()) slot.changed = py::reinterpret_borrow<py::object>(t[3]);
    }
  } else {
    throw InternalError("rank slot: unknown kind '" + kind + "'");
  }
  slots_.push_back(std::move(slot));
}

void RankSlots::save_slot(Slot& slot, Value& value) {
  switch (slot.kind) {
    case Kind::memory:
      value.memory.assign(reinterpret_cast<const char*>(slot.address), slot.bytes);
      break;
    case Kind::keys:
      value.items.resize(slot.keys.size());
      for (std::size_t i = 0; i < slot.keys.size(); ++i)
        value.items[i] =
            py::reinterpret_borrow<py::object>(item(slot.dict.ptr(), slot.keys[i].ptr()));
      break;
    case Kind::attributes:
      value.items.resize(slot.keys.size());
      for (std::size_t i = 0; i < slot.keys.size(); ++i) {
        PyObject* v = PyObject_GetAttr(slot.dict.ptr(), slot.keys[i].ptr());
        if (v == nullptr) {
          if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
          PyErr_Clear();
        }
        value.items[i] = py::reinterpret_steal<py::object>(v);
      }
      break;
    case Kind::dict:
    case Kind::environ: {
      const std::uint64_t version = version_of(slot.dict.ptr());
      if (value.known && version != 0 && version == value.version) return;  // unchanged
      PyObject* copy = PyDict_Copy(slot.dict.ptr());
      if (copy == nullptr) throw py::error_already_set();
      value.copy = py::reinterpret_steal<py::object>(copy);
      value.version = version;
      value.differences.clear();
      slot.in_place = value.copy;  // what the dict holds now
      slot.in_place_version = version;
      break;
    }
  }
  value.known = true;
}

void RankSlots::install_slot(Slot& slot, Value& value) {
  PyObject* dict = slot.dict.ptr();
  switch (slot.kind) {
    case Kind::memory: {
      void* at = reinterpret_cast<void*>(slot.address);
      if (std::memcmp(at, value.memory.data(), slot.bytes) != 0)
        std::memcpy(at, value.memory.data(), slot.bytes);
      return;
    }
    case Kind::keys: {
      bool changed = false;  // a value replaced by one not equal to it
      for (std::size_t i = 0; i < slot.keys.size(); ++i) {
        PyObject* key = slot.keys[i].ptr();
        py::object now = py::reinterpret_borrow<py::object>(item(dict, key));
        PyObject* want = value.items[i].ptr();
        if (now.ptr() == want) continue;
        if (slot.changed && !changed) {
          const int equal = now && want ? PyObject_RichCompareBool(now.ptr(), want, Py_EQ) : 0;
          if (equal < 0) throw py::error_already_set();
          changed = equal == 0;
        }
        if (want == nullptr)
          check(PyDict_DelItem(dict, key));
        else
          check(PyDict_SetItem(dict, key, want));
      }
      if (changed) {
        const auto result =
            py::reinterpret_steal<py::object>(PyObject_CallNoArgs(slot.changed.ptr()));
        if (!result) throw py::error_already_set();
      }
      return;
    }
    case Kind::attributes:
      for (std::size_t i = 0; i < slot.keys.size(); ++i) {
        PyObject* want = value.items[i].ptr();
        PyObject* now = PyObject_GetAttr(dict, slot.keys[i].ptr());
        if (now == nullptr) {
          if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
          PyErr_Clear();
        }
        Py_XDECREF(now);  // compared by identity only
        if (want != nullptr && now != want) check(PyObject_SetAttr(dict, slot.keys[i].ptr(), want));
        if (want == nullptr && now != nullptr) check(PyObject_DelAttr(dict, slot.keys[i].ptr()));
      }
      return;
    case Kind::dict:
    case Kind::environ: {
      const std::uint64_t version = version_of(dict);
      if (version != 0 && slot.in_place && version == slot.in_place_version) {
        // The dict holds slot.in_place's contents: only the keys where it and this value differ
        // change (found once per pair of copies).
        if (slot.in_place.ptr() != value.copy.ptr())
          for (const py::object& key : differences(slot, value)) set(slot, key.ptr(), value);
      } else {
        replace_all(slot, value);
      }
      slot.in_place = value.copy;
      slot.in_place_version = value.version = version_of(dict);
      return;
    }
  }
}

const std::vector<py::object>& RankSlots::differences(const Slot& slot, Value& value) {
  PyObject* from = slot.in_place.ptr();
  for (const auto& [other, keys] : value.differences)
    if (other.ptr() == from) return keys;
  if (value.differences.size() >= 16) value.differences.clear();  // bounded (a rank's copies)
  std::vector<py::object> keys;
  PyObject* to = value.copy.ptr();
  PyObject *key = nullptr, *v = nullptr;
  Py_ssize_t at = 0;
  while (PyDict_Next(to, &at, &key, &v)) {
    PyObject* now = item(from, key);
    int equal = now == v ? 1 : 0;
    if (!equal && now != nullptr && slot.kind == Kind::environ) {
      equal = PyObject_RichCompareBool(now, v, Py_EQ);
      if (equal < 0) throw py::error_already_set();
    }
    if (!equal) keys.push_back(py::reinterpret_borrow<py::object>(key));
  }
  at = 0;
  while (PyDict_Next(from, &at, &key, &v))
    if (item(to, key) == nullptr) keys.push_back(py::reinterpret_borrow<py::object>(key));
  value.differences.emplace_back(slot.in_place, std::move(keys));
  return value.differences.back().second;
}

void RankSlots::set(const Slot& slot, PyObject* key, const Value& value) {
  PyObject* dict = slot.dict.ptr();
  PyObject* want = item(value.copy.ptr(), key);
  if (slot.kind == Kind::environ) set_c_environment(key, want);
  if (want != nullptr)
    check(PyDict_SetItem(dict, key, want));
  else if (item(dict, key) != nullptr)
    check(PyDict_DelItem(dict, key));
}

void RankSlots::replace_all(const Slot& slot, const Value& value) {
  PyObject* dict = slot.dict.ptr();
  PyObject* copy = value.copy.ptr();
  if (slot.kind == Kind::environ) {  // the C library's variables first, where they differ
    PyObject *key = nullptr, *want = nullptr;
    Py_ssize_t at = 0;
    while (PyDict_Next(copy, &at, &key, &want)) {
      PyObject* now = item(dict, key);
      if (now == want) continue;
      const int equal = now == nullptr ? 0 : PyObject_RichCompareBool(now, want, Py_EQ);
      if (equal < 0) throw py::error_already_set();
      if (!equal) set_c_environment(key, want);
    }
    at = 0;
    while (PyDict_Next(dict, &at, &key, &want))
      if (item(copy, key) == nullptr) set_c_environment(key, nullptr);
  }
  PyDict_Clear(dict);
  check(PyDict_Update(dict, copy));
}

void RankSlots::save(int rank) {
  if (slots_.empty()) return;
  std::vector<Value>& values = values_[rank];
  values.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) save_slot(slots_[i], values[i]);
}

bool RankSlots::try_fast_swap(int leaving, int arriving) {
  if (!enabled_) return false;
  const auto found = values_.find(arriving);
  if (found == values_.end() || found->second.size() != slots_.size()) return false;
  for (const Value& v : found->second)
    if (!v.known) return false;
  if (PyDict_Size(PyImport_GetModuleDict()) != modules_count_) return false;  // an import
  save(leaving);
  std::vector<Value>& values = found->second;  // (a map: save() invalidated no iterator)
  for (std::size_t i = 0; i < slots_.size(); ++i) install_slot(slots_[i], values[i]);
  modules_count_ = PyDict_Size(PyImport_GetModuleDict());  // the arriving rank's modules in
  ++fast_swaps_;
  return true;
}

void RankSlots::after_python_swap(int arriving, const py::object& spec) {
  if (spec.is_none()) {
    slots_.clear();
    values_.clear();
    enabled_ = false;
    return;
  }
  const auto t = spec.cast<py::tuple>();
  for (const py::handle s : t[1]) add(s);
  std::vector<Value>& values = values_[arriving];
  values.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (values[i].known)
      install_slot(slots_[i], values[i]);  // newer than the Python swap's copy, if it ran fast
    else
      save_slot(slots_[i], values[i]);
  }
  modules_count_ = PyDict_Size(PyImport_GetModuleDict());
  enabled_ = t[0].cast<bool>();
}

}  // namespace twinccl::python
