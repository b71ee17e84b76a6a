// One rank's PyTorch profiler trace (Kineto chrome-trace JSON) read into what the importer uses
// (torch_read.h). How it works: the text is streamed (torch_json.h: the caps and syntax checked on
// the whole text, one event built at a time, with only the fields read here); each event of
// "traceEvents" is looked at as it comes, and the `record_param_comms` CPU ops (the calls, with
// their arguments) and the GPU activities (cat "kernel", "gpu_memcpy", "gpu_memset": start, end,
// stream, External id) are kept, nothing else. Memory is that of the kept events, whatever the
// size of the file. Then the top level ("distributedInfo", "traceEvents") is checked. Fields the
// importer reads are checked for type and range by json_fields.h, as in trace files ("r1.json:
// traceEvents[812] (record_param_comms): 'In msg nelems': must be a whole number, is string
// \"x\""); every other field and event is ignored, whatever it holds.
#include "torch_read.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "torch_json.h"
#include "twinccl/errors.h"
#include "twinccl/trace/torch_import.h"

namespace twinccl::trace::detail {
namespace {

using nlohmann::json;

// Kineto writes events 4-6 levels deep ("Input Dims": [[1, 2]] inside args); 32 is generous.
constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxGpuActivities = std::size_t{16} << 20;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where + ": " + what);
}

// A list of whole numbers as the profiler writes it: the string "[0, 1, 2]" (or a JSON array);
// "[0, 1, ..., 127]" is a list the profiler cut short (`truncated`).
std::vector<std::uint64_t> number_list(const json& v, const std::string& where, const char* key,
                                       bool& truncated) {
  const std::string at = where + ": '" + key + "'";
  std::vector<std::uint64_t> out;
  auto push = [&](std::uint64_t x) {
    if (out.size() >= static_cast<std::size_t>(kMaxTraceRanks))
      fail(at, "more than " + std::to_string(kMaxTraceRanks) + " entries");
    out.push_back(x);
  };
  if (v.is_array()) {
    for (const json& x : v)
      push(static_cast<std::uint64_t>(
          whole(x, where, "'" + std::string(key) + "'", 0, std::int64_t{1} << 53)));
    return out;
  }
  if (!v.is_string()) fail(at, "must be a list like \"[0, 1]\", is " + shown(v));
  const std::string s = v.get<std::string>();
  if (s.size() < 2 || s.front() != '[' || s.back() != ']')
    fail(at, "must be a list like \"[0, 1]\", is " + shown(v));
  std::size_t i = 1;
  while (i + 1 < s.size()) {
    while (i + 1 < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i + 1 >= s.size()) break;
    if (s.compare(i, 3, "...") == 0) {
      truncated = true;
      i += 3;
      continue;
    }
    std::uint64_t x = 0;
    std::size_t digits = 0;
    while (i + 1 < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (++digits > 15) fail(at, "a number over 15 digits in " + shown(v));
      x = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
      ++i;
    }
    if (digits == 0) fail(at, "must be a list of whole numbers >= 0, is " + shown(v));
    push(x);
  }
  return out;
}

