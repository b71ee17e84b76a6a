// The table of linked backends: the emulator, then whatever registered itself (backend_registry.h).
#include "backend_registry.h"

#include <deque>
#include <mutex>

#include "emu/launch.h"

namespace twinccl::backends {
namespace {

struct Table {
  std::mutex mutex;
  std::deque<Backend> entries{{"emu", &emu_backend::run_emulated}};  // append keeps references
};

// Built on first use: registrations run during static initialization, in any order.
Table& table() {
  static Table t;
  return t;
}

}  // namespace

bool add(const Backend& backend) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const Backend& b : t.entries) {
    if (b.name == backend.name) return true;
  }
  t.entries.push_back(backend);
  return true;
}

const Backend* find(std::string_view name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const Backend& b : t.entries) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string linked_names() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::string names;
  for (const Backend& b : t.entries) names += (names.empty() ? "" : ", ") + std::string(b.name);
  return names;
}

}  // namespace twinccl::backends
