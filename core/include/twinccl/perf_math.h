// nccl-tests' bandwidth arithmetic, the one place it lives (CLI tables, simulator, benchmarks).
//
//   double algbw = algbw_bytes(OpKind::all_gather, count, DataType::float32, n) / time_s / 1e9;
//   double busbw = algbw * busbw_factor(OpKind::all_gather, n);   // (n-1)/n
//
// bytes = count*typesize for all_reduce, broadcast, reduce, send/recv; nranks*count*typesize for
// reduce_scatter / all_gather (count per rank), all_to_all, gather, scatter. GB = 1e9.
#pragma once

#include <cstddef>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"

namespace twinccl {

// True when nccl-tests' size covers every rank's block (reduce_scatter, all_gather, all_to_all,
// gather, scatter and their _v forms): count is then per rank and bytes = nranks*count*typesize.
bool size_counts_all_ranks(OpKind kind);

// Bytes nccl-tests divides by the time to get algbw, for `count` as nccl-tests passes it
// (the per-rank count for reduce_scatter/all_gather/all_to_all/gather/scatter).
double algbw_bytes(OpKind kind, std::size_t count, DataType dtype, int nranks);
// all_reduce 2(n-1)/n; reduce_scatter, all_gather, all_to_all (n-1)/n; others 1.
double busbw_factor(OpKind kind, int nranks);

}  // namespace twinccl