TorchCommCall read_call(const json& e, const json& args, std::size_t index,
                        const std::string& where) {
  TorchCommCall c;
  c.event = index;
  c.ts_us = finite(e.at("ts"), where, "'ts'", -1e18, 1e18);
  if (const json* d = member(e, "dur")) c.dur_us = finite(*d, where, "'dur'", 0.0, 1e18);
  const json* name = member(args, "Collective name");
  if (name == nullptr) {
    fail(where,
         "no 'Collective name' in its args: profiles written by older PyTorch versions "
         "carry no arguments of collectives; profile the job with a recent PyTorch");
  }
  c.collective = text(*name, where, "'Collective name'", kMaxTraceNameBytes);
  constexpr std::int64_t kMaxNelems = std::int64_t{1} << 50;
  if (const json* x = member(args, "dtype"))
    c.dtype = text(*x, where, "'dtype'", kMaxTraceNameBytes);
  if (const json* x = member(args, "In msg nelems"))
    c.in_nelems = static_cast<std::uint64_t>(whole(*x, where, "'In msg nelems'", 0, kMaxNelems));
  if (const json* x = member(args, "Out msg nelems"))
    c.out_nelems = static_cast<std::uint64_t>(whole(*x, where, "'Out msg nelems'", 0, kMaxNelems));
  if (const json* x = member(args, "In split size"))
    c.in_split = number_list(*x, where, "In split size", c.split_truncated);
  if (const json* x = member(args, "Out split size"))
    c.out_split = number_list(*x, where, "Out split size", c.split_truncated);
  if (const json* x = member(args, "Group size"))
    c.group_size = whole(*x, where, "'Group size'", 0, kMaxTraceRanks);
  if (const json* x = member(args, "Process Group Name")) {
    c.pg_name = text(*x, where, "'Process Group Name'", kMaxTraceNameBytes);
  } else if (const json* id = member(args, "Process Group ID")) {  // PyTorch 2.2-2.3 spelling
    c.pg_name = std::to_string(whole(*id, where, "'Process Group ID'", 0, kMaxTraceCommunicators));
  }
  if (const json* x = member(args, "Process Group Description"))
    c.pg_desc = text(*x, where, "'Process Group Description'", kMaxTraceNameBytes);
  if (const json* x = member(args, "Process Group Ranks")) {
    bool truncated = false;
    for (std::uint64_t r : number_list(*x, where, "Process Group Ranks", truncated)) {
      if (r >= static_cast<std::uint64_t>(kMaxTraceRanks))
        fail(where + ": 'Process Group Ranks'", "rank " + std::to_string(r) + " is out of range");
      c.pg_ranks.push_back(static_cast<int>(r));
    }
    c.pg_ranks_known = !truncated && !c.pg_ranks.empty();
  }
  if (const json* x = member(args, "Global rank start"))
    c.global_start = whole(*x, where, "'Global rank start'", -1, kMaxTraceRanks);
  if (const json* x = member(args, "Global rank stride"))
    c.global_stride = whole(*x, where, "'Global rank stride'", -1, kMaxTraceRanks);
  if (const json* x = member(args, "Rank"))
    c.rank_field = whole(*x, where, "'Rank'", -1, kMaxTraceRanks);
  if (const json* x = member(args, "Src Rank"))
    c.src_rank = whole(*x, where, "'Src Rank'", -1, kMaxTraceRanks);
  if (const json* x = member(args, "Dst Rank"))
    c.dst_rank = whole(*x, where, "'Dst Rank'", -1, kMaxTraceRanks);
  if (const json* x = member(args, "External id"))
    c.external_id = whole(*x, where, "'External id'", -1, std::numeric_limits<std::int64_t>::max());
  return c;
}

GpuActivity read_gpu(const json& e, const std::string& name, bool kernel,
                     const std::string& where) {
  GpuActivity g;
  g.kernel = kernel;
  g.start_us = finite(e.at("ts"), where, "'ts'", -1e18, 1e18);
  const double dur =
      member(e, "dur") != nullptr ? finite(e.at("dur"), where, "'dur'", 0.0, 1e18) : 0.0;
  g.end_us = g.start_us + dur;
  g.nccl = kernel && (name.rfind("ncclKernel", 0) == 0 || name.rfind("ncclDevKernel", 0) == 0);
  const json* args = member(e, "args");
  if (args != nullptr && args->is_object()) {
    if (const json* s = member(*args, "stream"))
      g.stream = whole(*s, where, "'stream'", -1, 1LL << 62);
    if (const json* x = member(*args, "External id"))
      g.external_id =
          whole(*x, where, "'External id'", -1, std::numeric_limits<std::int64_t>::max());
  }
  if (g.stream < 0) {  // Kineto puts a GPU activity's stream in "tid" too
    if (const json* t = member(e, "tid"); t != nullptr && t->is_number_integer())
      g.stream = whole(*t, where, "'tid'", -1, 1LL << 62);
  }
  return g;
}

