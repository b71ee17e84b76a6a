// `twinccl import-torch-trace` as a user runs it: real PyTorch profiler traces (a DDP run's rank
// 0 from HTA's test data, tests/trace/data/SOURCES.md, and rank 1 made from it) imported, then
// replayed on dgx-h100; .json.gz read as such; bad input refused with exit code 2 and a message.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli_runner.h"
#include "trace/torch_trace_builder.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

struct Scratch : twinccl_test::ScratchDir {
  Scratch() : ScratchDir("twinccl_import_torch") {}
};

// The same file as rank `rank` of the 2-rank world.
std::string as_rank(std::string text, int rank) {
  const std::string from = "\"rank\": 0, \"world_size\": 2";
  const std::size_t at = text.find(from);
  if (at != std::string::npos)
    text.replace(at, from.size(), "\"rank\": " + std::to_string(rank) + ", \"world_size\": 2");
  return text;
}

}  // namespace

TEST_CASE("cli import-torch-trace: a real DDP trace imported, then replayed on dgx-h100") {
  const Scratch s;
  s.write("r0.json", twinccl_test::torch_data_file("hta_nccl_data_rank0.json"));
  s.write("r1.json", as_rank(twinccl_test::torch_data_file("hta_nccl_data_rank0.json"), 1));
  REQUIRE(std::system(("gzip -c " + s.path("r1.json") + " > " + s.path("r1.json.gz")).c_str()) ==
          0);
  const auto imported = run_cli("import-torch-trace " + s.path("r1.json.gz") + " " +
                                s.path("r0.json") + " -o " + s.path("job.trace.json"));
  INFO(imported.out);
  REQUIRE(imported.exit_code == 0);
  CHECK_THAT(imported.out, Contains("imported 2 rank(s), 1 communicator(s), 42 operation(s): "
                                    "all_reduce 30, broadcast 12"));
  CHECK_THAT(imported.out, Contains("skipped 12 call(s) named 'wait'"));
  const auto replayed = run_cli("replay " + s.path("job.trace.json") + " --topology dgx-h100");
  INFO(replayed.out);
  REQUIRE(replayed.exit_code == 0);
  // "dgx-h100   TIME_US  1.00x  COMM_US ...": a time, and communication inside it.
  std::istringstream lines(replayed.out);
  bool found = false;
  for (std::string line; std::getline(lines, line);) {
    const auto f = twinccl_test::fields(line);
    if (f.size() < 5 || f[0] != "dgx-h100") continue;
    found = true;
    const double time_us = std::stod(f[1]);
    const double comm_us = std::stod(f[3]);
    CHECK(time_us > 0);
    CHECK(comm_us > 0);
    CHECK(comm_us < time_us);
  }
  CHECK(found);
}

TEST_CASE("cli import-torch-trace: bad input exits 2 with a message") {
  const Scratch s;
  s.write("r0.json", twinccl_test::torch_data_file("hta_nccl_data_rank0.json"));
  s.write("r1.json", as_rank(twinccl_test::torch_data_file("hta_nccl_data_rank0.json"), 1));
  std::string mismatched = as_rank(twinccl_test::torch_data_file("hta_nccl_data_rank0.json"), 1);
  const std::size_t at = mismatched.find("\"In msg nelems\": 2049000");
  REQUIRE(at != std::string::npos);
  mismatched.replace(at, 24, "\"In msg nelems\": 2049001");
  s.write("r1_bad.json", mismatched);
  s.write("junk.json.gz", "\x1f\x8b not really gzip");
  const std::string out = " -o " + s.path("o.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"import-torch-trace", "profiles is required"},
      {"import-torch-trace " + s.path("r0.json"), "--output is required"},
      {"import-torch-trace " + s.path("r0.json") + out, "missing rank(s) 1"},
      {"import-torch-trace " + s.path("r0.json") + " " + s.path("r0.json") + out,
       "each rank's file must be given once"},
      {"import-torch-trace " + s.path("nothing.json") + out, "no such file"},
      {"import-torch-trace " + s.dir.string() + out, "not a regular file"},
      {"import-torch-trace " + s.path("junk.json.gz") + out, "not a valid gzip file"},
      {"import-torch-trace " + s.path("r0.json") + " " + s.path("r1_bad.json") + out,
       "count 2049001, where"},
      {"import-torch-trace " + s.path("r0.json") + " " + s.path("r1.json") + " -o " +
           s.path("no/such/dir/o.json"),
       "--output"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_cli(args);
    INFO(args << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains(message));
    CHECK(r.out.find('\n') == r.out.size() - 1);  // one line
  }
  CHECK(run_cli("import-torch-trace --help").exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(s.path("o.json")));
}

TEST_CASE("cli import-torch-trace: a job that would deadlock in the replay exits 2") {
  const Scratch s;
  for (int r = 0; r < 2; ++r) {  // rank 0 uses group 1 then 2, rank 1 group 2 then 1, each waited
    twinccl_test::TorchRankBuilder b(r, 2);
    for (int k = 0; k < 2; ++k) {
      b.call("allreduce", "Float", 8, 8, {{"Process Group Name", (r + k) % 2 == 0 ? "1" : "2"}}, "",
             false);
    }
    s.write("d" + std::to_string(r) + ".json", b.text());
  }
  const auto r = run_cli("import-torch-trace " + s.path("d0.json") + " " + s.path("d1.json") +
                         " -o " + s.path("d.trace.json"));
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("the imported trace: replay deadlock"));
  CHECK_FALSE(std::filesystem::exists(s.path("d.trace.json")));
}

