// The emulator's options table (twinccl/emu/option_table.h): one row per option, each default in
// its own range, each documented in docs/misuse.md's Settings table, and the one range check
// naming the option, the value and the range for every way of setting it.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "twinccl/emu/option_table.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

TEST_CASE("option table: names unique, defaults in range, each row in docs/misuse.md",
          "[options]") {
  std::ifstream file(std::string(TWINCCL_SOURCE_DIR) + "/docs/misuse.md");
  std::stringstream docs;
  docs << file.rdbuf();
  REQUIRE(docs.str().size() > 1000);
  std::set<std::string_view> names, variables;
  const emu::EmulatorOptions defaults;
  for (const emu::OptionRow& row : emu::option_table()) {
    INFO(row.name);
    CHECK(names.insert(row.name).second);
    CHECK((row.env.empty() || variables.insert(row.env).second));
    CHECK(emu::find_option(row.name) == &row);
    CHECK_FALSE(row.help.empty());
    CHECK_NOTHROW(emu::check_option(defaults, row, ""));
    CHECK_THAT(docs.str(), Contains("`" + std::string(row.name)));
    if (!row.env.empty()) CHECK_THAT(docs.str(), Contains("`" + std::string(row.env)));
  }
  CHECK(emu::find_option("no_such_option") == nullptr);
}

TEST_CASE("option table: a value out of range names the option, the value and the range",
          "[options]") {
  emu::EmulatorOptions o;
  const emu::OptionRow& lanes = *emu::find_option("max_p2p_lane_threads");
  CHECK_THROWS_AS(emu::set_whole(o, lanes, 1LL << 40, "twinccl.run: "), ConfigError);
  CHECK_THROWS_WITH(emu::set_whole(o, lanes, 1LL << 40, "twinccl.run: "),
                    Contains("twinccl.run: max_p2p_lane_threads=1099511627776 must be in "
                             "[1, 1048576]") &&
                        Contains("TWINCCL_MAX_P2P_LANE_THREADS"));
  CHECK(o.max_p2p_lane_threads == 8192);  // refused before it was narrowed to an int
  emu::set_whole(o, lanes, 12, "");
  CHECK(o.max_p2p_lane_threads == 12);
  // No upper bound of its own: an int field still cannot take more than INT_MAX.
  CHECK_THROWS_WITH(emu::set_whole(o, *emu::find_option("ranks_per_node"), 1LL << 40, ""),
                    Contains("ranks_per_node=1099511627776 must be >= 0 and at most 2147483647"));
  CHECK_THROWS_WITH(emu::set_seconds(o, *emu::find_option("timeout_s"), 1e300, "x: "),
                    Contains("x: timeout_s=1e+300 must be > 0 and at most 1e+07"));
  emu::set_whole(o, *emu::find_option("check"), 2, "");
  CHECK(o.check == CheckLevel::debug);
  CHECK(emu::help_line(*emu::find_option("p2p_per_peer_streams")) ==
        "p2p_per_peer_streams=false: send/recv on one stream per (peer, direction), as torch's "
        "ProcessGroupNCCL (comm|per_peer; TWINCCL_P2P_STREAMS)");
  CHECK_THAT(emu::help_line(lanes),
             Contains("max_p2p_lane_threads=8192: ") &&
                 Contains("(in [1, 1048576]; TWINCCL_MAX_P2P_LANE_THREADS)"));
}
