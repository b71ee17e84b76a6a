// Settings, call log, violations, host "device" allocations and the control API (control.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "nccl_double/control.h"
#include "nccl_double/double.h"

namespace dbl {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, long> settings;
  std::vector<std::string> log;
  std::vector<std::string> violations;
  // By base. A freed allocation stays (use-after-free is reported) until calloc reuses its bytes:
  // then it moves to `reused`, so that it never shadows the live allocation that now holds them.
  std::map<char*, std::unique_ptr<Allocation>> allocations;
  std::vector<std::unique_ptr<Allocation>> reused;  // kept: queued work may still point at them
  std::atomic<int> next_thread{0};
};

Registry& reg() {
  static Registry* r = new Registry;  // never destroyed: stream threads may log at exit
  return *r;
}

thread_local int t_rank = -1;
thread_local int t_thread = -1;

std::size_t copy_out(const std::vector<std::string>& lines, char* out, std::size_t capacity) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  if (out != nullptr && capacity > 0) {
    const std::size_t n = std::min(all.size(), capacity - 1);
    std::memcpy(out, all.data(), n);
    out[n] = '\0';
  }
  return all.size() + 1;
}

}  // namespace

bool fast_mode() {
  static const bool fast = [] {
    const char* v = std::getenv("TWINCCL_DOUBLE_FAST");
    return v != nullptr && std::strtol(v, nullptr, 10) != 0;
  }();
  return fast;
}

long setting(const std::string& key, long fallback) {
  if (fast_mode()) {  // environment only, read once per thread and key
    thread_local std::map<std::string, std::optional<long>> cached;
    auto [it, fresh] = cached.try_emplace(key);
    if (fresh) {
      std::string var = "TWINCCL_DOUBLE_";
      for (char c : key) var += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
      if (const char* v = std::getenv(var.c_str())) it->second = std::strtol(v, nullptr, 10);
    }
    return it->second.value_or(fallback);
  }
  {
    std::lock_guard lock(reg().mutex);
    if (auto it = reg().settings.find(key); it != reg().settings.end()) return it->second;
  }
  std::string var = "TWINCCL_DOUBLE_";
  for (char c : key) var += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  const char* v = std::getenv(var.c_str());
  return v != nullptr ? std::strtol(v, nullptr, 10) : fallback;
}

