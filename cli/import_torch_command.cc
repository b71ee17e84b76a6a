// `twinccl import-torch-trace RANK0.json[.gz] RANK1.json[.gz] ... -o job.trace.json`: a real
// PyTorch job's profiler traces (torch.profiler / Kineto export_chrome_trace, one file per rank)
// as a twinccl-trace, which `twinccl replay job.trace.json --topology T` replays: how long the
// job's communication would take on T (docs/traces.md, "From a PyTorch profiler trace").
// The files are read (gzip by its magic bytes, zlib), imported (trace/torch_import.h), checked as
// replay checks a trace (sim::check_trace: counterparts, order, no deadlock) and written.
#include <fmt/format.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include "commands.h"
#include "flag_values.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"
#include "twinccl/trace/trace_file.h"

namespace twinccl::cli {
namespace {

constexpr std::size_t kCap = trace::kMaxTorchTraceBytes;

std::string cap_message(const std::string& path) {
  return fmt::format(
      "'{}': more than {} bytes of JSON (the cap per file); profile a shorter "
      "window (torch.profiler.schedule with active=1)",
      shown(path), kCap);
}

// The file's text; a gzip file (magic 1f 8b) decompressed, at most kCap bytes either way.
std::string read_profile(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw ConfigError("cannot read '" + shown(path) + "': no such file");
  if (!std::filesystem::is_regular_file(status))
    throw ConfigError("cannot read '" + shown(path) + "': not a regular file");
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  if (!in && !in.eof()) throw ConfigError("cannot read '" + shown(path) + "'");
  const bool gz = in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                  static_cast<unsigned char>(magic[1]) == 0x8b;
  std::string text;
  if (!gz) {
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw ConfigError("cannot read '" + shown(path) + "'");
    if (size > kCap) throw ConfigError(cap_message(path));
    in.seekg(0);
    text.resize(size);
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::size_t>(in.gcount()) != size)
      throw ConfigError("cannot read '" + shown(path) + "': the file changed while read");
    return text;
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw ConfigError("cannot read '" + shown(path) + "'");
  std::string chunk(std::size_t{1} << 20, '\0');
  for (;;) {
    const int n = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(f, &code);
      gzclose(f);
      throw ConfigError("'" + shown(path) + "': not a valid gzip file (" + why + ")");
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kCap) {
      gzclose(f);
      throw ConfigError(cap_message(path));
    }
    text.append(chunk.data(), static_cast<std::size_t>(n));
  }
  gzclose(f);
  return text;
}

}  // namespace

CLI::App* add_import_torch_command(CLI::App& app, ImportTorchOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "import-torch-trace",
      "turn a PyTorch job's profiler traces (one per rank) into a trace for `twinccl replay`");
  cmd->add_option("profiles", o.profiles,
                  "torch.profiler chrome traces (export_chrome_trace), one per rank, .json or "
                  ".json.gz")
      ->required();
  cmd->add_option("--output,-o", o.output, "the twinccl-trace to write")->required();
  cmd->add_option("--program", o.program, "free text stored in the trace (default: the files)");
  return cmd;
}

int run_import_torch_command(const ImportTorchOptions& o, std::ostream& out) {
  if (o.profiles.size() > trace::kMaxTorchTraceFiles) {
    throw InvalidArgument(fmt::format("{} profiles is over the cap of {} ranks", o.profiles.size(),
                                      trace::kMaxTorchTraceFiles));
  }
  check_output_path("--output", o.output);
  std::string sources;
  for (std::size_t i = 0; i < o.profiles.size() && i < 3; ++i)  // the program text names a few
    sources += (i > 0 ? " " : "") + std::filesystem::path(o.profiles[i]).filename().string();
  if (o.profiles.size() > 3) sources += fmt::format(" ... ({} files)", o.profiles.size());
  std::string program = o.program;
  if (program.empty()) {
    program = "imported from PyTorch profiler traces: " + sources;
    if (program.size() > trace::kMaxTraceProgramBytes)
      program = program.substr(0, trace::kMaxTraceProgramBytes - 3) + "...";
  }
  // One file read (and decompressed) at a time: a job's files need not fit in memory together.
  trace::TorchImport job = trace::import_torch_traces(
      o.profiles.size(),
      [&](std::size_t i) {
        return trace::TorchTraceText{o.profiles[i], read_profile(o.profiles[i])};
      },
      program);
  try {
    sim::check_trace(job.trace, "the imported trace");  // nothing is written when it fails
  } catch (const DeadlockError& e) {  // ranks that would wait for each other: the input's error
    throw ConfigError(e.what());
  }
  write_output_file("--output", o.output,
                    [&](std::ostream& f) { f << trace::to_json(job.trace) << "\n"; });
  std::map<std::string, std::size_t> kinds;
  std::size_t ops = 0;
  double compute_s = 0;
  for (const trace::RankTrace& r : job.trace.ranks) {
    ops += r.ops.size();
    for (const trace::TraceOp& op : r.ops) ++kinds[std::string(name(op.kind))];
    for (const trace::TraceEvent& e : r.events) compute_s += e.seconds;
  }
  std::string by_kind;
  for (const auto& [kind, n] : kinds)
    by_kind += fmt::format("{}{} {}", by_kind.empty() ? "" : ", ", kind, n);
  const int world = job.trace.world_size();
  out << fmt::format("imported {} rank(s), {} communicator(s), {} operation(s){}{}\n", world,
                     job.trace.communicators.size(), ops, by_kind.empty() ? "" : ": ", by_kind);
  out << fmt::format("compute between them: {:.3f} ms per rank (mean, from the GPU timeline)\n",
                     compute_s * 1e3 / world);
  for (const std::string& note : job.notes) out << "note: " << note << "\n";
  // A topology with a GPU per rank: one DGX, or as many as the ranks need (8 GPUs each).
  const std::string topology =
      world <= 8 ? "dgx-h100" : fmt::format("h100-cluster-{}", (world + 7) / 8);
  out << fmt::format("wrote {}; replay it with: twinccl replay {} --topology {}\n", shown(o.output),
                     shown(o.output), topology);
  return 0;
}

}  // namespace twinccl::cli
