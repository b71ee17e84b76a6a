// NCCL's one-rank reduction kernel leaves the last elements of some calls unwritten; the pieces
// a call is issued in so that every element is written.
//
//   for (const OnePiece& p : one_rank_pieces(op, size)) ncclAllReduce(send + p.first, ...);
//
// What NCCL does (src/device/onerank.cu and ncclLaunchOneRank in src/enqueue.cc, 2.19 .. 2.28.9):
// with one rank, a reduction whose device op is PreMulSum (premul_sum on any type, avg on the
// floating types) runs oneRankReduce on grid = min(32, ceil(bytes / 16 KiB)) blocks; block b
// writes [b * a, (b + 1) * a) with a = alignUp(floor(n / grid), 16 bytes' elements), so the
// elements from grid * a to n are never written when grid * a < n. Seen on an H100 and an H200
// with NCCL 2.28.9: 1 of 1048577 float32, 1 of 4099 float64 left as they were (gpu_checks).
// Every other call (other ops, integer avg, more than one rank) is one piece.
//
// How it works: pieces the kernel covers exactly, whatever the NCCL version: when the call is
// over 512 KiB, a first piece of a multiple of 32 x 16 bytes (grid 32, a = piece / 32 exactly)
// and the rest (< 512 bytes: grid 1, a >= the rest); otherwise pieces of 16 KiB (grid 1) and a
// shorter last one. Pieces never overlap, so in-place calls stay correct where NCCL is fixed.
#pragma once

#include <cstddef>
#include <vector>

#include "twinccl/operation.h"

namespace twinccl::nccl {

struct OnePiece {
  std::size_t first = 0;  // element offset
  std::size_t count = 0;
};

// True when `op` (all_reduce, reduce_scatter, reduce, reduce_scatter_v) runs NCCL's one-rank
// reduction kernel on a communicator of `size` ranks.
bool uses_one_rank_kernel(const OpDesc& op, int size);

// The pieces of a call of `count` elements of `element_bytes` each: {0, count} alone unless
// `kernel` (uses_one_rank_kernel) and the kernel would leave elements unwritten.
std::vector<OnePiece> one_rank_pieces(std::size_t count, std::size_t element_bytes, bool kernel);

}  // namespace twinccl::nccl
