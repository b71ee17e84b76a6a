#include "perf_measure.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>

#include "emu_memory.h"
#include "perf_p2p.h"
#include "perf_timing.h"
#include "twinccl/algorithms.h"
#include "twinccl/call_layout.h"
#include "twinccl/errors.h"
#include "twinccl/launch_environment.h"
#include "twinccl/perf_math.h"
#include "twinccl/reference.h"
#include "twinccl/run.h"
#include "twinccl/sim/selection.h"

namespace twinccl::cli {

std::size_t count_for(OpKind kind, std::size_t bytes, DataType dtype, int nranks) {
  if (is_p2p_test(kind)) return p2p_count_for(kind, bytes, dtype, nranks);
  std::size_t elements = bytes / size_of(dtype);
  if (!size_counts_all_ranks(kind)) return elements;
  const std::size_t align =
      std::max<std::size_t>(1, 16 / size_of(dtype));  // nccl-tests: 16-byte blocks
  return elements / static_cast<std::size_t>(nranks) / align * align;
}

std::size_t bytes_for(OpKind kind, std::size_t count, DataType dtype, int nranks) {
  if (is_p2p_test(kind)) return p2p_bytes_for(kind, count, dtype, nranks);
  return (size_counts_all_ranks(kind) ? count * static_cast<std::size_t>(nranks) : count) *
         size_of(dtype);
}

std::string timestamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

namespace {

std::string row_label(OpKind kind, DataType dtype, std::size_t count, bool in_place) {
  return fmt::format("{} {} count {} {}", name(kind), name(dtype), count,
                     in_place ? "in place" : "out of place");
}

// Host bytes one process holds to check a row: every rank's input (the reference needs them all)
// and this rank's before, expected and result copies (the largest receive of any rank).
double check_host_bytes(const OpDesc& call, int n) {
  double bytes = 0, largest_recv = 0;
  const double e = static_cast<double>(size_of(call.dtype));
  for (int r = 0; r < n; ++r) {
    bytes += static_cast<double>(send_elements(call, r, n)) * e;
    largest_recv = std::max(largest_recv, static_cast<double>(recv_elements(call, r, n)) * e);
  }
  return bytes + 3 * largest_recv;
}

// The launcher's environment, read once (it does not change while the process runs); none when it
// is malformed (the run itself then reports it).
const LaunchEnvironment& launch_environment() {
  static const LaunchEnvironment env = [] {
    try {
      return read_launch_environment();
    } catch (const ConfigError&) {
      return LaunchEnvironment{};
    }
  }();
  return env;
}

// What one process may hold for checking: the emulator's limit (half the physical memory, or of
// ulimit -v) shared by the processes a launcher started on this node.
double check_host_limit_bytes(std::string* why) {
  const LaunchEnvironment& env = launch_environment();
  const int here = env.launcher != Launcher::none ? std::max(env.local_world_size, 1) : 1;
  const double limit = emulator_memory_limit_bytes(why) / here;
  if (why != nullptr && here > 1) *why += " shared by " + std::to_string(here) + " processes";
  return limit;
}

}  // namespace

bool check_fits_in_host(const PerfOptions& o, double need_bytes, const std::string& row) {
  if (!o.check || o.backend == "emu") return o.check;
  std::string why;
  const double limit = check_host_limit_bytes(&why);
  if (need_bytes <= limit) return true;
  if (launch_environment().rank == 0) {  // one note per job, not one per process
    std::cerr << fmt::format(
        "twinccl perf: {}: not checked (#wrong N/A): the check holds every rank's input on the "
        "host, {:.1f} GiB, over {:.1f} GiB ({}); lower -e or give -c 0\n",
        row, need_bytes / (1 << 30), limit / (1 << 30), why);
  }
  return false;
}

int launched_world_size(const std::string& backend) {
  // Under a launcher its world size is the one the backend takes (read_launch_environment is the
  // one place it is read); a process started alone drives every visible GPU, which only starting
  // the backend tells (one extra initialisation, no launcher to ask).
  const LaunchEnvironment& env = launch_environment();
  if (env.launcher != Launcher::none) return env.world_size;
  std::atomic<int> size{0};
  RunOptions ro;
  ro.backend = backend;
  run(ro, [&](Communicator& comm) { size = comm.size(); });
  return size;
}

RowPlan plan_row(const PerfOptions& o, OpKind kind, DataType dtype, ReduceKind op,
                 std::size_t count) {
  if (is_p2p_test(kind)) return plan_p2p_row(o, kind, dtype, count);
  const int n = o.ranks;
  RowPlan p;
  p.call.kind = kind;
  p.call.dtype = dtype;
  p.call.count = count;
  p.call.root = o.root;
  // On GPUs each process keeps every rank's input on the host for the reference: a row that would
  // not fit is timed and reported unchecked (N/A) rather than exhausting the host's memory (with
  // overcommit the allocation succeeds and filling it swaps or hangs). The emulator's sweep was
  // refused up front instead (check_emulator_memory).
  p.check = check_fits_in_host(o, check_host_bytes(p.call, n),
                               fmt::format("{} {} count {}", name(kind), name(dtype), count));
  p.algorithm = o.algorithm;
  // Unforced, the emulator runs the selection policy's choice on the loaded --topology (its
  // default without one), forced here so the row says what ran.
  if (p.algorithm.empty() && o.backend == "emu") {
    std::vector<int> ranks(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
    const sim::SelectionPolicy none;
    p.algorithm = (o.selection != nullptr ? *o.selection : none).resolve(p.call, ranks).schedule;
  }
  // The emulator is checked bit for bit against the reference's own fold order where its
  // algorithm folds in it (ring, direct, nvls); NCCL, and the emulator's other algorithms (tree,
  // hierarchical, halving_doubling, pat), fold in their own order, so their inputs give the same
  // result in any order.
  const bool emulated = o.backend == "emu" && sim::folds_in_ring_order(p.algorithm);
  for (int r = 0; r < n; ++r) {
    // An integer type needs an integral scalar (1, 2, 3); a floating one gets a fraction.
    const double scalar = !is_floating(dtype) ? static_cast<double>(r % 3 + 1)
                          : emulated          ? 1.0 / (r + 1)
                                              : order_free_premul_scalar(dtype, r);
    p.ops.push_back(op == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar)
                                                 : ReduceOp{op, 1.0});
    const std::size_t elements = send_elements(p.call, r, n);
    p.inputs.push_back(!p.check   ? Bytes{}
                       : emulated ? make_input(dtype, op, r, elements, 7)
                                  : make_order_free_input(dtype, op, r, elements, 7));
  }
  p.call.op = p.ops[0];
  return p;
}

void run_row(Communicator& comm, const PerfOptions& o, const RowPlan& p, RowResult& result,
             std::mutex& mu, const CallArena* arena) {
  if (is_p2p_test(p.call.kind)) return run_p2p_row(comm, o, p, result, mu, arena);
  const int n = o.ranks;
  const OpKind kind = p.call.kind;
  const DataType dtype = p.call.dtype;
  const std::size_t count = p.call.count;
  const auto me = static_cast<std::size_t>(comm.rank());
  for (int place = 0; place < 2; ++place) {
    CallShape shape{kind, dtype, p.ops[me], count, o.root, place == 1};
    CallSetup s = setup_call(comm, shape, arena);
    double slowest = 0;
    if (o.iterations > 0) {
      // NCCL rows were warmed up once per sweep, nccl-tests' way (warm_up_sweep); the emulator
      // runs each row in a run of its own, so it warms up here, back to back, then waits.
      Work warm;
      for (int i = 0; o.backend != "nccl" && i < o.warmup; ++i)
        warm = issue_call(comm, s, {.async_op = true});
      warm.wait();  // none issued: returns at once
      const NcclTestsTime t = time_like_nccl_tests(
          comm, o, row_label(kind, dtype, count, place == 1),
          [&] { return issue_call(comm, s, {.async_op = true}); }, true, arena);
      slowest = o.report_cputime ? t.cputime_us : t.time_us;
    }
    long long wrong = 0;
    for (int c = 0; p.check && c < std::max(o.check_count, 1) && wrong == 0; ++c) {
      s.fill_input(p.inputs[me]);
      issue_once_like_nccl_tests(comm, o, [&] { return issue_call(comm, s, {.async_op = true}); });
      Bytes before(recv_elements(p.call, comm.rank(), n) * size_of(dtype), 0);
      Bytes want = reference_output(p.call, p.inputs, p.ops, comm.rank(), before);
      std::vector<unsigned char> got = s.result_bytes();
      for (std::size_t i = 0; i < s.result_elements; ++i) {
        if (!results_agree(dtype, p.ops[0].kind, n, got.data(), want.data(), i)) ++wrong;
      }
      wrong = reduce_over_ranks(comm, wrong, DataType::int64, ReduceOp::sum(), arena);
    }
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      result.time_us[place] = slowest;
      result.wrong[place] = wrong;
      if (o.check && !p.check) result.unchecked[place] = true;
    }
  }
}

