// Enqueueing one validated OpDesc as NCCL calls on a stream.
//
//   EnqueueTarget t{comm, stream, rank, size, &name};
//   enqueue(op, t, scratch, reduce_ops);   // may open/close an internal ncclGroupStart/End
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "twinccl/operation.h"

namespace twinccl::nccl {

struct EnqueueTarget {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int size = 1;
  const std::string* comm_name = nullptr;
  std::uint64_t op_number = 0;
};

// "all_gather_v #4 on comm 'world' rank 2 (file.cc:10)" for error messages.
std::string describe(const OpDesc& op, const EnqueueTarget& t);

// Issues `op`. premul_sum reduce ops it creates are appended to `reduce_ops`; the caller destroys
// them once the outermost group ended. `barrier_scratch`: 4 device bytes (barrier only).
void enqueue(const OpDesc& op, const EnqueueTarget& t, void* barrier_scratch,
             std::vector<ncclRedOp_t>& reduce_ops);

// ---- grouped point-to-point forms (uneven.cc); counts/displacements in elements, size() entries.
// Empty displacements = packed in rank order. Transfers of 0 elements are skipped on both sides;
// a rank's transfer to itself is skipped when source and destination are the same bytes.
void enqueue_all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                          std::span<const std::size_t> send_displs, void* recv,
                          std::span<const std::size_t> recv_counts,
                          std::span<const std::size_t> recv_displs, DataType dtype,
                          const EnqueueTarget& t, const OpDesc& op);
void enqueue_all_gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                          std::span<const std::size_t> displs, DataType dtype,
                          const EnqueueTarget& t, const OpDesc& op);
void enqueue_gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                      std::span<const std::size_t> displs, DataType dtype, int root,
                      const EnqueueTarget& t, const OpDesc& op);
void enqueue_scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                       std::span<const std::size_t> displs, DataType dtype, int root,
                       const EnqueueTarget& t, const OpDesc& op);
// One ncclReduce per rank's block (root = the block's owner), all in one group.
void enqueue_reduce_scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                              std::span<const std::size_t> displs, DataType dtype,
                              ncclRedOp_t reduce_op, const EnqueueTarget& t, const OpDesc& op);

}  // namespace twinccl::nccl
