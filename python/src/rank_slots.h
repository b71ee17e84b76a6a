// The rank baton's fast hand-over (rank_baton.h): the parts of a rank's process state that are
// plain memory (the random generators' words) or entries of dicts (os.environ, sys.argv,
// torch.distributed's globals, the user's module globals) are saved and installed here, in C++,
// and a hand-over calls no Python at all when nothing else can have changed.
//
//   RankSlots slots;                                 // one per baton; GIL held in every call
//   if (!slots.try_fast_swap(leaving, arriving)) {
//     slots.save(leaving);
//     py::object spec = swap(leaving, arriving);     // twinccl/_rank_state.py, the authority
//     slots.after_python_swap(arriving, spec);       // arriving's newest values on top
//   }
//
// How it stays exact: _rank_state.py's swap is the authority; after each of its swaps it says
// which slots the state has (`spec`, see after_python_swap) and whether every part of it is in
// slots (a generator whose layout was not found: then every hand-over is Python's). The slots keep
// each rank's newest values: every hand-over saves the leaving rank's slots first (the Python
// swap's copies of a rank that ran under fast hand-overs may be older, so after a Python swap the
// arriving rank's slot values are installed on top of what it installed). A fast hand-over needs:
// every part in slots, the arriving rank's values known, and sys.modules of the size it had (an
// import calls Python).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace twinccl::python {

class RankSlots {
 public:
  // GIL held. false: the Python swap must run (save(leaving) first, after_python_swap after).
  bool try_fast_swap(int leaving, int arriving);
  void save(int rank);  // the rank's values from what is in place (-1: the caller's)
  // `spec` is what the Python swap returned: None (no slots: every hand-over is Python's) or
  // (enabled, new_slots): new_slots lists slots not described before, each ("memory", address,
  // bytes, owner: an object that keeps the memory alive), ("keys", dict, (key, ...)[, changed]),
  // ("attributes", object, (name, ...)), ("dict", dict) or ("environ", os.environ._data). Slots are
  // never dropped (they hold the newest values). `changed` (None or a callable): called with no
  // arguments after an install that replaced a key's value by one not equal (==) to it (the
  // warnings filters' version bump, _rank_warnings.py).
  void after_python_swap(int arriving, const pybind11::object& spec);
  std::uint64_t fast_swaps() const { return fast_swaps_; }

 private:
  enum class Kind { memory, keys, attributes, dict, environ };
  struct Slot {
    Kind kind = Kind::memory;
    std::uintptr_t address = 0;
    std::size_t bytes = 0;
    pybind11::object dict;  // memory: its owner; attributes: the object
    std::vector<pybind11::object> keys;
    pybind11::object changed;            // keys: called when an install changed a value (else null)
    pybind11::object in_place;           // dict, environ: the copy whose contents it holds
    std::uint64_t in_place_version = 0;  // ... while its version tag is this one
  };
  struct Value {
    bool known = false;
    std::string memory;                   // memory
    std::vector<pybind11::object> items;  // keys: one per key (None-less: a null handle = absent)
    pybind11::object copy;                // dict, environ: the contents
    std::uint64_t version = 0;            // dict, environ: the dict's version tag when in place
    // dict, environ: the keys where another copy (in place before this one) differs from `copy`
    std::vector<std::pair<pybind11::object, std::vector<pybind11::object>>> differences;
  };
  void add(const pybind11::handle& spec);
  void save_slot(Slot& slot, Value& value);
  void install_slot(Slot& slot, Value& value);
  const std::vector<pybind11::object>& differences(const Slot& slot, Value& value);
  void set(const Slot& slot, PyObject* key, const Value& value);  // one key as in value.copy
  void replace_all(const Slot& slot, const Value& value);
  std::vector<Slot> slots_;
  std::map<int, std::vector<Value>> values_;  // rank (-1: the caller) -> one per slot
  bool enabled_ = false;
  std::ptrdiff_t modules_count_ = -1;  // len(sys.modules) after the last install
  std::uint64_t fast_swaps_ = 0;
};

}  // namespace twinccl::python
