// Reading tests/fidelity/figures/*.csv (format in figures_csv.h). Every field is checked here, so
// that a typo is reported as FILE:LINE with the field and its value, never as a wrong figure.
#include "figures_csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "twinccl/sim/nccl_tests_log.h"

namespace twinccl::fidelity {
namespace {

const std::vector<std::string> kCollectives = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"};
const std::vector<std::string> kAlgos = {"", "ring", "tree", "nvls", "nvls_tree", "pat"};
constexpr std::size_t kFields = 14;

bool one_of(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : ", ") + (s.empty() ? "''" : s);
  return out;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

// A whole non-negative integer, or false.
bool parse_size(const std::string& text, std::size_t* out) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *out = static_cast<std::size_t>(v);
  return true;
}

// A finite number written whole ("12.5", "1e3"), or false.
bool parse_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// One data line into `row`; returns "" or what is wrong.
std::string parse_row(const std::vector<std::string>& f, FigureRow* row) {
  if (f.size() != kFields) {
    return std::to_string(f.size()) + " fields, the header has " + std::to_string(kFields) +
           " (a field holding a comma goes in double quotes)";
  }
  const auto bad = [](const char* field, const std::string& value, const std::string& allowed) {
    return std::string(field) + " '" + value + "' is not " + allowed;
  };
  row->machine_class = f[0];
  if (!one_of(figure_classes(), f[0]))
    return bad("class", f[0], "one of " + joined(figure_classes()));
  row->source = f[1];
  row->machine = f[2];
  if (f[1].empty())
    return "source is empty (a short citation; the URL in docs/fidelity-sources.md)";
  row->preset = f[3];
  if (f[3].empty()) return "preset is empty (a `twinccl topo list` name)";
  row->settings = f[4];
  row->collective = f[5];
  if (!one_of(kCollectives, f[5])) return bad("collective", f[5], "one of " + joined(kCollectives));
  if (!parse_size(f[6], &row->bytes) || row->bytes == 0) {
    return bad("bytes", f[6], "a whole number of bytes above 0 (nccl-tests' size column)");
  }
  if (f[7] != "0" && f[7] != "1") return bad("in_place", f[7], "0 or 1");
  row->in_place = f[7] == "1";
  std::size_t g = 0;
  if (!parse_size(f[8], &g) || g < 1 || g > 1024) {
    return bad("gpus_per_thread", f[8], "nccl-tests' -g, 1 to 1024 (1: one process per GPU)");
  }
  row->gpus_per_thread = static_cast<int>(g);
  row->nccl_version = f[9];
  if (!f[9].empty() && sim::nccl_version_code(f[9]) == 0) {
    return bad("nccl_version", f[9], "a version such as 2.18.5, or empty for the newest model");
  }
  row->algo = f[10];
  if (!one_of(kAlgos, f[10]))
    return bad("algo", f[10], "empty (NCCL's choice) or one of " + joined(kAlgos));
  if (!parse_number(f[11], &row->measured_us) || row->measured_us <= 0) {
    return bad("measured_us", f[11], "a time in microseconds above 0");
  }
  if (!parse_number(f[12], &row->band) || row->band <= 0 || row->band > 100) {
    return bad("band", f[12], "a bound on |predicted / measured - 1| in (0, 100] (0.10 = 10%)");
  }
  row->reason = f[13];
  if (row->band > issue_band(row->bytes) + 1e-12 && row->reason.empty()) {
    return "band " + f[12] + " is wider than the issue's " +
           std::to_string(issue_band(row->bytes)) + " at " + f[6] +
           " B and the row gives no reason (say why, with its docs/fidelity.md "
           "pointer)";
  }
  if (row->collective == "sendrecv" && !row->algo.empty()) {
    return bad("algo", row->algo, "empty for sendrecv (grouped send/recv: no algorithm to force)");
  }
  return "";
}

}  // namespace

const std::vector<std::string>& figure_classes() {
  static const std::vector<std::string> classes = {"nvswitch-1node", "amd-1node", "amd-multinode",
                                                   "aws-efa",        "gcp-tcpxo", "roce-nvidia",
                                                   "ib-multinode",   "nvl72",     "one-gpu"};
  return classes;
}

double issue_band(std::size_t bytes) { return bytes >= 64 * kMiB ? 0.10 : 0.25; }

std::vector<std::string> split_csv_line(std::string_view line, std::string* error) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (true) {
    std::size_t start = i;
    while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
    if (start < line.size() && line[start] == '"') {
      std::string value;
      std::size_t j = start + 1;
      bool closed = false;
      while (j < line.size()) {
        if (line[j] == '"') {
          if (j + 1 < line.size() && line[j + 1] == '"') {
            value += '"';
            j += 2;
            continue;
          }
          closed = true;
          ++j;
          break;
        }
        value += line[j++];
      }
      if (!closed) {
        *error = "field " + std::to_string(fields.size() + 1) + ": a quote is not closed";
        fields.push_back(value);
        return fields;
      }
      while (j < line.size() && (line[j] == ' ' || line[j] == '\t' || line[j] == '\r')) ++j;
      if (j < line.size() && line[j] != ',') {
        *error = "field " + std::to_string(fields.size() + 1) + ": text after its closing quote";
        fields.push_back(value);
        return fields;
      }
      fields.push_back(value);
      if (j >= line.size()) return fields;
      i = j + 1;
    } else {
      const std::size_t comma = line.find(',', i);
      const std::string_view field =
          line.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i);
      if (field.find('"') != std::string_view::npos) {
        *error = "field " + std::to_string(fields.size() + 1) +
                 ": a quote inside an unquoted field (quote the whole field, doubling the quote)";
      }
      fields.push_back(trimmed(field));
      if (comma == std::string_view::npos) return fields;
      i = comma + 1;
    }
  }
}

FiguresRead read_figures_csv(std::string_view text, std::string_view file) {
  FiguresRead out;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = std::string(file) + ":" + std::to_string(number);
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    if (!header_seen) {
      if (content != kFiguresHeader) {
        out.errors.push_back(where + ": the header is '" + content + "', it must be '" +
                             std::string(kFiguresHeader) + "'");
        return out;
      }
      header_seen = true;
      continue;
    }
    std::string error;
    const std::vector<std::string> fields = split_csv_line(content, &error);
    FigureRow row;
    row.where = where;
    if (error.empty()) error = parse_row(fields, &row);
    if (!error.empty()) {
      out.errors.push_back(where + ": " + error);
      continue;
    }
    out.rows.push_back(std::move(row));
  }
  if (!header_seen) out.errors.push_back(std::string(file) + ": no header line");
  return out;
}

FiguresRead read_figures_dir(const std::string& dir, const std::string& shown_dir) {
  namespace fs = std::filesystem;
  FiguresRead all;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".csv") files.push_back(e.path());
  }
  if (ec) {
    all.errors.push_back(shown_dir + ": cannot list it: " + ec.message());
    return all;
  }
  if (files.empty()) all.errors.push_back(shown_dir + ": no .csv file");
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    const std::string shown = shown_dir + "/" + p.filename().string();
    std::ifstream in(p);
    if (!in.is_open()) {
      all.errors.push_back(shown + ": cannot open it");
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    FiguresRead one = read_figures_csv(text.str(), shown);
    all.rows.insert(all.rows.end(), one.rows.begin(), one.rows.end());
    all.errors.insert(all.errors.end(), one.errors.begin(), one.errors.end());
  }
  return all;
}

}  // namespace twinccl::fidelity
