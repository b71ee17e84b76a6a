// The nccl-tests -J JSON parser (schema in tests/fidelity/logs/FORMATS.md): "args" names the
// program (and so the collective), "nccl_version" the version, "config.devices" (or "devices")
// the ranks and hosts, and each of "results" one row with "out_of_place" / "in_place" blocks of
// time (or cpu_time), alg_bw, bus_bw and nwrong. Parsing refuses deep nesting and huge files
// before building anything; a wrong field is a ConfigError naming its path ("results[3].size").
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "nccl_tests_log_parts.h"
#include "twinccl/bounded_json.h"
#include "twinccl/errors.h"

namespace twinccl::sim {
namespace {

using json = nlohmann::json;
using nccl_tests::fail;

struct Fields {
  std::string_view source;
  int line;

  const json* member(const json& object, std::string_view key) const {
    if (!object.is_object()) return nullptr;
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }
  double real(const json& v, const std::string& path) const {
    double x = 0;
    if (v.is_number()) {
      x = v.get<double>();
    } else if (v.is_string() && nccl_tests::parse_real(v.get<std::string>())) {
      x = *nccl_tests::parse_real(v.get<std::string>());  // "nan" is how nccl-tests writes NaN
    } else {
      fail(source, line, path + " must be a number");
    }
    if (!std::isfinite(x) || x < 0 || x > 1e15)
      fail(source, line, fmt::format("{} is {}, not a finite number >= 0", path, x));
    return x;
  }
  std::size_t whole(const json& v, const std::string& path) const {
    const double x = real(v, path);
    if (x != std::floor(x) || x > 1125899906842624.0)
      fail(source, line, path + " must be a whole number <= 2^50");
    return static_cast<std::size_t>(x);
  }
  std::string text(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(source, line, path + " must be a string");
    return v.get<std::string>();
  }
  std::optional<NcclTestsBlock> block(const json& row, std::string_view key,
                                      const std::string& path) const {
    const json* b = member(row, key);
    if (b == nullptr || b->is_null()) return std::nullopt;
    if (!b->is_object()) fail(source, line, path + " must be an object or null");
    NcclTestsBlock out;
    const json* time = member(*b, "time");
    if (time == nullptr) time = member(*b, "cpu_time");
    const json* algbw = member(*b, "alg_bw");
    const json* busbw = member(*b, "bus_bw");
    if (time == nullptr || algbw == nullptr || busbw == nullptr)
      fail(source, line, path + " needs time, alg_bw and bus_bw");
    out.time_us = real(*time, path + ".time");
    out.algbw_gbps = real(*algbw, path + ".alg_bw");
    out.busbw_gbps = real(*busbw, path + ".bus_bw");
    if (const json* w = member(*b, "nwrong"); w != nullptr && !w->is_null())
      out.wrong = real(*w, path + ".nwrong");
    return out;
  }
};

NcclTestsRow read_row(const json& r, std::size_t index, std::string_view source) {
  const std::string path = fmt::format("results[{}]", index);
  Fields f{source, static_cast<int>(index + 1)};
  if (!r.is_object()) fail(source, f.line, path + " must be an object");
  NcclTestsRow row;
  row.line = f.line;
  const json* size = f.member(r, "size");
  const json* count = f.member(r, "count");
  const json* type = f.member(r, "type");
  if (size == nullptr || count == nullptr || type == nullptr)
    fail(source, f.line, path + " needs size, count and type");
  row.size_bytes = f.whole(*size, path + ".size");
  row.count = f.whole(*count, path + ".count");
  if (row.count > row.size_bytes) fail(source, f.line, path + ": count is larger than size");
  const std::string type_name = f.text(*type, path + ".type");
  try {
    row.dtype = parse_data_type(type_name);
  } catch (const Error&) {
    fail(source, f.line, path + ".type: unknown data type", type_name);
  }
  if (const json* redop = f.member(r, "redop"))
    row.redop = nccl_tests::shown(f.text(*redop, path + ".redop"), 20);
  if (const json* root = f.member(r, "root")) {
    std::optional<long long> value;
    if (root->is_number_integer()) value = root->get<long long>();
    if (root->is_string()) {
      std::string s = root->get<std::string>();
      s.erase(0, s.find_first_not_of(' '));  // nccl-tests pads it: "    -1"
      value = nccl_tests::parse_integer(s);
    }
    if (!value || *value < -1 || *value >= kNcclTestsMaxRanks) {
      fail(source, f.line,
           fmt::format("{}.root must be -1 or a rank (0..{}: the model takes at most {} ranks)",
                       path, kNcclTestsMaxRanks - 1, kNcclTestsMaxRanks));
    }
    row.root = static_cast<int>(*value);
  }
  row.out_of_place = f.block(r, "out_of_place", path + ".out_of_place");
  row.in_place = f.block(r, "in_place", path + ".in_place");
  return row;
}

}  // namespace

std::vector<NcclTestsTable> parse_nccl_tests_json(std::string_view text, std::string_view source,
                                                  const NcclTestsParseOptions& options) {
  const JsonCaps caps{.max_depth = 16, .max_values = 4000000, .max_bytes = kNcclTestsMaxBytes};
  const json doc = parse_bounded_json(text, caps, [&](const std::string& why) {
    fail(source, 0, why + "; not nccl-tests -J output");
  });
  if (!doc.is_object()) fail(source, 0, "an nccl-tests -J file is one JSON object");
  NcclTestsTable table;
  table.source = std::string(source);
  table.first_line = 1;
  table.complete = doc.contains("average_bus_bandwidth");
  nccl_tests::TableHints hints;
  if (auto it = doc.find("args");
      it != doc.end() && it->is_array() && !it->empty() && it->front().is_string()) {
    hints.from_program = nccl_tests::collective_of_program(it->front().get<std::string>());
  }
  // "env": the whole environment of the run (nccl-tests v2.19.6 src/util.cu:372-377), so its
  // NCCL_ALGO / NCCL_PROTO.
  if (auto it = doc.find("env"); it != doc.end() && it->is_array()) {
    nccl_tests::NcclEnv env;
    for (std::size_t i = 0; i < it->size() && i < 100000; ++i) {
      const auto& e = (*it)[i];
      if (!e.is_string()) continue;
      const std::string var = e.get<std::string>();
      if (var.rfind("NCCL_ALGO=", 0) == 0 || var.rfind("NCCL_PROTO=", 0) == 0)
        env.read(var, static_cast<int>(i));
    }
    env.apply(table);
    for (std::string* from : {&table.nccl_algo_from, &table.nccl_proto_from})
      if (!from->empty()) from->replace(0, 5, "env[") += "]";  // "line 3" -> "env[3]"
  }
  if (auto it = doc.find("nccl_version");
      it != doc.end() && it->is_number_unsigned() && it->get<std::uint64_t>() < 1000000) {
    table.nccl_version = nccl_tests::nccl_version_of_code(it->get<std::uint64_t>());
  }
  // config.ngpus: the GPUs each thread drove (-g).
  if (auto c = doc.find("config"); c != doc.end() && c->is_object()) {
    if (auto g = c->find("ngpus"); g != c->end() && !g->is_null()) {
      // Out of range, it was read as "not said": -g 1.
      if (!g->is_number_integer() || *g < 1 || *g > kNcclTestsMaxGpusPerThread) {
        fail(source, 0,
             "config.ngpus is " + nccl_tests::shown(g->dump(), 40) +
                 ", not a number of GPUs per thread in 1.." +
                 std::to_string(kNcclTestsMaxGpusPerThread));
      }
      hints.gpus_per_thread = g->get<int>();
    }
  }
  const json* devices = nullptr;
  if (auto c = doc.find("config"); c != doc.end() && c->is_object() && c->contains("devices"))
    devices = &(*c)["devices"];
  if (devices == nullptr && doc.contains("devices")) devices = &doc["devices"];
  hints.devices_truncated = true;
  if (devices != nullptr && devices->is_array() && !devices->empty()) {
    std::set<long long> ranks;
    std::set<std::string> hosts;
    for (const json& d : *devices) {
      if (!d.is_object() || !d.contains("rank") || !d["rank"].is_number_integer() ||
          !d.contains("hostname") || !d["hostname"].is_string()) {
        fail(source, 0, "config.devices entries need an integer 'rank' and a string 'hostname'");
      }
      if (const long long rank = d["rank"].get<long long>();
          rank < 0 || rank >= kNcclTestsMaxRanks) {
        fail(source, 0,
             fmt::format("config.devices has rank {}, not 0..{}", rank, kNcclTestsMaxRanks - 1,
                         kNcclTestsMaxRanks));
      }
      if (!ranks.insert(d["rank"].get<long long>()).second) {
        fail(source, 0,
             fmt::format("config.devices lists rank {} twice; a garbled or spliced file",
                         d["rank"].get<long long>()));
      }
      hosts.insert(d["hostname"].get<std::string>());
    }
    hints.device_ranks = static_cast<int>(ranks.size());
    hints.device_nodes = static_cast<int>(hosts.size());
    hints.devices_truncated =
        *ranks.begin() != 0 || *ranks.rbegin() != static_cast<long long>(ranks.size()) - 1;
  }
  auto results = doc.find("results");
  if (results == doc.end() || !results->is_array() || results->empty()) {
    fail(source, 0, "no 'results' rows; is this nccl-tests' -J output?");
  }
  if (results->size() > kNcclTestsMaxRows)
    fail(source, 0, fmt::format("more than {} results", kNcclTestsMaxRows));
  for (std::size_t i = 0; i < results->size(); ++i)
    table.rows.push_back(read_row((*results)[i], i, source));
  nccl_tests::finish_table(table, hints, options);
  return {std::move(table)};
}

}  // namespace twinccl::sim
