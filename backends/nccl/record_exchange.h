// RecordExchange: fixed-size host records moved between ranks of a communicator by NCCL calls on
// its stream, waited for with the communicator's timeout; split's name agreement (one
// ncclAllGather, split_names.cc) and subcommunicator's requests and id (ncclSend/ncclRecv,
// subcommunicator.cc). The launcher's store is gone by then, so the parent carries them.
//
//   RecordExchange x(parent, scratch, caller_stream, "split", 4, where, sizeof(Record), n);
//   x.put(0, &mine);
//   x.run([&] { return api().ncclAllGather(x.slot(0), x.slot(1), ...); }, "exchanging names");
//   x.get(r, &theirs);
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>

#include "nccl/context.h"
#include "nccl/rank_scratch.h"
#include "twinccl/buffer.h"

namespace twinccl::nccl {

// FNV-1a 64 of `bytes` bytes: records carry long names and rank lists by length and hash.
std::uint64_t fnv1a(const void* data, std::size_t bytes);

class RecordExchange {
 public:
  // `slots` records of `bytes` each in device memory on the parent's GPU: leased from the rank's
  // scratch (rank_scratch.h: no cudaMalloc/cudaFree mid-run), else allocated for this exchange
  // when the lease does not fit. A slot holds what was last put or received into it. `op` (a
  // string literal) and `number` name the operation in messages ("split #4").
  RecordExchange(std::shared_ptr<CommContext> parent, const std::shared_ptr<RankScratch>& scratch,
                 cudaStream_t caller, std::string_view op, std::uint64_t number,
                 std::source_location where, std::size_t bytes, std::size_t slots);
  void put(std::size_t i, const void* record);
  void get(std::size_t i, void* record);
  void* slot(std::size_t i);  // the device address of record i
  // Orders the parent's stream after the caller's and this thread's last launch, runs `calls`
  // (NCCL calls on the parent's comm and stream; their first error, or ncclSuccess/InProgress),
  // and waits until they are done (TimeoutError past the timeout, AbortedError on abort).
  // Messages: "split #4 on comm 'world' rank 3 (f.cc:9): <doing>".
  void run(const std::function<ncclResult_t()>& calls, std::string_view doing);

 private:
  std::shared_ptr<CommContext> parent_;
  cudaStream_t caller_;
  std::string_view op_;
  std::uint64_t number_;
  std::source_location where_;
  std::size_t bytes_;
  std::size_t slots_;
  RankScratch::Lease lease_;
  std::shared_ptr<Memory> own_;  // when the lease got nothing
  char* data_;
};

}  // namespace twinccl::nccl
