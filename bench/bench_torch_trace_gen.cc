// Writes a synthetic PyTorch profiler trace (Kineto chrome-trace JSON) of one rank, shaped like a
// real one, to measure `twinccl import-torch-trace` on real sizes (100 MB - 1 GB per rank) without
// committing big files (docs/traces.md, "From a PyTorch profiler trace").
//
//   bench_torch_trace_gen --out r0.json --rank 0 --world 64 --calls 2000 --mbytes 500 [--tp 8]
//   /usr/bin/time -v twinccl import-torch-trace r0.json --replicate-missing-ranks -o job.json
//
// How it works. Per communication call: `filler` units, each an aten cpu_op (with Input
// Dims/type/Strides args as the profiler writes them), its cudaLaunchKernel, the ac2g flow pair
// and the compute kernel on stream 7 (with the kernel args Kineto writes: grid, block,
// registers, ...); then the record_param_comms cpu_op, an nccl:* annotation and the NCCL kernel
// on stream 20, tied by "External id". Even calls are world all_reduces; with --tp G, odd calls
// are all_gathers on the rank's block of G consecutive ranks (tensor parallel), else all_reduces.
// `filler` is chosen so the file comes out near --mbytes.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

namespace {

struct Options {
  std::string out;
  int rank = 0, world = 1, tp = 0;
  long calls = 100;
  double mbytes = 10;
};

long number(const char* flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "%s: '%s' is not a whole number in %ld..%ld\n", flag, text, lo, hi);
    std::exit(2);
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--out") {
      o.out = v;
    } else if (flag == "--rank") {
      o.rank = static_cast<int>(number("--rank", v, 0, 65535));
    } else if (flag == "--world") {
      o.world = static_cast<int>(number("--world", v, 1, 65536));
    } else if (flag == "--tp") {
      o.tp = static_cast<int>(number("--tp", v, 0, 65536));
    } else if (flag == "--calls") {
      o.calls = number("--calls", v, 1, 1000000);
    } else if (flag == "--mbytes") {
      o.mbytes = static_cast<double>(number("--mbytes", v, 1, 8192));
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (o.out.empty() || o.rank >= o.world || (o.tp > 0 && o.world % o.tp != 0)) {
    std::fprintf(stderr,
                 "usage: bench_torch_trace_gen --out FILE --rank R --world W --calls N "
                 "--mbytes M [--tp G]  (R < W; G divides W)\n");
    std::exit(2);
  }
  return o;
}

std::string rank_list(int first, int n) {
  std::string s = "[";
  for (int r = 0; r < n; ++r) s += fmt::format("{}{}", r > 0 ? ", " : "", first + r);
  return s + "]";
}

class Writer {
 public:
  explicit Writer(const Options& o) : o_(o) {}