std::vector<RowSpec> sweep_rows(const PerfOptions& o, int nranks) {
  const std::vector<std::size_t> sizes = sweep_sizes(o);
  std::vector<RowSpec> rows;
  for (OpKind kind : o.collectives) {
    for (DataType dtype : o.dtypes) {
      for (ReduceKind op : sweeps_ops(kind) ? o.ops : std::vector<ReduceKind>{ReduceKind::sum}) {
        for (int cycle = 0; cycle < o.run_cycles; ++cycle) {  // -N: nccl-tests repeats the sizes
          for (std::size_t bytes : sizes) {
            const std::size_t count = count_for(kind, bytes, dtype, nranks);
            if (count > 0 || bytes == 0) rows.push_back({kind, dtype, op, count});
          }
        }
      }
    }
  }
  return rows;
}

bool starts_sweep(const std::vector<RowSpec>& rows, std::size_t i) {
  return i == 0 || rows[i].kind != rows[i - 1].kind || rows[i].dtype != rows[i - 1].dtype ||
         rows[i].op != rows[i - 1].op;
}

void check_world_size(const Communicator& comm, int ranks) {
  if (comm.size() != ranks) {
    throw ConfigError("the world has " + std::to_string(comm.size()) + " ranks but --ranks is " +
                      std::to_string(ranks) + "; pass --ranks equal to the launcher's world size");
  }
}

