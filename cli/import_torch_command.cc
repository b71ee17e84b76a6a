// `twinccl import-torch-trace RANK0.json[.gz] RANK1.json[.gz] ... -o job.trace.json`: a real
// PyTorch job's profiler traces (torch.profiler / Kineto export_chrome_trace, one file per rank)
// as a twinccl-trace, which `twinccl replay job.trace.json --topology T` replays: how long the
// job's communication would take on T (docs/traces.md, "From a PyTorch profiler trace").
// The files are streamed (gzip by its magic bytes, zlib), imported (trace/torch_import.h), checked
// as replay checks a trace (sim::check_trace: counterparts, order, no deadlock) and written.
// --replicate-missing-ranks builds the ranks without a file from the lowest given one (SPMD).
#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <streambuf>

#include "commands.h"
#include "flag_values.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"
#include "twinccl/trace/trace_file.h"
#include "twinccl/utf8_text.h"

namespace twinccl::cli {
namespace {

// A decompression bomb (a few MB of gzip inflating to the 4 GiB cap of JSON) is refused early by
// the ratio of inflated to compressed bytes, not after minutes of inflating:
//   * DEFLATE's ratio is at most ~1032:1 (a 258-byte match coded in ~2 bits, RFC 1951 3.2.5);
//   * gzip shrinks JSON text (Kineto traces included) about 5-30x;
// so past its first kGzipRatioFreeBytes, a file inflating over kMaxGzipRatio times the compressed
// bytes read so far is no profiler trace. A real one can still be imported decompressed.
constexpr std::uint64_t kMaxGzipRatio = 256;
constexpr std::uint64_t kGzipRatioFreeBytes = std::uint64_t{64} << 20;

// A gzip file's text, decompressed as it is read (zlib): the file is never held whole.
class GzipBuffer final : public std::streambuf {
 public:
  explicit GzipBuffer(const std::string& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) throw ConfigError("cannot read '" + shown(path) + "'");
  }
  ~GzipBuffer() override { gzclose(file_); }
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

 protected:
  int_type underflow() override {
    const int n = gzread(file_, block_.data(), static_cast<unsigned>(block_.size()));
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(file_, &code);
      throw ConfigError("'" + shown(path_) + "': not a valid gzip file (" + why + ")");
    }
    if (n == 0) return traits_type::eof();
    inflated_ += static_cast<std::uint64_t>(n);
    const z_off_t read = gzoffset(file_);  // compressed bytes read so far
    const std::uint64_t compressed = read > 0 ? static_cast<std::uint64_t>(read) : 1;
    if (inflated_ > kGzipRatioFreeBytes && inflated_ / kMaxGzipRatio > compressed) {
      throw ConfigError(fmt::format(
          "'{}': inflates to over {} times its compressed size ({} bytes from {} compressed): "
          "not a profiler trace (a decompression bomb?); a real one can be imported "
          "decompressed (gunzip it first)",
          shown(path_), kMaxGzipRatio, inflated_, compressed));
    }
    setg(block_.data(), block_.data(), block_.data() + n);
    return traits_type::to_int_type(block_[0]);
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
  std::uint64_t inflated_ = 0;
  std::array<char, std::size_t{1} << 16> block_{};
};

class GzipStream final : public std::istream {
 public:
  explicit GzipStream(const std::string& path) : std::istream(nullptr), buffer_(path) {
    rdbuf(&buffer_);
  }

 private:
  GzipBuffer buffer_;
};

// The file's text as a stream; a gzip file (magic 1f 8b) decompressed as it is read. The
// importer reads it once, to its end, and refuses past its cap of bytes.
std::unique_ptr<std::istream> open_profile(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(open_input_file("profile", path));
  char magic[2] = {0, 0};
  in->read(magic, 2);
  if (!*in && !in->eof()) throw ConfigError("cannot read '" + shown(path) + "'");
  const bool gz = in->gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                  static_cast<unsigned char>(magic[1]) == 0x8b;
  if (gz) return std::make_unique<GzipStream>(path);
  in->clear();
  in->seekg(0);
  if (!*in) throw ConfigError("cannot read '" + shown(path) + "'");
  return in;
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
  cmd->add_flag("--replicate-missing-ranks", o.replicate_missing_ranks,
                "build the ranks without a file from the lowest given rank's (SPMD jobs where "
                "every rank issues the same collectives; refused with send/recv or groups whose "
                "other ranks' counterparts cannot be told)");
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
      program = cut_utf8(program, trace::kMaxTraceProgramBytes - 3) + "...";
  }
  // One file streamed (and decompressed) at a time: memory is that of the events kept.
  trace::TorchImport job = trace::import_torch_trace_streams(
      o.profiles.size(),
      [&](std::size_t i) {
        return trace::TorchTraceStream{o.profiles[i], open_profile(o.profiles[i])};
      },
      {.program = program, .replicate_missing_ranks = o.replicate_missing_ranks});
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
  const std::string replicated =
      job.replicated.empty()
          ? ""
          : fmt::format(" ({} replicated from rank {} by --replicate-missing-ranks)",
                        job.replicated.size(), job.replicated_from);
  out << fmt::format("imported {} rank(s){}, {} communicator(s), {} operation(s){}{}\n", world,
                     replicated, job.trace.communicators.size(), ops, by_kind.empty() ? "" : ": ",
                     by_kind);
  out << fmt::format("compute between them: {:.3f} ms per rank (mean, from the GPU timeline)\n",
                     compute_s * 1e3 / world);
  for (const std::string& note : job.notes) out << "note: " << note << "\n";
  // A preset with a GPU per rank: one DGX, as many as the ranks need (8 GPUs each, up to 1024),
  // or GB200 NVL72 racks (72 GPUs each, up to 128); more ranks than any preset has GPUs: a file.
  const std::string topology = world <= 8      ? "dgx-h100"
                               : world <= 8192 ? fmt::format("h100-cluster-{}", (world + 7) / 8)
                               : world <= 9216
                                   ? fmt::format("gb200-nvl72-cluster-{}", (world + 71) / 72)
                                   : std::string();
  if (topology.empty()) {
    out << fmt::format(
        "wrote {}; no preset has {} GPUs: replay it on a topology file with as many (start "
        "one from the largest preset, `twinccl topo show h100-cluster-1024 --format json -o "
        "mine.json`, then edit it to {} GPUs; docs/topologies.md)\n",
        shown(o.output), world, world);
  } else {
    out << fmt::format("wrote {}; replay it with: twinccl replay {} --topology {}\n",
                       shown(o.output), shown(o.output), topology);
  }
  return 0;
}

}  // namespace twinccl::cli
