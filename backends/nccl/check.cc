// NCCL/CUDA return codes to typed errors (see check.h).
#include "nccl/check.h"

#include "twinccl/errors.h"

namespace twinccl::nccl {

void throw_nccl_error(ncclResult_t result, ncclComm_t comm, std::string_view what) {
  std::string message = std::string(what) + ": NCCL error " +
                        std::to_string(static_cast<int>(result)) + " '" +
                        api().ncclGetErrorString(result) + "'";
  const char* last = api().ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') message += " (" + std::string(last) + ")";
  if (result == ncclInvalidArgument || result == ncclInvalidUsage) throw InvalidArgument(message);
  throw BackendError(message);
}

void throw_cuda_error(cudaError_t result, std::string_view what) {
  throw BackendError(std::string(what) + ": CUDA error " + api().cudaGetErrorName(result) + ": " +
                     api().cudaGetErrorString(result));
}

std::string nccl_version_text(int code) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
  const bool wide = code >= 10000;
  const int major = wide ? code / 10000 : code / 1000;
  const int minor = wide ? (code % 10000) / 100 : (code % 1000) / 100;
  const int patch = code % 100;
  return "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

}  // namespace twinccl::nccl