// traceEvents[i]: a call or a GPU activity kept, anything else ignored.
void take_event(TorchRankFile& f, std::size_t i, const json& e) {
  auto where = [&] { return f.source + ": traceEvents[" + std::to_string(i) + "]"; };
  if (!e.is_object()) fail(where(), "must be an object, is " + shown(e));
  const json* name = member(e, "name");
  const json* cat = member(e, "cat");
  if (name == nullptr || !name->is_string() || member(e, "ts") == nullptr) return;
  const std::string& n = name->get_ref<const std::string&>();
  const std::string c = cat != nullptr && cat->is_string() ? cat->get<std::string>() : "";
  if (n == "record_param_comms") {
    const json* args = member(e, "args");
    if (args == nullptr || !args->is_object())
      fail(where() + " (record_param_comms)", "has no 'args' object");
    if (f.calls.size() >= kMaxTraceOps)
      fail(f.source, "more than " + std::to_string(kMaxTraceOps) + " record_param_comms calls");
    f.calls.push_back(read_call(e, *args, i, where() + " (record_param_comms)"));
  } else if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset") {
    if (f.gpu.size() >= kMaxGpuActivities)
      fail(f.source, "more than " + std::to_string(kMaxGpuActivities) + " GPU activities");
    f.gpu.push_back(read_gpu(e, n, c == "kernel", where() + " (" + c + ")"));
  }
}

// The file streamed (torch_json.h): events kept as they come, then the top level checked.
template <class Input>
TorchRankFile read_rank(const std::string& source, Input&& input) {
  TorchRankFile f;
  f.source = source;
  const JsonCaps limits{
      .max_depth = kMaxDepth,
      .max_values = kMaxTorchTraceValues,
      .max_bytes = kMaxTorchTraceBytes,
      .over_bytes_advice = "; profile a shorter window (torch.profiler.schedule with active=1)"};
  const JsonRefuse refuse = [&](const std::string& why) { fail(source, why); };
  const std::function<void()> start = [&] {
    f.calls.clear();
    f.gpu.clear();
  };
  const TorchJsonEvent event = [&](std::size_t i, const json& e) { take_event(f, i, e); };
  const TorchJsonTop top =
      stream_torch_json(std::forward<Input>(input), limits, refuse, start, event);
  if (!top.object) fail(source, "must be a JSON object (a profiler trace), is " + top.not_object);
  const json& info = top.info;
  if (!info.is_object()) {
    fail(source,
         "no 'distributedInfo' object (rank, world_size): not a trace of a "
         "torch.distributed run, or written by a PyTorch too old to record it");
  }
  const json* rank = member(info, "rank");
  const json* world = member(info, "world_size");
  if (rank == nullptr || world == nullptr)
    fail(source + ": distributedInfo", "needs 'rank' and 'world_size'");
  f.world_size = static_cast<int>(
      whole(*world, source + ": distributedInfo", "'world_size'", 1, kMaxTraceRanks));
  f.rank =
      static_cast<int>(whole(*rank, source + ": distributedInfo", "'rank'", 0, f.world_size - 1));
  if (!top.events_array) fail(source, "no 'traceEvents' array: not a PyTorch profiler trace");
  if (top.held) std::rethrow_exception(top.held);
  std::stable_sort(
      f.calls.begin(), f.calls.end(),
      [](const TorchCommCall& a, const TorchCommCall& b) { return a.ts_us < b.ts_us; });
  return f;
}

}  // namespace

TorchRankFile read_torch_rank(const std::string& source, const std::string& text) {
  return read_rank(source, std::string_view(text));
}

TorchRankFile read_torch_rank(const std::string& source, std::istream& in) {
  return read_rank(source, in);
}

}  // namespace twinccl::trace::detail
