// Run-time loading of the CUDA runtime and NCCL (see loader.h).
//
// How it works: dlopen(RTLD_NOW | RTLD_LOCAL) each library (the first default soname that
// opens, or exactly the path from the environment), dlsym every entry point into Api, then ask
// ncclGetVersion. Everything missing is collected and reported in one BackendError. The table
// is published through an atomic pointer: api() costs one acquire load once loaded.
#include "nccl/loader.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "nccl/check.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

struct Opened {
  void* handle = nullptr;
  std::string path;
};

// Tries `explicit_path` alone, or each default in turn; the error lists every attempt.
Opened open_library(const char* what, const char* variable, const std::string& explicit_path,
                    const std::vector<std::string>& defaults) {
  const std::vector<std::string> candidates =
      explicit_path.empty() ? defaults : std::vector{explicit_path};
  std::string tried;
  for (const std::string& path : candidates) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return {handle, path};
    const char* why = dlerror();
    tried += "\n  dlopen(\"" + path + "\"): " + (why ? why : "unknown error");
  }
  throw BackendError(std::string("TWINCCL_BACKEND=nccl needs ") + what +
                     ", which could not be loaded:" + tried + "\n  set " + variable +
                     " to the library's full path" +
                     (explicit_path.empty() ? "" : " (it is set: is the path right?)"));
}

template <class Fn>
void bind(void* handle, const char* name, Fn& slot, std::vector<std::string>* missing) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    if (missing != nullptr) missing->push_back(name);
    return;
  }
  static_assert(sizeof(Fn) == sizeof(void*));
  std::memcpy(&slot, &symbol, sizeof slot);  // POSIX: object and function pointers share a size
}

void bind_cuda(void* h, Api& a, std::vector<std::string>& m) {
  bind(h, "cudaGetDeviceCount", a.cudaGetDeviceCount, &m);
  bind(h, "cudaGetDevice", a.cudaGetDevice, &m);
  bind(h, "cudaSetDevice", a.cudaSetDevice, &m);
  bind(h, "cudaDeviceGetAttribute", a.cudaDeviceGetAttribute, &m);
  bind(h, "cudaGetLastError", a.cudaGetLastError, &m);
  bind(h, "cudaGetErrorName", a.cudaGetErrorName, &m);
  bind(h, "cudaGetErrorString", a.cudaGetErrorString, &m);
  bind(h, "cudaRuntimeGetVersion", a.cudaRuntimeGetVersion, &m);
  bind(h, "cudaDriverGetVersion", a.cudaDriverGetVersion, &m);
  bind(h, "cudaStreamCreateWithFlags", a.cudaStreamCreateWithFlags, &m);
  bind(h, "cudaStreamDestroy", a.cudaStreamDestroy, &m);
  bind(h, "cudaStreamQuery", a.cudaStreamQuery, &m);
  bind(h, "cudaStreamWaitEvent", a.cudaStreamWaitEvent, &m);
  bind(h, "cudaEventCreateWithFlags", a.cudaEventCreateWithFlags, &m);
  bind(h, "cudaEventDestroy", a.cudaEventDestroy, &m);
  bind(h, "cudaEventRecord", a.cudaEventRecord, &m);
  bind(h, "cudaEventQuery", a.cudaEventQuery, &m);
  bind(h, "cudaEventElapsedTime", a.cudaEventElapsedTime, &m);
  bind(h, "cudaMalloc", a.cudaMalloc, &m);
  bind(h, "cudaFree", a.cudaFree, &m);
  bind(h, "cudaMemsetAsync", a.cudaMemsetAsync, &m);
  bind(h, "cudaMemcpyAsync", a.cudaMemcpyAsync, &m);
  bind(h, "cudaStreamBeginCapture", a.cudaStreamBeginCapture, &m);
  bind(h, "cudaStreamEndCapture", a.cudaStreamEndCapture, &m);
  bind(h, "cudaGraphInstantiateWithFlags", a.cudaGraphInstantiateWithFlags, &m);
  bind(h, "cudaGraphLaunch", a.cudaGraphLaunch, &m);
  bind(h, "cudaGraphExecDestroy", a.cudaGraphExecDestroy, &m);
  bind(h, "cudaGraphDestroy", a.cudaGraphDestroy, &m);
}

