// Throughput of reduce_elements for every data type (sum), in place (acc = acc + in) as the
// emulator's data paths call it, in GB/s of bytes touched (2 reads + 1 write per element).
// float32 sum should run at memory-bandwidth speed; the emulator's bandwidth benchmark relies on
// it.
//
//   build-*/bench/bench_reduce_kernels [elements=16777216] [repeats=10]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/reduce_kernels.h"
#include "twinccl/reduce_op.h"

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 24);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 10;
  std::printf("%-12s %-5s %12s %10s %12s\n", "dtype", "op", "elements", "time_us", "gbytes_per_s");
  for (twinccl::DataType type : twinccl::kAllDataTypes) {
    const std::size_t bytes = count * twinccl::size_of(type);
    std::vector<unsigned char> acc(bytes), in(bytes);
    for (std::size_t i = 0; i < count; ++i) {  // ordinary values, as training data would be
      twinccl::store_element(type, acc.data(), i, static_cast<double>(i % 61) * 0.37 - 11.0);
      twinccl::store_element(type, in.data(), i, static_cast<double>(i % 59) * 0.01 - 0.3);
    }
    for (twinccl::ReduceKind op : {twinccl::ReduceKind::sum, twinccl::ReduceKind::max}) {
      twinccl::reduce_elements(type, op, acc.data(), acc.data(), in.data(), count);  // warm up
      double best_us = 1e300;
      for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        twinccl::reduce_elements(type, op, acc.data(), acc.data(), in.data(), count);
        const auto stop = std::chrono::steady_clock::now();
        const double us = std::chrono::duration<double, std::micro>(stop - start).count();
        if (us < best_us) best_us = us;
      }
      const double gbytes_per_s = 3.0 * static_cast<double>(bytes) / (best_us * 1e3);
      std::printf("%-12s %-5s %12zu %10.1f %12.2f\n", twinccl::name(type).data(),
                  twinccl::name(op).data(), count, best_us, gbytes_per_s);
    }
  }
  return 0;
}