TEST_CASE("cli import-torch-trace: a gzip bomb is refused by its ratio, not inflated to the cap",
          "[cli][hostile]") {
  // fuzz5: 4 MB of gzip (4096 members of 1 MiB of spaces each, after '{"traceEvents": [')
  // inflated for ~40 s up to the 4 GiB cap of JSON per file before it was refused.
  const Scratch s;
  s.write("head.json", "{\"traceEvents\": [");
  s.write("spaces.json", std::string(std::size_t{1} << 20, ' '));
  REQUIRE(std::system(("gzip -c " + s.path("head.json") + " > " + s.path("head.gz") +
                       " && gzip -c " + s.path("spaces.json") + " > " + s.path("spaces.gz"))
                          .c_str()) == 0);
  const auto read = [&](const std::string& name) {
    std::ifstream in(s.path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string bomb = read("head.gz");
  const std::string member = read("spaces.gz");
  REQUIRE(member.size() < 4096);  // 1 MiB of spaces: about 1 KiB of gzip
  for (int i = 0; i < 4096; ++i) bomb += member;
  s.write("bomb.json.gz", bomb);
  const auto r =
      run_cli("import-torch-trace " + s.path("bomb.json.gz") + " -o " + s.path("o.json"));
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("bomb.json.gz': inflates to over 256 times its compressed size"));
  CHECK_THAT(r.out, Contains("gunzip it first"));
  CHECK_FALSE(std::filesystem::exists(s.path("o.json")));
}

TEST_CASE("cli import-torch-trace: the topology it suggests exists for any world size",
          "[cli][hostile]") {
  // fuzz5: a 9000-rank job was told to replay on h100-cluster-1125, a preset that does not exist
  // (h100-cluster-N stops at 1024 nodes, 8192 GPUs).
  const Scratch s;
  const std::vector<std::pair<int, std::string>> cases = {
      {8, "--topology dgx-h100"},
      {8192, "--topology h100-cluster-1024"},
      {9000, "--topology gb200-nvl72-cluster-125"},
      {9217,
       "no preset has 9217 GPUs: replay it on a topology file with as many (start one from the "
       "largest preset, `twinccl topo show h100-cluster-1024 --format json -o mine.json`, then "
       "edit it to 9217 GPUs"}};
  for (const auto& [world, expected] : cases) {
    twinccl_test::TorchRankBuilder b(0, world);
    b.call("allreduce", "Float", 8, 8);
    s.write("w.json", b.text());
    const auto r = run_cli("import-torch-trace " + s.path("w.json") +
                           " --replicate-missing-ranks -o " + s.path("w.trace.json"));
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains(expected));
    const std::size_t at = r.out.find("--topology ");
    if (at != std::string::npos) {
      const std::string preset = r.out.substr(at + 11, r.out.find('\n', at) - at - 11);
      CHECK(run_cli("topo show " + preset).exit_code == 0);
    }
  }
}