void bind_nccl(void* h, Api& a, std::vector<std::string>& m) {
  bind(h, "ncclGetVersion", a.ncclGetVersion, &m);
  bind(h, "ncclGetUniqueId", a.ncclGetUniqueId, &m);
  bind(h, "ncclCommInitRankConfig", a.ncclCommInitRankConfig, &m);
  bind(h, "ncclCommSplit", a.ncclCommSplit, &m);
  bind(h, "ncclCommFinalize", a.ncclCommFinalize, &m);
  bind(h, "ncclCommDestroy", a.ncclCommDestroy, &m);
  bind(h, "ncclCommAbort", a.ncclCommAbort, &m);
  bind(h, "ncclCommGetAsyncError", a.ncclCommGetAsyncError, &m);
  bind(h, "ncclCommUserRank", a.ncclCommUserRank, &m);
  bind(h, "ncclCommCount", a.ncclCommCount, &m);
  bind(h, "ncclGetErrorString", a.ncclGetErrorString, &m);
  bind(h, "ncclGetLastError", a.ncclGetLastError, &m);
  bind(h, "ncclGroupStart", a.ncclGroupStart, &m);
  bind(h, "ncclGroupEnd", a.ncclGroupEnd, &m);
  bind(h, "ncclAllReduce", a.ncclAllReduce, &m);
  bind(h, "ncclReduceScatter", a.ncclReduceScatter, &m);
  bind(h, "ncclAllGather", a.ncclAllGather, &m);
  bind(h, "ncclBroadcast", a.ncclBroadcast, &m);
  bind(h, "ncclReduce", a.ncclReduce, &m);
  bind(h, "ncclSend", a.ncclSend, &m);
  bind(h, "ncclRecv", a.ncclRecv, &m);
  bind(h, "ncclRedOpCreatePreMulSum", a.ncclRedOpCreatePreMulSum, &m);
  bind(h, "ncclRedOpDestroy", a.ncclRedOpDestroy, &m);
  bind(h, "ncclAlltoAll", a.ncclAlltoAll, nullptr);
  bind(h, "ncclGather", a.ncclGather, nullptr);
  bind(h, "ncclScatter", a.ncclScatter, nullptr);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::mutex g_mutex;
std::atomic<const Api*> g_api{nullptr};
std::vector<std::unique_ptr<Api>> g_tables;  // every table ever published (never freed)

}  // namespace

LibraryPaths library_paths_from_environment() {
  return {env("TWINCCL_CUDART_LIBRARY"), env("TWINCCL_NCCL_LIBRARY")};
}

const Api& load_api(const LibraryPaths& paths) {
  auto table = std::make_unique<Api>();
  const Opened cudart =
      open_library("the CUDA runtime (libcudart, CUDA 12 or 13)", "TWINCCL_CUDART_LIBRARY",
                   paths.cudart, {"libcudart.so.13", "libcudart.so.12"});
  const Opened nccl = open_library("NCCL (libnccl.so.2, >= 2.19)", "TWINCCL_NCCL_LIBRARY",
                                   paths.nccl, {"libnccl.so.2"});
  table->cudart_path = cudart.path;
  table->nccl_path = nccl.path;
  std::vector<std::string> missing_cuda;
  std::vector<std::string> missing_nccl;
  bind_cuda(cudart.handle, *table, missing_cuda);
  bind_nccl(nccl.handle, *table, missing_nccl);
  if (!missing_cuda.empty() || !missing_nccl.empty()) {
    std::string message =
        "TWINCCL_BACKEND=nccl: the loaded libraries lack entry points TwinCCL needs:";
    if (!missing_cuda.empty()) message += "\n  " + cudart.path + ": " + join(missing_cuda);
    if (!missing_nccl.empty()) message += "\n  " + nccl.path + ": " + join(missing_nccl);
    throw BackendError(message + "\n  (TwinCCL needs CUDA runtime 12 or 13 and NCCL >= 2.19.0)");
  }
  if (table->ncclGetVersion(&table->nccl_version) != ncclSuccess) {
    throw BackendError("TWINCCL_BACKEND=nccl: ncclGetVersion failed in " + nccl.path);
  }
  if (table->nccl_version < kMinimumNcclVersion) {
    throw BackendError("TWINCCL_BACKEND=nccl: " + nccl.path + " is " +
                       nccl_version_text(table->nccl_version) + "; TwinCCL needs " +
                       nccl_version_text(kMinimumNcclVersion) +
                       " or newer (set TWINCCL_NCCL_LIBRARY to a newer libnccl.so.2)");
  }
  if (table->nccl_version < kAlltoAllNcclVersion) {  // the symbols may exist as stubs before 2.28.3
    table->ncclAlltoAll = nullptr;
    table->ncclGather = nullptr;
    table->ncclScatter = nullptr;
  }
  std::lock_guard lock(g_mutex);
  g_tables.push_back(std::move(table));
  return *g_tables.back();
}

const Api& api() {
  if (const Api* loaded = g_api.load(std::memory_order_acquire)) return *loaded;
  static std::mutex first_load;
  std::lock_guard lock(first_load);
  if (const Api* loaded = g_api.load(std::memory_order_acquire)) return *loaded;
  const Api& table = load_api(library_paths_from_environment());
  g_api.store(&table, std::memory_order_release);
  return table;
}

void use_libraries(const LibraryPaths& paths) {
  const Api& table = load_api(paths);
  g_api.store(&table, std::memory_order_release);
}

}  // namespace twinccl::nccl
