// Small PyTorch profiler traces built in tests (the shape of tests/trace/data/, whose files are
// real excerpts): a rank's distributedInfo, its record_param_comms calls and their NCCL kernels.
//
//   TorchRankBuilder r(0, 2);
//   r.call("allreduce", "Float", 1024, 1024);            // + its NCCL kernel on stream 20
//   std::string text = r.text();
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "twinccl/trace/torch_import.h"

namespace twinccl_test {

// The text of a real excerpt in tests/trace/data/ (SOURCES.md there).
inline std::string torch_data_file(const std::string& name) {
  std::ifstream in(std::string(TWINCCL_SOURCE_DIR) + "/tests/trace/data/" + name);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TorchRankBuilder {
 public:
  TorchRankBuilder(int rank, int world) {
    doc_["schemaVersion"] = 1;
    doc_["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}};
    doc_["traceEvents"] = nlohmann::json::array();
    std::string ranks = "[";
    for (int r = 0; r < world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
    world_ranks_ = ranks + "]";
    world_ = world;
  }

  // A call on the world (or on `ranks`, "[0, 2]"), with `extra` args; its kernel runs 10 us.
  void call(const std::string& name, const std::string& dtype, long long in, long long out,
            nlohmann::json extra = nlohmann::json::object(), const std::string& ranks = "",
            bool kernel = true) {
    const long long id = next_id_++;
    nlohmann::json args = {{"External id", id},
                           {"Collective name", name},
                           {"dtype", dtype},
                           {"In msg nelems", in},
                           {"Out msg nelems", out},
                           {"In split size", "[]"},
                           {"Out split size", "[]"},
                           {"Process Group Name", "0"},
                           {"Process Group Ranks", ranks.empty() ? world_ranks_ : ranks},
                           {"Group size", ranks.empty() ? world_ : count_ranks(ranks)}};
    for (auto it = extra.begin(); it != extra.end(); ++it) args[it.key()] = it.value();
    doc_["traceEvents"].push_back({{"ph", "X"},
                                   {"cat", "cpu_op"},
                                   {"name", "record_param_comms"},
                                   {"pid", 1},
                                   {"tid", 1},
                                   {"ts", now_us_},
                                   {"dur", 5},
                                   {"args", args}});
    if (kernel) {
      doc_["traceEvents"].push_back({{"ph", "X"},
                                     {"cat", "kernel"},
                                     {"name", "ncclDevKernel_Generic(ncclDevComm*)"},
                                     {"pid", 0},
                                     {"tid", 20},
                                     {"ts", now_us_ + 2},
                                     {"dur", 10},
                                     {"args", {{"External id", id}, {"stream", comm_stream_}}}});
    }
    now_us_ += 20;
  }
  // A compute kernel of `dur_us` on stream 7, from now.
  void compute(double dur_us) {
    doc_["traceEvents"].push_back({{"ph", "X"},
                                   {"cat", "kernel"},
                                   {"name", "gemm"},
                                   {"ts", now_us_},
                                   {"dur", dur_us},
                                   {"args", {{"stream", 7}}}});
    now_us_ += dur_us;
  }
  // The stream NCCL kernels run on from now (20; 7 is the compute stream).
  void set_comm_stream(int stream) { comm_stream_ = stream; }
  nlohmann::json& doc() { return doc_; }
  std::string text() const { return doc_.dump(); }

 private:
  static int count_ranks(const std::string& ranks) {
    int n = 0;
    for (char c : ranks) n += c == ',';
    return n + 1;
  }
  nlohmann::json doc_;
  std::string world_ranks_;
  int world_ = 0;
  int comm_stream_ = 20;
  long long next_id_ = 100;
  double now_us_ = 1000;
};

// Every rank's builder as the importer's input ("rank0.json", ...).
inline std::vector<twinccl::trace::TorchTraceText> texts(
    const std::vector<TorchRankBuilder>& ranks) {
  std::vector<twinccl::trace::TorchTraceText> out;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out.push_back({"rank" + std::to_string(i) + ".json", ranks[i].text()});
  return out;
}

}  // namespace twinccl_test
