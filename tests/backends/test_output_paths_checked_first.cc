// TWINCCL_TRACE, TWINCCL_TIMELINE and TWINCCL_FLIGHT_RECORDER name files written after an emulated
// run (the last only when it fails): a path that cannot
// be written (a missing folder, a folder) ends run() before any rank starts, with a ConfigError
// naming the variable and the path (before, the program ran to the end and then failed with
// "cannot write trace file", its result lost). A path that can be written still gets the trace.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/scratch_dir.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

RunOptions two_ranks() {
  RunOptions o;
  o.backend = "emu";
  o.world_size = 2;
  o.timeout_s = 30;
  return o;
}

// What run() threw ("" when it returned) and how many ranks started.
struct Outcome {
  std::string error;
  int ranks_started = 0;
};

Outcome run_counting(const RunOptions& o) {
  std::atomic<int> started{0};
  Outcome out;
  try {
    run(o, [&](Communicator& world) {
      started.fetch_add(1);
      world.barrier();
    });
  } catch (const ConfigError& e) {
    out.error = std::string("ConfigError: ") + e.what();
  } catch (const std::exception& e) {
    out.error = std::string("other: ") + e.what();
  }
  out.ranks_started = started.load();
  return out;
}

}  // namespace

TEST_CASE("TWINCCL_TRACE and TWINCCL_TIMELINE paths are checked before any rank runs",
          "[environment][output]") {
  RunOptions o = two_ranks();
  SECTION("a trace path in a folder that does not exist") {
    o.trace_path = "/nonexistent-twinccl-folder/t.trace.json";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error, Contains("ConfigError: TWINCCL_TRACE '" + o.trace_path + "'") &&
                              Contains("does not exist"));
  }
  SECTION("a trace path that is a folder") {
    o.trace_path = std::filesystem::temp_directory_path().string();
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error, Contains("TWINCCL_TRACE '") && Contains("Is a directory"));
  }
  SECTION("a timeline path in a folder that does not exist") {
    o.topology = "dgx-h100";
    o.timeline_path = "/nonexistent-twinccl-folder/timeline.json";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error, Contains("ConfigError: TWINCCL_TIMELINE '" + o.timeline_path + "'"));
  }
  SECTION("a timeline without a topology (was ignored silently)") {
    o.timeline_path = "timeline.json";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error, Contains("ConfigError: TWINCCL_TIMELINE='timeline.json'") &&
                              Contains("needs a topology"));
  }
  SECTION("a trace path with a NUL byte: refused, not cut at the NUL (nothing written)") {
    const twinccl_test::ScratchDir scratch("twinccl-nul");
    const std::filesystem::path& folder = scratch.dir;
    o.trace_path = (folder / "tr").string() + std::string(1, '\0') + "ace.json";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error, Contains("ConfigError: TWINCCL_TRACE '") && Contains("\\x00ace.json") &&
                              Contains("NUL byte"));
    CHECK(std::filesystem::is_empty(folder));
  }
  SECTION("a device that cannot take the trace (/dev/full): an error, not a lost file") {
    o.trace_path = "/dev/full";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 2);
    CHECK_THAT(got.error,
               Contains("TWINCCL_TRACE '/dev/full'") && Contains("No space left on device"));
  }
  SECTION("a path that can be written gets the trace") {
    const twinccl_test::ScratchDir scratch("twinccl-trace");
    const std::filesystem::path file = scratch.path("trace.json");
    o.trace_path = file.string();
    Outcome got = run_counting(o);
    CHECK(got.error.empty());
    CHECK(got.ranks_started == 2);
    CHECK(std::filesystem::file_size(file) > 0);
  }
}

TEST_CASE("TWINCCL_FLIGHT_RECORDER's path is checked before any rank runs",
          "[environment][output][recorder]") {
  RunOptions o = two_ranks();
  SECTION("a folder that does not exist: refused at once, not lost after the failure") {
    o.flight_recorder_path = "/nonexistent-twinccl-folder/flight.json";
    Outcome got = run_counting(o);
    CHECK(got.ranks_started == 0);
    CHECK_THAT(got.error,
               Contains("ConfigError: TWINCCL_FLIGHT_RECORDER '" + o.flight_recorder_path + "'") &&
                   Contains("does not exist"));
  }
  SECTION("a path that can be written: a run that succeeds writes nothing there") {
    const twinccl_test::ScratchDir scratch("twinccl-flight");
    const std::filesystem::path file = scratch.path("flight.json");
    o.flight_recorder_path = file.string();
    Outcome got = run_counting(o);
    CHECK(got.error.empty());
    CHECK(got.ranks_started == 2);
    CHECK_FALSE(std::filesystem::exists(file));
  }
}
