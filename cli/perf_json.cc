// `twinccl perf` as data: --format csv and json (TwinCCL's own columns), and -J, nccl-tests'
// JSON file (schema version 3, tests/fidelity/logs/FORMATS.md) so tools reading nccl-tests' -J
// output read TwinCCL's unchanged.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "nccl_list_flags.h"
#include "perf_measure.h"
#include "perf_p2p.h"
#include "perf_table.h"
#include "twinccl/utf8_text.h"

extern char** environ;

namespace twinccl::cli {
namespace {

std::string wrong_text(const Measurement& m) { return m.wrong ? std::to_string(*m.wrong) : "N/A"; }

}  // namespace

void print_csv(std::ostream& out, const PerfReport& report) {
  out << nccl_lists_csv_line(report.nccl_algo, report.nccl_proto);
  out << "collective,size_bytes,count,type,redop,root,algorithm,protocol,oop_time_us,oop_algbw_"
         "gbps,oop_busbw_gbps,"
         "oop_wrong,ip_time_us,ip_algbw_gbps,ip_busbw_gbps,ip_wrong,predicted_time_us,predicted_"
         "busbw_gbps\n";
  for (const auto& r : report.rows) {
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{:.3f},{:.4f},{:.4f},{},{},{}\n",
        perf_test_name(r.kind), r.bytes, r.count, name(r.dtype),
        sweeps_ops(r.kind) ? name(r.op) : "none", r.root, r.algorithm, r.protocol,
        r.out_of_place.time_us, r.out_of_place.algbw_gbps, r.out_of_place.busbw_gbps,
        wrong_text(r.out_of_place), r.in_place.time_us, r.in_place.algbw_gbps,
        r.in_place.busbw_gbps, wrong_text(r.in_place),
        r.predicted ? fmt::format("{:.3f}", r.predicted->time_us) : "",
        r.predicted ? fmt::format("{:.4f}", r.predicted->busbw_gbps) : "");
  }
}

void print_json(std::ostream& out, const PerfReport& report) {
  nlohmann::json j;
  j["title"] = report.title;
  j["header"] = report.header_lines;
  add_nccl_lists_json(j, report.nccl_algo, report.nccl_proto);
  j["rows"] = nlohmann::json::array();
  auto measurement = [](const Measurement& m) {
    nlohmann::json x{
        {"time_us", m.time_us}, {"algbw_gbps", m.algbw_gbps}, {"busbw_gbps", m.busbw_gbps}};
    x["wrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json(nullptr);
    return x;
  };
  for (const auto& r : report.rows) {
    j["rows"].push_back({{"collective", perf_test_name(r.kind)},
                         {"size_bytes", r.bytes},
                         {"count", r.count},
                         {"type", name(r.dtype)},
                         {"redop", sweeps_ops(r.kind) ? name(r.op) : "none"},
                         {"root", r.root},
                         {"algorithm", r.algorithm},
                         {"protocol", r.protocol},
                         {"out_of_place", measurement(r.out_of_place)},
                         {"in_place", measurement(r.in_place)}});
    if (r.predicted) {
      j["rows"].back()["predicted"] = measurement(*r.predicted);
      j["rows"].back()["predicted"]["choice"] = r.predicted_choice;
    }
    if (!r.checked_algorithm.empty()) j["rows"].back()["checked_algorithm"] = r.checked_algorithm;
  }
  if (!report.footer.empty()) j["notes"] = report.footer;
  out << json_dump(std::move(j), 2) << "\n";
}

void write_nccl_tests_json(std::ostream& out, const PerfReport& report, OpKind kind,
                           const std::vector<std::string>& args) {
  using json = nlohmann::json;
  const RunConfig& c = report.config;
  json j;
  j["version"] = 3;
  j["start_time"] = timestamp_now();
  // args[0] names the nccl-tests program this run stands for, as nccl-tests' argv[0] does.
  // The flags follow; "perf" and the collective names (positional words) are TwinCCL's.
  json argv = json::array({nccl_tests_program(kind)});
  bool value_next = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const bool flag = args[i].size() > 1 && args[i][0] == '-';
    if (flag || value_next) argv.push_back(args[i]);
    value_next = flag && args[i].find('=') == std::string::npos && args[i] != "--links" &&
                 args[i] != "--compare" && args[i] != "--plain";
  }
  j["args"] = argv;
  j["twinccl_args"] = args;
  json env =
      json::array();  // only the variables that steer NCCL or TwinCCL, never the whole environment
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string v(*e);
    if (v.rfind("NCCL_", 0) == 0 || v.rfind("TWINCCL_", 0) == 0) env.push_back(v);
  }
  j["env"] = env;
  j["nccl_version"] = 0;  // no NCCL library ran the numbers (emulator or simulator)
  json config{{"nthreads", c.nthreads},
              {"ngpus", c.ngpus},
              {"minimum_bytes", c.min_bytes},
              {"maximum_bytes", c.max_bytes},
              {"warmup_iters", c.warmup},
              {"iterations", c.iterations},
              {"aggregated_iterations", c.agg_iters},
              {"validation", c.validation},
              {"graph", c.graph},
              {"blocking_collectives", c.blocking != 0},  // nccl-tests: jsonBool(blocking_coll)
              {"per_iter_timing", false},
              {"per_iter_skip", 0},
              {"parallel_init", false}};
  if (c.factor > 1) {
    config["step_factor"] = c.factor;
  } else {
    config["step_bytes"] = c.step_bytes;
  }
  json devices = json::array();
  for (const RunConfig::Device& d : c.devices) {
    devices.push_back({{"rank", d.rank},
                       {"group", 0},
                       {"pid", c.pid},
                       {"hostname", d.host},
                       {"device", d.device},
                       {"device_hex", "0000:00:00"},
                       {"device_info", d.name}});
  }
  config["devices"] = devices;
  j["config"] = config;
  json results = json::array();
  double busbw_sum = 0;
  int busbw_count = 0, failed = 0;
  auto block = [&](const Measurement& m) {
    busbw_sum += m.busbw_gbps;
    ++busbw_count;
    failed += m.wrong.value_or(0) > 0 ? 1 : 0;
    return json{{c.cputime ? "cpu_time" : "time", m.time_us},
                {"alg_bw", m.algbw_gbps},
                {"bus_bw", m.busbw_gbps},
                {"nwrong", m.wrong ? json(static_cast<double>(*m.wrong)) : json(nullptr)}};
  };
  for (const PerfRow& r : report.rows) {
    if (r.kind != kind) continue;
    json row{{"size", r.bytes},
             {"count", r.count},
             {"type", nccl_tests_type(r.dtype)},
             {"redop", nccl_tests_redop(r)},
             {"root", fmt::format("{:>6}", r.root)}};
    row["out_of_place"] = block(r.out_of_place);
    row["in_place"] = block(r.in_place);
    row["actual_iterations"] = c.iterations;
    row["experiment_name"] = "";
    if (!r.algorithm.empty()) row["algorithm"] = r.algorithm;  // TwinCCL's extra fields
    if (!r.protocol.empty()) row["protocol"] = r.protocol;
    results.push_back(row);
  }
  j["results"] = results;
  j["out_of_bounds"] = {{"count", failed}, {"okay", failed == 0}};
  j["average_bus_bandwidth"] = {{"bandwidth", busbw_count ? busbw_sum / busbw_count : 0.0},
                                {"okay", "unchecked"}};
  j["errors"] = json::array();
  j["end_time"] = timestamp_now();
  out << json_dump(std::move(j), 2) << "\n";
}

}  // namespace twinccl::cli