// TWINCCL_DOUBLE_LOG_FILE=path: every log line is also appended there, for a test that runs a
// program (the CLI) on the double in another process. Called with the registry's mutex held.
void append_to_file(const std::string& line) {
  static const char* path = std::getenv("TWINCCL_DOUBLE_LOG_FILE");
  if (path == nullptr || *path == '\0') return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

void log_line(const std::string& line) {
  std::lock_guard lock(reg().mutex);
  reg().log.push_back(line);
  append_to_file(line);
}

void violation(const std::string& text) {
  std::lock_guard lock(reg().mutex);
  reg().violations.push_back(text);
  reg().log.push_back("VIOLATION " + text);
  append_to_file("VIOLATION " + text);
}

void set_thread_rank(int rank) { t_rank = rank; }

std::string thread_tag() {
  if (t_rank >= 0) return "rank " + std::to_string(t_rank);
  if (t_thread < 0) t_thread = reg().next_thread++;
  return "thread #" + std::to_string(t_thread);
}

Allocation* find_allocation(const void* p, std::size_t bytes, const std::string& what) {
  std::lock_guard lock(reg().mutex);
  const char* c = static_cast<const char*>(p);
  auto it = reg().allocations.upper_bound(const_cast<char*>(c));
  if (it != reg().allocations.begin()) {
    --it;
    Allocation* a = it->second.get();
    if (!a->freed && c >= a->base && c + bytes <= a->base + a->bytes) return a;
  }
  const std::string text = what + ": [" + std::to_string(reinterpret_cast<std::uintptr_t>(p)) +
                           ", +" + std::to_string(bytes) +
                           ") is not inside one live cudaMalloc allocation";
  reg().violations.push_back(text);
  reg().log.push_back("VIOLATION " + text);
  return nullptr;
}

Allocation* new_allocation(std::size_t bytes) {
  auto a = std::make_unique<Allocation>();
  a->bytes = bytes;
  a->base = static_cast<char*>(std::calloc(bytes == 0 ? 1 : bytes, 1));
  std::lock_guard lock(reg().mutex);
  Allocation* raw = a.get();
  auto& all = reg().allocations;
  const char* end = a->base + std::max<std::size_t>(bytes, 1);
  for (auto it = all.lower_bound(a->base); it != all.end() && it->first < end;) {
    reg().reused.push_back(std::move(it->second));  // freed: its bytes are this allocation's now
    it = all.erase(it);
  }
  all[a->base] = std::move(a);
  return raw;
}

cudaError_t free_allocation(void* p) {
  if (p == nullptr) return cudaSuccess;
  Allocation* a = nullptr;
  {
    std::lock_guard lock(reg().mutex);
    auto it = reg().allocations.find(static_cast<char*>(p));
    if (it == reg().allocations.end() || it->second->freed) return cudaErrorInvalidValue;
    a = it->second.get();
    a->freed = true;
  }
  if (a->in_use.load() > 0) {
    // Real cudaFree synchronises the device: an unbounded host wait on a peer's kernel.
    violation(thread_tag() +
              ": cudaFree of a buffer that queued stream work still uses (CUDA would block "
              "the host until it finished: an unbounded wait)");
    return cudaSuccess;  // leaked: the stream thread still touches it
  }
  std::free(a->base);
  return cudaSuccess;
}

namespace {
thread_local bool t_launched_collective = false;
}

void note_collective_launched() { t_launched_collective = true; }

void check_allocation_allowed(std::size_t bytes) {
  if (!t_launched_collective || setting("allocate_before_collectives", 0) == 0) return;
  violation(thread_tag() + ": cudaMalloc of " + std::to_string(bytes) + " bytes on GPU " +
            std::to_string(current_device()) +
            " after this rank launched a collective (several ranks on one GPU, NCCL >= 2.30: "
            "allocate every buffer before the first collective; cudaMalloc/cudaFree synchronise "
            "the device and can deadlock against a peer's spinning kernel)");
}

}  // namespace dbl

DOUBLE_EXPORT void twinccl_double_set(const char* key, long value) {
  std::lock_guard lock(dbl::reg().mutex);
  dbl::reg().settings[key] = value;
}

DOUBLE_EXPORT std::size_t twinccl_double_log(char* out, std::size_t capacity) {
  std::lock_guard lock(dbl::reg().mutex);
  return dbl::copy_out(dbl::reg().log, out, capacity);
}

DOUBLE_EXPORT std::size_t twinccl_double_violations(char* out, std::size_t capacity) {
  std::lock_guard lock(dbl::reg().mutex);
  return dbl::copy_out(dbl::reg().violations, out, capacity);
}

DOUBLE_EXPORT void twinccl_double_clear() {
  std::lock_guard lock(dbl::reg().mutex);
  dbl::reg().log.clear();
  dbl::reg().violations.clear();
}

DOUBLE_EXPORT int twinccl_double_user_kernel(cudaStream_t stream, void (*fn)(void*), void* arg,
                                             int delay_ms) {
  dbl::Stream* s = dbl::stream_of(stream);
  const std::uint64_t at = s->enqueue([fn, arg, delay_ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    fn(arg);
  });
  dbl::note_user_work(
      s, at, "user kernel #" + std::to_string(at) + " on stream " + std::to_string(s->id()));
  dbl::log_line(dbl::thread_tag() + " user_kernel stream=" + std::to_string(s->id()) +
                " delay_ms=" + std::to_string(delay_ms));
  return 0;
}
