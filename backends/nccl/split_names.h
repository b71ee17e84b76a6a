// The split-name rule on NCCL (twinccl/split_names.h): the ranks of one color must pass the same
// name to split, as on the emulator.
//
//   std::string why = split_name_disagreement(ctx, scratch, caller_stream, 4, color, key, asked,
//                                             where);
//   if (!why.empty()) { /* take part in ncclCommSplit as NCCL_SPLIT_NOCOLOR, then */
//                       throw MismatchError(why); }
//
// How it works: NCCL's own bootstrap exchange of (color, key) inside ncclCommSplit takes no user
// data, and the launcher's store is gone once the unique id is read (or never existed: one process
// of GPU threads). So every rank's (color, key, name, call site) goes to every rank of the parent
// in one extra ncclAllGather of 256-byte records (in the rank's scratch) on the parent's stream,
// waited on (bounded) before ncclCommSplit: 256 x size bytes, one small collective per split, which
// NCCL makes a collective of the parent anyway. A name longer than the record's 160 bytes is
// compared by its length and a 64-bit hash of the whole name beyond those bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>

#include "nccl/context.h"
#include "nccl/rank_scratch.h"

namespace twinccl::nccl {

// "" when the ranks of `color` (kNoColor: none) agree on the name; else the MismatchError text.
// Every rank of the parent must call it (it is a collective); it throws what a collective throws
// (TimeoutError past the timeout, AbortedError when a rank failed).
std::string split_name_disagreement(const std::shared_ptr<CommContext>& parent,
                                    const std::shared_ptr<RankScratch>& scratch,
                                    cudaStream_t caller_stream, std::uint64_t split_number,
                                    int color, int key, const std::string& asked,
                                    std::source_location where);

}  // namespace twinccl::nccl
