// Throughput of reduce_elements for every data type and op, in place (acc = acc (op) in) as the
// emulator's data paths call it, in GB/s of bytes touched (2 reads + 1 write per element), on
// buffers of 64 MiB each. float16/bfloat16/fp8 are measured with each kernel in the same run:
// via_double (the original per-element double path, the reference), portable (scalar float) and
// simd (AVX2+F16C when the CPU has them), with the speed-up over via_double.
// float32 sum should run at memory-bandwidth speed; the emulator's bandwidth benchmark relies on
// it.
//
//   build-*/bench/bench_reduce_kernels [mib_per_buffer=64] [repeats=5]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/reduce_kernels.h"
#include "twinccl/reduce_op.h"

namespace {

bool is_narrow(twinccl::DataType t) {
  return t == twinccl::DataType::float16 || t == twinccl::DataType::bfloat16 ||
         t == twinccl::DataType::float8_e4m3 || t == twinccl::DataType::float8_e5m2;
}

const char* kernel_name(twinccl::NarrowKernel k) {
  switch (k) {
    case twinccl::NarrowKernel::via_double:
      return "via_double";
    case twinccl::NarrowKernel::portable:
      return "portable";
    case twinccl::NarrowKernel::simd:
      return "simd";
    default:
      return "-";
  }
}

// Best of `repeats` calls (after one warm-up), in microseconds.
double best_us(twinccl::NarrowKernel kernel, twinccl::DataType type, twinccl::ReduceKind op,
               std::vector<unsigned char>& acc, const std::vector<unsigned char>& in,
               std::size_t count, int repeats) {
  twinccl::reduce_elements_with(kernel, type, op, acc.data(), acc.data(), in.data(), count);
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    twinccl::reduce_elements_with(kernel, type, op, acc.data(), acc.data(), in.data(), count);
    const auto stop = std::chrono::steady_clock::now();
    const double us = std::chrono::duration<double, std::micro>(stop - start).count();
    if (us < best) best = us;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::size_t bytes = mib << 20;
  std::printf("# %zu MiB per buffer, best of %d; narrow SIMD kernels %s\n", mib, repeats,
              twinccl::narrow_simd_available() ? "available (AVX2+F16C)" : "not available");
  std::printf("%-12s %-5s %-10s %12s %10s %12s %8s\n", "dtype", "op", "kernel", "elements",
              "time_us", "gbytes_per_s", "speedup");
  for (twinccl::DataType type : twinccl::kAllDataTypes) {
    const std::size_t count = bytes / twinccl::size_of(type);
    std::vector<unsigned char> acc(bytes), in(bytes);
    for (std::size_t i = 0; i < count; ++i) {  // ordinary values, as training data would be
      twinccl::store_element(type, acc.data(), i, static_cast<double>(i % 61) * 0.37 - 11.0);
      twinccl::store_element(type, in.data(), i, static_cast<double>(i % 59) * 0.01 - 0.3);
    }
    std::vector<twinccl::NarrowKernel> kernels = {twinccl::NarrowKernel::best};
    if (is_narrow(type)) {
      kernels = {twinccl::NarrowKernel::via_double, twinccl::NarrowKernel::portable,
                 twinccl::NarrowKernel::simd};
    }
    for (twinccl::ReduceKind op : {twinccl::ReduceKind::sum, twinccl::ReduceKind::max}) {
      double reference_us = 0;
      for (twinccl::NarrowKernel kernel : kernels) {
        const double us = best_us(kernel, type, op, acc, in, count, repeats);
        if (kernel == twinccl::NarrowKernel::via_double) reference_us = us;
        const double gbytes_per_s = 3.0 * static_cast<double>(bytes) / (us * 1e3);
        char speedup[16] = "-";
        if (reference_us > 0) std::snprintf(speedup, sizeof speedup, "%.1fx", reference_us / us);
        std::printf("%-12s %-5s %-10s %12zu %10.1f %12.2f %8s\n", twinccl::name(type).data(),
                    twinccl::name(op).data(), kernel_name(kernel), count, us, gbytes_per_s,
                    speedup);
      }
    }
  }
  return 0;
}
