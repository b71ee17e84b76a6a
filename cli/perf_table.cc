#include "perf_table.h"

#include <fmt/format.h>

#include <ostream>

#include "perf_p2p.h"
#include "twinccl/op_traits.h"
#include "twinccl/perf_math.h"

namespace twinccl::cli {
namespace {

// One timed block: "  %7s  %6s  %6s  %6g" (or "    N/A" when not checked), as nccl-tests prints it.
std::string block_text(const Measurement& m) {
  std::string wrong = m.wrong ? fmt::format("{:>6}", *m.wrong) : "   N/A";
  return fmt::format("  {:>7}  {:>6}  {:>6}  {}", nccl_tests_number(m.time_us, 7),
                     nccl_tests_number(m.algbw_gbps, 6), nccl_tests_number(m.busbw_gbps, 6), wrong);
}

void print_header(std::ostream& out, const PerfReport& report, OpKind kind) {
  const RunConfig& c = report.config;
  const std::string program = nccl_tests_program(kind);
  out << report.title << "\n";
  out << "# Collective test starting: " << program << "\n";
  const bool by_factor = c.factor > 1;
  out << fmt::format(
      "# nThread {} nGpus {} minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} agg "
      "iters: "
      "{} validation: {} graph: {} unalign: {}\n",
      c.nthreads, c.ngpus, c.min_bytes, c.max_bytes,
      by_factor ? fmt::format("{:g}", c.factor) : std::to_string(c.step_bytes),
      by_factor ? "factor" : "bytes", c.warmup, c.iterations, c.agg_iters, c.validation, c.graph,
      c.unalign);
  for (const std::string& line : report.header_lines) out << "# " << line << "\n";
  for (const std::string& line : c.notes) out << "# " << line << "\n";
  out << "#\n# Using devices\n";
  for (const RunConfig::Device& d : c.devices) {
    out << fmt::format(
        "#  Rank {:>2} Group {:>2} Pid {:>6} on {:>10} device {:>2} [0000:00:00] {}\n", d.rank, 0,
        c.pid, d.host, d.device, d.name);
  }
  const char* time = c.cputime ? "cputime" : "time";
  bool with_algo = false, with_prediction = false;
  for (const PerfRow& r : report.rows) {
    with_algo |= !r.algorithm.empty();
    with_prediction |= r.predicted.has_value();
  }
  std::string extra;
  if (c.timestamps) extra += fmt::format("{:>19}", "timestamp");
  if (!c.plain && with_algo) extra += "  algorithm/protocol";
  if (!c.plain && with_prediction) extra += "  predicted: time(us) busbw(GB/s) algorithm/protocol";
  out << "#\n";
  out << fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place "
      "   "
      "      \n",
      "", "", "", "", "");
  out << fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  "
      "{:>6} {}\n",
      "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw",
      "busbw", "#wrong", extra);
  out << fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  "
      "{:>6} {}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "", c.timestamps ? fmt::format("{:>19}", "%Y-%m-%d %H:%M:%S") : "");
}

}  // namespace

std::string_view nccl_tests_type(DataType t) {
  switch (t) {
    case DataType::float16:
      return "half";
    case DataType::float32:
      return "float";
    case DataType::float64:
      return "double";
    case DataType::float8_e4m3:
      return "f8e4m3";
    case DataType::float8_e5m2:
      return "f8e5m2";
    default:
      return name(t);  // int8, uint8, int32, uint32, int64, uint64, bfloat16
  }
}

std::string_view nccl_tests_op(ReduceKind k) {
  return k == ReduceKind::premul_sum ? "mulsum" : name(k);
}

std::string_view nccl_tests_redop(const PerfRow& row) {
  if (row.kind == kHypercubeTest) return "";
  return sweeps_ops(row.kind) ? nccl_tests_op(row.op) : "none";
}

std::string nccl_tests_program(OpKind k) {
  if (k == kSendRecvTest) return "sendrecv_perf";
  if (k == kHypercubeTest) return "hypercube_perf";
  const std::string_view program = traits(k).nccl_tests_name;
  return program.empty() ? std::string(name(k)) + "_perf" : std::string(program);
}

Measurement make_measurement(OpKind kind, std::size_t count, DataType dtype, int nranks,
                             double time_us, std::optional<long long> wrong) {
  Measurement m;
  m.time_us = time_us;
  double seconds = time_us * 1e-6;
  if (is_p2p_test(kind)) {  // nccl-tests' sendrecv.cu and hypercube.cu: busbw = algbw
    m.algbw_gbps = seconds > 0 ? p2p_algbw_bytes(kind, count, dtype, nranks) / seconds / 1e9 : 0;
    m.busbw_gbps = m.algbw_gbps;
    m.wrong = wrong;
    return m;
  }
  m.algbw_gbps = seconds > 0 ? algbw_bytes(kind, count, dtype, nranks) / seconds / 1e9 : 0;
  const bool gathered = kind == OpKind::gather || kind == OpKind::scatter;  // nccl-tests: (n-1)/n
  m.busbw_gbps = m.algbw_gbps *
                 (gathered && nranks > 0 ? (nranks - 1.0) / nranks : busbw_factor(kind, nranks));
  m.wrong = wrong;
  return m;
}

std::string nccl_tests_number(double value, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string s = fmt::format("{:>{}.{}f}", value, width, decimals);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:>{}.{}e}", value, width, width >= 7 ? 1 : 0);
}

void print_table(std::ostream& out, const PerfReport& report) {
  std::size_t i = 0;
  while (i < report.rows.size()) {
    const OpKind kind = report.rows[i].kind;
    print_header(out, report, kind);
    double busbw_sum = 0;
    int busbw_count = 0;
    long long wrong_total = 0;
    for (; i < report.rows.size() && report.rows[i].kind == kind; ++i) {
      const PerfRow& r = report.rows[i];
      out << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.bytes, r.count,
                         nccl_tests_type(r.dtype), nccl_tests_redop(r), r.root);
      out << block_text(r.out_of_place) << block_text(r.in_place);
      if (report.config.timestamps) out << fmt::format("{:>21}", r.timestamp);
      if (!report.config.plain && !r.algorithm.empty()) {
        out << "  " << r.algorithm << (r.protocol.empty() ? "" : "/" + r.protocol);
      }
      if (!report.config.plain && r.predicted) {
        out << fmt::format("  {:>9.2f} {:>8.2f} {}", r.predicted->time_us, r.predicted->busbw_gbps,
                           r.predicted_choice);
      }
      out << "\n";
      for (const Measurement* m : {&r.out_of_place, &r.in_place}) {
        busbw_sum += m->busbw_gbps;
        ++busbw_count;
        wrong_total += m->wrong.value_or(0) > 0 ? 1 : 0;  // nccl-tests counts failing checks
      }
    }
    const std::string program = nccl_tests_program(kind);
    out << fmt::format("# {:<20} : {} {}\n", "Out of bounds values", wrong_total,
                       wrong_total == 0 ? "OK" : "FAILED");
    out << fmt::format("# {:<20} : {:g} \n", "Avg bus bandwidth",
                       busbw_count ? busbw_sum / busbw_count : 0.0);
    out << "#\n# Collective test concluded: " << program << "\n#\n\n";
  }
  out << report.footer;
}

}  // namespace twinccl::cli