RunOptions run_options(const PerfOptions& o, const std::string& algorithm) {
  RunOptions ro;
  ro.backend = o.backend;
  ro.world_size = o.ranks;
  ro.algorithm = algorithm;
  return ro;
}

RowResult measure_row(const PerfOptions& o, OpKind kind, DataType dtype, ReduceKind op,
                      std::size_t count) {
  const RowPlan p = plan_row(o, kind, dtype, op, count);
  RowResult result;
  result.algorithm = p.algorithm;
  std::mutex mu;
  run(run_options(o, p.algorithm), [&](Communicator& comm) {
    check_world_size(comm, o.ranks);
    run_row(comm, o, p, result, mu);
  });
  return result;
}

PerfReport run_measured_perf(const PerfOptions& o) {
  PerfReport report;
  report.title = o.backend == "emu" ? "# twinccl perf: " + std::to_string(o.ranks) +
                                          " emulated ranks (threads) on this machine"
                                    : "# twinccl perf: NCCL on this machine's GPUs";
  report.header_lines.push_back(
      "backend " + o.backend + ": measured wall-clock time per call; " +
      std::string(o.check ? "#wrong: elements differing from the reference model"
                          : "not checked (-c 0)"));
  // NCCL chooses its algorithm and protocol per call and tells no caller (NCCL_ALGO/NCCL_PROTO only
  // restrict it; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs it): its rows say "NCCL chose".
  const bool nccl = o.backend == "nccl";
  report.header_lines.push_back(
      "iterations " + std::to_string(o.iterations) + ", warmup " + std::to_string(o.warmup) +
      (nccl ? std::string(", algorithm/protocol: NCCL's own choice, not reported to TwinCCL "
                          "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs it)")
       : !o.algorithm.empty() ? ", algorithm: " + o.algorithm
       : o.topology.empty()
           ? std::string(", algorithm: default (ring where it exists, else direct)")
           : ", algorithm: the tuner's choice on " + o.topology));
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  for (int r = 0; r < o.ranks; ++r) {
    report.config.devices.push_back(
        {r, r, host, o.backend == "emu" ? "emulated rank (thread)" : "GPU"});
  }
  const std::vector<std::size_t> sizes = sweep_sizes(o);
  if (o.backend == "emu") {  // refuse a sweep that cannot fit before running any of it
    for (OpKind kind : o.collectives) {
      for (DataType dtype : o.dtypes) {
        if (is_p2p_test(kind) || count_for(kind, sizes.back(), dtype, o.ranks) == 0) continue;
        check_emulator_memory(kind, dtype, sizes.back(),
                              count_for(kind, sizes.back(), dtype, o.ranks), o.root, o.ranks,
                              o.check, "lower -e or --ranks");
      }
    }
  }
  std::vector<RowSpec> specs = sweep_rows(o, o.ranks);
  // NCCL's one-rank path cannot scale float8 (the backend refuses the call, as NCCL would): one
  // GPU skips those rows instead of ending the sweep there.
  const auto fp8_scaled = [&](const RowSpec& r) {
    return o.backend == "nccl" && o.ranks == 1 && r.op == ReduceKind::premul_sum &&
           is_reducing(r.kind) &&
           (r.dtype == DataType::float8_e4m3 || r.dtype == DataType::float8_e5m2);
  };
  if (std::erase_if(specs, fp8_scaled) > 0) {
    report.header_lines.push_back(
        "skipped: mulsum (premul_sum) on float8 with one rank (NCCL's one-rank path cannot scale "
        "float8)");
  }
  // NCCL: one communicator for the whole sweep. The emulator: a run per row, each with the
  // algorithm it forces (what the row says ran).
  std::vector<RowResult> results;
  if (o.backend == "emu") {
    for (const RowSpec& r : specs) {
      results.push_back(measure_row(o, r.kind, r.dtype, r.op, r.count));
      results.back().finished_at = o.report_timestamps ? timestamp_now() : "";
    }
  } else {
    results = measure_rows_in_one_run(o, specs);
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const RowSpec& spec = specs[i];
    const RowResult& r = results[i];
    const OpKind kind = spec.kind;
    auto wrong = [&](int place) {
      return o.check && !r.unchecked[place] ? std::optional<long long>(r.wrong[place])
                                            : std::nullopt;
    };
    report.rows.push_back(
        PerfRow{kind, bytes_for(kind, spec.count, spec.dtype, o.ranks), spec.count, spec.dtype,
                spec.op, is_rooted(kind) ? o.root : -1,
                make_measurement(kind, spec.count, spec.dtype, o.ranks, r.time_us[0], wrong(0)),
                make_measurement(kind, spec.count, spec.dtype, o.ranks, r.time_us[1], wrong(1)),
                is_p2p_test(kind)     ? std::string("p2p")
                : nccl                ? std::string("NCCL chose")
                : r.algorithm.empty() ? std::string(default_algorithm(kind))
                                      : r.algorithm,
                "", std::nullopt, "", r.finished_at, ""});
  }
  return report;
}

}  // namespace twinccl::cli
