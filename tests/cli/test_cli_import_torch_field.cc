// `twinccl import-torch-trace` on the traces users have: only rank 0 profiled
// (--replicate-missing-ranks, checked against importing every rank's file), and files far larger
// than the events kept (memory must follow the events, not the file: the peak resident size of
// the real program for a 1 MB and a 48 MB trace of the same calls).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "support/skip.h"
#include "trace/torch_trace_builder.h"

using Catch::Matchers::Contains;
using twinccl_test::peak_rss_kib;
using twinccl_test::run_cli;

namespace {

struct Scratch : twinccl_test::ScratchDir {
  Scratch() : ScratchDir("twinccl_import_field") {}
  nlohmann::json read_json(const std::string& name) const {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in);
  }
};

// Runs `timeout 60 twinccl args...` with its output discarded; returns its peak resident size in
// KiB (wait4), -1 on error.
// A 2-rank profile of 50 all_reduces (their NCCL kernels, compute between) padded with `filler`
// CPU events the importer does not keep (aten ops with their args, as the profiler writes them).
std::string padded_trace(int rank, long filler) {
  std::string t = "{\"distributedInfo\": {\"rank\": " + std::to_string(rank) +
                  ", \"world_size\": 2}, \"traceEvents\": [";
  double ts = 1000;
  for (int k = 0; k < 50; ++k) {
    for (long u = 0; u < filler / 50; ++u) {
      t += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": " +
           std::to_string(ts + static_cast<double>(u) * 0.01) +
           ", \"dur\": 1.5, \"args\": {\"External id\": 7, \"Input Dims\": [[8192, 4096], [4096, "
           "4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Sequence number\": "
           "12}},\n";
    }
    const std::string id = std::to_string(100 + k);
    t += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": " + std::to_string(ts) +
         ", \"dur\": 40, \"args\": {\"stream\": 7}},\n";
    t += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"ts\": " +
         std::to_string(ts + 40) + ", \"dur\": 5, \"args\": {\"External id\": " + id +
         ", \"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": 4096, "
         "\"Out msg nelems\": 4096, \"Group size\": 2, \"Process Group Name\": \"0\", "
         "\"Process Group Ranks\": \"[0, 1]\"}},\n";
    t += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce\", \"ts\": " +
         std::to_string(ts + 42) +
         ", \"dur\": 10, \"args\": {\"stream\": 20, \"External id\": " + id + "}}" +
         (k + 1 < 50 ? ",\n" : "\n");
    ts += 60;
  }
  return t + "]}\n";
}

}  // namespace

TEST_CASE("cli import-torch-trace --replicate-missing-ranks: rank 0 alone equals both files") {
  const Scratch s;
  std::string rank1 = twinccl_test::torch_data_file("hta_nccl_data_rank0.json");
  const std::string from = "\"rank\": 0, \"world_size\": 2";
  REQUIRE(rank1.find(from) != std::string::npos);
  rank1.replace(rank1.find(from), from.size(), "\"rank\": 1, \"world_size\": 2");
  s.write("r0.json", twinccl_test::torch_data_file("hta_nccl_data_rank0.json"));
  s.write("r1.json", rank1);
  const auto both = run_cli("import-torch-trace " + s.path("r0.json") + " " + s.path("r1.json") +
                            " -o " + s.path("both.json"));
  REQUIRE(both.exit_code == 0);
  const auto one = run_cli("import-torch-trace " + s.path("r0.json") +
                           " --replicate-missing-ranks -o " + s.path("one.json"));
  INFO(one.out);
  REQUIRE(one.exit_code == 0);
  CHECK_THAT(one.out, Contains("imported 2 rank(s) (1 replicated from rank 0 by "
                               "--replicate-missing-ranks), 1 communicator(s), 42 operation(s)"));
  CHECK_THAT(one.out, Contains("note: rank 1 replicated from rank 0 ("));
  nlohmann::json a = s.read_json("both.json"), b = s.read_json("one.json");
  CHECK_THAT(b["program"].get<std::string>(),
             Contains("r0.json [rank 1 replicated from rank 0's profile: "
                      "--replicate-missing-ranks]"));
  a.erase("program");
  b.erase("program");
  CHECK(a == b);
  const auto replayed = run_cli("replay " + s.path("one.json") + " --topology dgx-h100");
  CHECK(replayed.exit_code == 0);
  // Without the option, the error says it exists.
  const auto refused = run_cli("import-torch-trace " + s.path("r0.json") + " -o " + s.path("x"));
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.out, Contains("missing rank(s) 1; give every rank's file or"));
  CHECK_THAT(refused.out, Contains("--replicate-missing-ranks builds the others from rank 0's"));
}

TEST_CASE("cli import-torch-trace: memory follows the events kept, not the file",
          "[cli][hostile]") {
  if (twinccl_test::kSanitizerBuild)
    return twinccl_test::skip_test("a sanitizer build: resident size says nothing here");
  const Scratch s;
  for (int r = 0; r < 2; ++r) {
    s.write("small" + std::to_string(r) + ".json", padded_trace(r, 4000));    // ~1 MB
    s.write("large" + std::to_string(r) + ".json", padded_trace(r, 200000));  // ~48 MB, same calls
  }
  const auto size_mb = [&](const std::string& n) {
    return static_cast<double>(std::filesystem::file_size(s.path(n))) / 1e6;
  };
  INFO("small " << size_mb("small0.json") << " MB, large " << size_mb("large0.json") << " MB");
  REQUIRE(size_mb("large0.json") > 40);
  auto peak = [&](const std::string& name) {
    int exit_code = -1;
    const long kib = peak_rss_kib({"import-torch-trace", s.path(name + "0.json"),
                                   s.path(name + "1.json"), "-o", s.path(name + ".trace")},
                                  exit_code);
    INFO(name << ": exit " << exit_code << ", peak " << kib << " KiB");
    REQUIRE(exit_code == 0);
    REQUIRE(kib > 0);
    return kib;
  };
  const long small = peak("small");
  const long large = peak("large");
  INFO("peak resident size: small " << small << " KiB, large " << large << " KiB");
  CHECK(large - small < 12 * 1024);  // reading the whole file: ~9x its size, +400 MB
  nlohmann::json a = s.read_json("small.trace"), b = s.read_json("large.trace");
  a.erase("program");  // the files' names
  b.erase("program");
  CHECK(a == b);
}
