// The CUDA runtime and NCCL, loaded at run time (dlopen) instead of linked: a TwinCCL program
// starts and runs the emulator on a machine with no CUDA driver or libraries at all.
//
//   const Api& a = api();                        // loads once; BackendError naming what is missing
//   a.cudaMalloc(&p, bytes);  a.ncclAllReduce(...);
//   if (a.ncclAlltoAll == nullptr) { ...grouped send/recv... }  // NCCL < 2.28.3
//
// Which libraries: TWINCCL_CUDART_LIBRARY (default libcudart.so.13, then libcudart.so.12) and
// TWINCCL_NCCL_LIBRARY (default libnccl.so.2), read here only when the NCCL backend first needs
// them (the emulator never does). The recording test double of tests/backends/nccl_double is
// loaded the same way, by pointing both variables at it.
//
// Only headers are used at build time. Every entry point used below exists, with this signature,
// in CUDA runtime 12 and 13 and NCCL >= 2.19 (kMinimumNcclVersion); ncclAlltoAll, ncclGather and
// ncclScatter are optional (NCCL >= 2.28.3) and null when absent.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace twinccl::nccl {

inline constexpr int kMinimumNcclVersion = 21900;   // ncclConfig_t::commName, ncclCommSplit
inline constexpr int kAlltoAllNcclVersion = 22803;  // ncclAlltoAll, ncclGather, ncclScatter

struct Api {
  // ---- CUDA runtime
  decltype(&::cudaGetDeviceCount) cudaGetDeviceCount = nullptr;
  decltype(&::cudaGetDevice) cudaGetDevice = nullptr;
  decltype(&::cudaSetDevice) cudaSetDevice = nullptr;
  decltype(&::cudaDeviceGetAttribute) cudaDeviceGetAttribute = nullptr;
  decltype(&::cudaGetLastError) cudaGetLastError = nullptr;
  decltype(&::cudaGetErrorName) cudaGetErrorName = nullptr;
  decltype(&::cudaGetErrorString) cudaGetErrorString = nullptr;
  decltype(&::cudaRuntimeGetVersion) cudaRuntimeGetVersion = nullptr;
  decltype(&::cudaDriverGetVersion) cudaDriverGetVersion = nullptr;
  decltype(&::cudaStreamCreateWithFlags) cudaStreamCreateWithFlags = nullptr;
  decltype(&::cudaStreamDestroy) cudaStreamDestroy = nullptr;
  decltype(&::cudaStreamQuery) cudaStreamQuery = nullptr;
  decltype(&::cudaStreamWaitEvent) cudaStreamWaitEvent = nullptr;
  decltype(&::cudaEventCreateWithFlags) cudaEventCreateWithFlags = nullptr;
  decltype(&::cudaEventDestroy) cudaEventDestroy = nullptr;
  decltype(&::cudaEventRecord) cudaEventRecord = nullptr;
  decltype(&::cudaEventQuery) cudaEventQuery = nullptr;
  decltype(&::cudaEventElapsedTime) cudaEventElapsedTime = nullptr;
  cudaError_t (*cudaMalloc)(void**, size_t) = nullptr;  // the C entry point (C++ adds overloads)
  decltype(&::cudaFree) cudaFree = nullptr;
  decltype(&::cudaMemsetAsync) cudaMemsetAsync = nullptr;
  decltype(&::cudaMemcpyAsync) cudaMemcpyAsync = nullptr;
  // CUDA graphs (perf -G, as nccl-tests: capture -n iterations once, launch the graph N times)
  decltype(&::cudaStreamBeginCapture) cudaStreamBeginCapture = nullptr;
  decltype(&::cudaStreamEndCapture) cudaStreamEndCapture = nullptr;
  decltype(&::cudaGraphInstantiateWithFlags) cudaGraphInstantiateWithFlags = nullptr;
  decltype(&::cudaGraphLaunch) cudaGraphLaunch = nullptr;
  decltype(&::cudaGraphExecDestroy) cudaGraphExecDestroy = nullptr;
  decltype(&::cudaGraphDestroy) cudaGraphDestroy = nullptr;
  // ---- NCCL
  decltype(&::ncclGetVersion) ncclGetVersion = nullptr;
  decltype(&::ncclGetUniqueId) ncclGetUniqueId = nullptr;
  decltype(&::ncclCommInitRankConfig) ncclCommInitRankConfig = nullptr;
  decltype(&::ncclCommSplit) ncclCommSplit = nullptr;
  decltype(&::ncclCommFinalize) ncclCommFinalize = nullptr;
  decltype(&::ncclCommDestroy) ncclCommDestroy = nullptr;
  decltype(&::ncclCommAbort) ncclCommAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) ncclCommGetAsyncError = nullptr;
  decltype(&::ncclCommUserRank) ncclCommUserRank = nullptr;
  decltype(&::ncclCommCount) ncclCommCount = nullptr;
  decltype(&::ncclGetErrorString) ncclGetErrorString = nullptr;
  decltype(&::ncclGetLastError) ncclGetLastError = nullptr;
  decltype(&::ncclGroupStart) ncclGroupStart = nullptr;
  decltype(&::ncclGroupEnd) ncclGroupEnd = nullptr;
  decltype(&::ncclAllReduce) ncclAllReduce = nullptr;
  decltype(&::ncclReduceScatter) ncclReduceScatter = nullptr;
  decltype(&::ncclAllGather) ncclAllGather = nullptr;
  decltype(&::ncclBroadcast) ncclBroadcast = nullptr;
  decltype(&::ncclReduce) ncclReduce = nullptr;
  decltype(&::ncclSend) ncclSend = nullptr;
  decltype(&::ncclRecv) ncclRecv = nullptr;
  decltype(&::ncclRedOpCreatePreMulSum) ncclRedOpCreatePreMulSum = nullptr;
  decltype(&::ncclRedOpDestroy) ncclRedOpDestroy = nullptr;
  // ---- optional: null when the library lacks them or reports a version before 2.28.3
  decltype(&::ncclAlltoAll) ncclAlltoAll = nullptr;
  decltype(&::ncclGather) ncclGather = nullptr;
  decltype(&::ncclScatter) ncclScatter = nullptr;

  int nccl_version = 0;     // ncclGetVersion
  std::string cudart_path;  // what dlopen was given, as loaded
  std::string nccl_path;
};

struct LibraryPaths {
  std::string cudart;  // empty: libcudart.so.13, then libcudart.so.12
  std::string nccl;    // empty: libnccl.so.2
};

// TWINCCL_CUDART_LIBRARY and TWINCCL_NCCL_LIBRARY (empty when unset).
LibraryPaths library_paths_from_environment();

// Loads both libraries and resolves every entry point. Throws BackendError naming the library
// path(s) tried, dlerror's text, the missing symbols or the version found and the one needed.
// Libraries are never unloaded (NCCL keeps threads), so the table stays valid for the process.
const Api& load_api(const LibraryPaths& paths);

// The process-wide table: loaded once from the environment on first use (thread-safe; a failed
// load is not cached, so the next call tries again and throws the same clear error).
const Api& api();

// Tests only: make api() use these libraries from now on (the recording double, say). Must not
// be called while a communicator of the previous table is alive.
void use_libraries(const LibraryPaths& paths);

}  // namespace twinccl::nccl
