// Control API of the recording NCCL/CUDA test double, and the tests' handle on it.
//
//   nccl_double::use();                        // api() now loads the double for CUDA and NCCL
//   ... run ranks through the real backend ...
//   CHECK(nccl_double::violations().empty());  // what NCCL/CUDA would have refused or raced on
//   CHECK(nccl_double::log_has("ncclAllReduce count=7"));
//
// This checks how TwinCCL maps its calls onto NCCL and CUDA; it does not test NCCL itself.
// Settings (twinccl_double_set or TWINCCL_DOUBLE_<KEY> in the environment):
//   device_count (8), sm_major (9), nccl_version (22809), driver_version (13000),
//   runtime_version (13000), device_count_error (0: a cudaError_t to return instead),
//   in_progress_polls (2: ncclCommGetAsyncError answers ncclInProgress that many times after a
//   non-blocking init/split/finalize/collective; 0: a collective answers ncclSuccess at once),
//   reject_duplicate_gpu (1 before NCCL 2.30),
//   allocate_before_collectives (0: 1 makes a cudaMalloc by a rank after it launched a collective
//   a violation: NCCL's rule for several ranks on one GPU),
//   init_alone (0: 1 makes an init of more than one rank log "pid P ncclCommInitRankConfig rank=R
//   nranks=N device=D id=PID.K" (PID: the process that made the id) and fail at once, for
//   processes started by a launcher, which cannot meet in this in-process double),
//   init_alone_wait_ms (0: that long at most, the refusal waits until every rank of the id logged
//   its init in TWINCCL_DOUBLE_LOG_FILE, since torchrun stops the other processes once one fails).
// TWINCCL_DOUBLE_LOG_FILE=path appends every log line to that file too (a program on the double).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

extern "C" {
void twinccl_double_set(const char* key, long value);
std::size_t twinccl_double_log(char* out, std::size_t capacity);         // returns bytes needed
std::size_t twinccl_double_violations(char* out, std::size_t capacity);  // returns bytes needed
void twinccl_double_clear();
// Queues a stand-in for the user's kernel on `stream`: sleeps delay_ms, then calls fn(arg).
int twinccl_double_user_kernel(cudaStream_t stream, void (*fn)(void*), void* arg, int delay_ms);
}

#if defined(TWINCCL_NCCL_DOUBLE_PATH)
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "nccl/loader.h"

namespace nccl_double {

inline void* handle() {
  static void* h = [] {
    void* opened = dlopen(TWINCCL_NCCL_DOUBLE_PATH, RTLD_NOW | RTLD_LOCAL);
    if (opened == nullptr)
      throw std::runtime_error(std::string("cannot load the NCCL double: ") + dlerror());
    return opened;
  }();
  return h;
}

template <class Fn>
Fn* symbol(const char* name) {
  void* p = dlsym(handle(), name);
  if (p == nullptr) throw std::runtime_error(std::string("NCCL double lacks ") + name);
  return reinterpret_cast<Fn*>(p);
}

// Points the backend's run-time loading at the double (both libraries) and clears its records.
inline void use() {
  twinccl::nccl::use_libraries({TWINCCL_NCCL_DOUBLE_PATH, TWINCCL_NCCL_DOUBLE_PATH});
  symbol<void()>("twinccl_double_clear")();
}

inline void set(const char* key, long value) {
  symbol<void(const char*, long)>("twinccl_double_set")(key, value);
}

inline std::string read(const char* fn) {
  auto get = symbol<std::size_t(char*, std::size_t)>(fn);
  std::string out(get(nullptr, 0), '\0');
  get(out.data(), out.size());
  out.resize(out.size() - 1);
  return out;
}

inline std::string log() { return read("twinccl_double_log"); }
inline std::string violations() { return read("twinccl_double_violations"); }
inline bool log_has(const std::string& text) { return log().find(text) != std::string::npos; }
inline std::size_t log_count(const std::string& text) {
  const std::string all = log();
  std::size_t n = 0;
  for (std::size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++n;
  return n;
}

inline void user_kernel(cudaStream_t stream, void (*fn)(void*), void* arg, int delay_ms) {
  symbol<int(cudaStream_t, void (*)(void*), void*, int)>("twinccl_double_user_kernel")(
      stream, fn, arg, delay_ms);
}

}  // namespace nccl_double
#endif
