// CUDA graphs on the NCCL backend (twinccl/call_graphs.h, backends/nccl/graph.h), on the recording
// double: the calls nccl-tests 2.19's BenchTime makes under -G, in its order (src/common.cu:
// cudaStreamBeginCapture in thread-local mode, the calls captured, cudaStreamEndCapture,
// cudaGraphInstantiate, cudaGraphLaunch N times, then the wait, then the graph freed), that the
// captured calls run only at each launch, and what CUDA refuses around a capture.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/call_graphs.h"
#include "twinccl/errors.h"

using namespace twinccl;

namespace {

RunOptions options() {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  return o;
}

// The double's log lines of one rank thread holding any of `calls`, reduced to the call's name.
std::vector<std::string> calls_of(const std::string& log, const std::string& rank,
                                  const std::vector<std::string>& calls) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(rank + " ", 0) != 0) continue;
    for (const std::string& c : calls) {
      if (line.find(" " + c + " ") != std::string::npos || line.ends_with(" " + c)) {
        out.push_back(c + (line.find("captured=1") != std::string::npos ? "(captured)" : ""));
        break;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("nccl graphs: capture, instantiate, launch N times, then wait, as nccl-tests' -G",
          "[nccl_graph]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    CallGraphs* graphs = call_graphs(w);
    REQUIRE(graphs != nullptr);
    const std::vector<float> mine(5, static_cast<float>(w.rank() + 1));  // 1 and 2
    Buffer x = w.alloc(mine.size(), DataType::float32);
    x.copy_from_host(mine.data(), mine.size() * sizeof(float));
    graphs->begin_capture();
    Work captured;
    for (int i = 0; i < 3; ++i) captured = w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    CHECK_THROWS_AS(captured.wait(), InvalidArgument);  // it has not run: wait for a launch
    graphs->end_capture();
    CHECK(x.to_host<float>() == mine);  // captured, not run
    Work last;
    for (int l = 0; l < 2; ++l) last = graphs->launch_capture();
    last.wait();
    // 6 in-place sums of (1 + 2): 3 x 2^5 on both ranks.
    CHECK(x.to_host<float>() == std::vector<float>(5, 96.0f));
    graphs->drop_capture();
    CHECK_THROWS_AS(graphs->launch_capture(), InvalidArgument);  // nothing held any more
  });
  CHECK(nccl_double::violations().empty());
  const std::vector<std::string> want = {"cudaStreamBeginCapture",  "ncclAllReduce(captured)",
                                         "ncclAllReduce(captured)", "ncclAllReduce(captured)",
                                         "cudaStreamEndCapture",    "cudaGraphInstantiate",
                                         "cudaGraphLaunch",         "cudaGraphLaunch",
                                         "cudaGraphExecDestroy",    "cudaGraphDestroy"};
  const std::vector<std::string> calls = {"cudaStreamBeginCapture", "ncclAllReduce",
                                          "cudaStreamEndCapture",   "cudaGraphInstantiate",
                                          "cudaGraphLaunch",        "cudaGraphExecDestroy",
                                          "cudaGraphDestroy"};
  const std::string log = nccl_double::log();
  INFO(log.substr(0, 4000));
  for (const char* rank : {"rank 0", "rank 1"}) {
    CHECK(calls_of(log, rank, calls) == want);
    CHECK(nccl_double::log_count(std::string(rank) + " cudaStreamBeginCapture") == 1);
  }
  CHECK(nccl_double::log_count(" mode=thread_local") == 2);  // nccl-tests' capture mode
  CHECK(nccl_double::log_count("cudaGraphLaunch stream=") == 4);
}

TEST_CASE("nccl graphs: what CUDA refuses around a capture is refused or avoided", "[nccl_graph]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    CallGraphs* graphs = call_graphs(w);
    CHECK_THROWS_WITH(graphs->end_capture(), Catch::Contains("no capture is open"));
    CHECK_THROWS_WITH(graphs->launch_capture(), Catch::Contains("no graph"));
    {
      Buffer x = w.alloc(4, DataType::float32);  // before: cudaMalloc is refused inside a capture
      graphs->begin_capture();
      CHECK_THROWS_WITH(graphs->begin_capture(), Catch::Contains("already open"));
      // A group inside the capture: launched into the graph at group_end, no event recorded.
      w.group_start();
      w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
      w.broadcast(x, 0, {.async_op = true});
      Work group = w.group_end({.async_op = true});
      CHECK_THROWS_AS(group.test(), InvalidArgument);
      // A copy would wait for the stream, which cannot be queried while it is captured.
      CHECK_THROWS_WITH(x.to_host<float>(), Catch::Contains("captured into a CUDA graph"));
      graphs->end_capture();
      graphs->launch_capture().wait();
    }
    // A barrier inside a capture allocates nothing there (its scratch exists before the capture);
    // a capture left open when the communicator goes away is ended (the stream then drains).
    graphs->begin_capture();
    w.barrier({.async_op = true});
  });
  // No cudaStreamQuery/cudaEventQuery of the capturing stream, no cross-stream wait into it, no
  // cudaMalloc in the capturing thread: the double records each as a violation.
  CHECK(nccl_double::violations().empty());
  CHECK(nccl_double::log_count("cudaStreamEndCapture") == 4);  // two ranks x (ended + left open)
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
