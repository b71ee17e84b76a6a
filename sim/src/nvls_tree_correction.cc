// NCCL's correction of NVLS-tree all_reduce on Blackwell GPUs with x86 hosts: the bandwidth of
// its tuning model times the tree's correction factor by size (NVIDIA/nccl v2.29.2-1
// src/graph/tuning.cc:595, v2.30.7-1 :643-646, ncclTopoGetAlgoTime).
//
// How it works. NCCL times a call as latency + bytes / bandwidth; for tree all_reduce it has long
// multiplied the bandwidth by treeCorrectionFactor[protocol][log2(bytes / 64)] ("trees are not
// perfectly sticking to the model for medium sizes"). From 2.29.2 it multiplies NVLS-tree
// all_reduce's bandwidth by the same table's Simple row when minCompCap >= 100 (Blackwell) and the
// host CPU is x86 (NCCL_TOPO_CPU_ARCH_X86; not Grace, so not GB200/GB300 racks), for sizes 64 B
// to 512 MiB (logSize < 24; the table gained its 24th entry, .9, in that release):
//     1 MiB .5, 2 MiB .6, 4 MiB .7, 8 MiB .8, 16 / 32 MiB .7, 64 MiB .8, 128 - 512 MiB .9, 1 GiB 1
// Example, 2 x 8 B200 (IB), 32 MiB: bytes / algbw 91 us becomes 130 us. NCCL's code gives no
// cause; Hopper's NVLS-tree is left alone (the H100 2-node rows fit without it:
// docs/fidelity.md, "NVLS-tree on Blackwell x86"). The model takes the factor as the call's time
// for every NCCL version (the kernels are the same; this is NVIDIA's measure of them), and in
// the ranking only from 2.29.2, as NCCL ranks (kNcclVersionTerms).
#include "model.h"

namespace twinccl::sim::detail {

double nccl_nvls_tree_correction(const TopologyView& v, OpKind kind, double bytes, bool ranking) {
  if (kind != OpKind::all_reduce || v.arch != topo::GpuArch::blackwell ||
      !topo::is_x86(v.host_cpu)) {
    return 1.0;
  }
  if (ranking && nccl_before(v, kNcclVersionTerms.nvls_tree_correction_since)) {
    return 1.0;
  }
  const int log_size = bytes >= 64.0 ? nccl_log2i(bytes / 64.0) : -1;
  const auto& simple = kNccl.tree_correction[index_of(Protocol::simple)];
  if (log_size < 0 || log_size >= static_cast<int>(simple.size())) return 1.0;
  return simple[static_cast<std::size_t>(log_size)];
}

}  // namespace twinccl::sim::detail
