// Absurd values found by hand (every subcommand's options given negative, 0, huge, NaN, empty, a
// folder, /dev/full, a 100 MB file; see the report of branch clipolish), each fixed with a check:
// exit 2 and one line naming the option and the value, never a silent default, a flag ignored
// without a word, or a file silently overwritten by the next one.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;

namespace {

void require_one_line_error(const std::string& args, const std::vector<std::string>& needles) {
  INFO("twinccl " << args);
  const CliResult r = run_cli(args, "", 20);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  for (const std::string& n : needles) CHECK_THAT(r.out, Contains(n));
  CHECK(r.out.find('\n') == r.out.size() - 1);
}

}  // namespace

TEST_CASE("every subcommand's --help exits 0 with its usage", "[cli][absurd]") {
  for (const std::string sub : {"", "perf", "topo", "algo", "replay", "compare", "whatif"}) {
    const CliResult r = run_cli(sub + " --help", "", 20);
    INFO(sub << ": " << r.out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("Usage:"));
  }
}

TEST_CASE("xml hints: --nic-gbps 0, negative, NaN or huge is refused (0 read as not given)",
          "[cli][absurd]") {
  for (const std::string v : {"0", "-1", "nan", "inf", "1e7", "5abc"}) {
    require_one_line_error("topo show dgx-h100 --nic-gbps " + v,
                           {"--nic-gbps", "'" + v + "'", "NIC line rate"});
  }
}

TEST_CASE("perf --trace, --links and --compare on a measuring backend are refused, not ignored",
          "[cli][absurd]") {
  const twinccl_test::ScratchDir scratch("twinccl-absurd");
  const std::string file = scratch.path("trace.json");
  require_one_line_error("perf all_reduce --backend emu -b 1K -e 1K -n 1 -w 0 --trace " + file,
                         {"--trace", "--backend sim"});
  CHECK_FALSE(std::filesystem::exists(file));
  require_one_line_error("perf all_reduce --backend emu -b 1K -e 1K -n 1 -w 0 --links",
                         {"--links", "--backend sim"});
  require_one_line_error("perf all_reduce --backend emu -b 1K -e 1K -n 1 -w 0 --compare",
                         {"--compare", "--backend sim"});
}

TEST_CASE("perf --trace with several collectives writes one file each (the last overwrote all)",
          "[cli][absurd]") {
  const twinccl_test::ScratchDir scratch("twinccl-traces");
  const std::filesystem::path& dir = scratch.dir;
  const CliResult r =
      run_cli("perf all_reduce all_gather -b 1M -e 1M -c 0 --trace " + (dir / "t.json").string());
  INFO(r.out);
  CHECK(r.exit_code == 0);
  for (const char* name : {"t.all_reduce.float32.json", "t.all_gather.float32.json"}) {
    CHECK(std::filesystem::file_size(dir / name) > 100);
    CHECK_THAT(r.out, Contains(std::string("written to ") + (dir / name).string()));
  }
  CHECK_FALSE(std::filesystem::exists(dir / "t.json"));
}