  // One filler unit: an aten op, its launch, the flow pair and the compute kernel.
  void unit(std::string& b) {
    const long id = next_id_++;
    const long corr = next_corr_++;
    fmt::format_to(std::back_inserter(b),
                   ", {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 4242, "
                   "\"tid\": 4242, \"ts\": {:.3f}, \"dur\": 11.250, \"args\": {{\"External id\": "
                   "{}, \"Record function id\": 0, \"Concrete Inputs\": [\"\", \"\"], \"Input "
                   "type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": [[4096, 1], "
                   "[1, 4096]], \"Input Dims\": [[8192, 4096], [4096, 4096]], \"Ev Idx\": {}, "
                   "\"Sequence number\": {}, \"Fwd thread id\": 0}}}}",
                   now_us_, id, id, id);
    fmt::format_to(std::back_inserter(b),
                   ", {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                   "\"pid\": 4242, \"tid\": 4242, \"ts\": {:.3f}, \"dur\": 4.125, \"args\": "
                   "{{\"External id\": {}, \"cbid\": 211, \"correlation\": {}}}}}",
                   now_us_ + 5, id, corr);
    fmt::format_to(std::back_inserter(b),
                   ", {{\"ph\": \"s\", \"id\": {}, \"pid\": 4242, \"tid\": 4242, \"ts\": {:.3f}, "
                   "\"cat\": \"ac2g\", \"name\": \"ac2g\"}}, {{\"ph\": \"f\", \"id\": {}, \"pid\": "
                   "0, \"tid\": 7, \"ts\": {:.3f}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": "
                   "\"e\"}}",
                   corr, now_us_ + 5, corr, now_us_ + 12);
    fmt::format_to(std::back_inserter(b),
                   ", {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                   "\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1"
                   "x1_execute_segment_k_off_kernel__5x_cublas\", \"pid\": 0, \"tid\": 7, \"ts\": "
                   "{:.3f}, \"dur\": 48.000, \"args\": {{\"External id\": {}, \"queued\": 0, "
                   "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": {}, "
                   "\"registers per thread\": 168, \"shared memory\": 213000, \"blocks per SM\": "
                   "1.5, \"warps per SM\": 12.0, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], "
                   "\"est. achieved occupancy %\": 0}}}}",
                   now_us_ + 12, id, corr);
    now_us_ += 50;
  }

  // Call `k`: record_param_comms, its nccl:* annotation and its NCCL kernel.
  void call(std::string& b, long k) {
    const long id = next_id_++;
    const bool tp = o_.tp > 0 && k % 2 == 1;
    const int n = tp ? o_.tp : o_.world;
    const int first = tp ? o_.rank / o_.tp * o_.tp : 0;
    const long count = 1 << 20;
    fmt::format_to(
        std::back_inserter(b),
        ", {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 4242, "
        "\"tid\": 4242, \"ts\": {:.3f}, \"dur\": 6.500, \"args\": {{\"External id\": {}, "
        "\"Record function id\": 0, \"Ev Idx\": {}, \"Collective name\": \"{}\", \"dtype\": "
        "\"BFloat16\", \"In msg nelems\": {}, \"Out msg nelems\": {}, \"In split size\": \"[]\", "
        "\"Out split size\": \"[]\", \"Global rank start\": {}, \"Global rank stride\": 1, "
        "\"Group size\": {}, \"Process Group Name\": \"{}\", \"Process Group Description\": "
        "\"{}\", \"Process Group Ranks\": \"{}\", \"Rank\": {}}}}}",
        now_us_, id, id, tp ? "_allgather_base" : "allreduce", count, tp ? count * n : count, first,
        n, tp ? 1 + o_.rank / o_.tp : 0, tp ? "tp" : "default_pg",
        n <= 30 ? rank_list(first, n) : "[0, 1, 2, ...]", o_.rank - first);
    fmt::format_to(std::back_inserter(b),
                   ", {{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:{}\", "
                   "\"pid\": 4242, \"tid\": 4242, \"ts\": {:.3f}, \"dur\": 6.000, \"args\": "
                   "{{\"External id\": {}}}}}",
                   tp ? "_allgather_base" : "all_reduce", now_us_ + 0.25, id);
    fmt::format_to(
        std::back_inserter(b),
        ", {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
        "\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", "
        "\"pid\": 0, \"tid\": 20, \"ts\": {:.3f}, \"dur\": 30.000, \"args\": "
        "{{\"External id\": {}, \"queued\": 0, \"device\": 0, \"context\": 1, "
        "\"stream\": 20, \"correlation\": {}, \"grid\": [24, 1, 1], \"block\": [640, "
        "1, 1]}}}}",
        now_us_ + 3, id, next_corr_++);
  }

  long next_id_ = 1000;
  long next_corr_ = 50000;
  double now_us_ = 1713200000000.0;  // Kineto writes epoch microseconds

 private:
  const Options& o_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::FILE* f = std::fopen(o.out.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", o.out.c_str());
    return 2;
  }
  Writer w(o);
  std::string b = fmt::format(
      "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
      "HBM3\", \"totalGlobalMem\": 85029158912}}], \"distributedInfo\": {{\"backend\": \"nccl\", "
      "\"rank\": {}, \"world_size\": {}, \"pg_count\": 3, \"pg_config\": [], \"nccl_version\": "
      "\"2.21.5\"}}, \"traceEvents\": [{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, "
      "\"tid\": 0, \"args\": {{\"name\": \"python\"}}}}",
      o.rank, o.world);
  std::string unit;
  w.unit(unit);  // measures a unit, then starts the clock again
  w.now_us_ = 1713200000000.0;
  w.next_id_ = 1000;
  w.next_corr_ = 50000;
  const double per_call_bytes = o.mbytes * 1e6 / static_cast<double>(o.calls);
  const long filler = std::max(1L, static_cast<long>(per_call_bytes / unit.size()));
  std::size_t written = 0;
  for (long k = 0; k < o.calls; ++k) {
    for (long u = 0; u < filler; ++u) w.unit(b);
    w.call(b, k);
    if (b.size() > (1u << 22)) {
      written += std::fwrite(b.data(), 1, b.size(), f);
      b.clear();
    }
  }
  b += "], \"traceName\": \"synthetic\", \"displayTimeUnit\": \"ms\"}\n";
  written += std::fwrite(b.data(), 1, b.size(), f);
  if (std::fclose(f) != 0) return 2;
  std::printf("wrote %s: %.1f MB, %ld calls, %ld filler units per call\n", o.out.c_str(),
              static_cast<double>(written) / 1e6, o.calls, filler);
  return 0;
}
