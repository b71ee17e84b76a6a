// Output files (twinccl/output_file.h). How it works. check_output_path looks at the path (a
// folder? a device?) and at its folder (there? a folder? can a file be created in it? - a probe
// file is created and removed), so a wrong --plot or --trace ends the command before any work. A
// write goes to a temporary file beside the path (".NAME.PID-N.tmp", created exclusively), which is
// renamed over the path once complete and removed on any failure; a device or pipe (/dev/null,
// /dev/stdout, /dev/full) is written in place, and a symbolic link to a file keeps pointing at it
// (its target is replaced).
#include "twinccl/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <utility>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

namespace fs = std::filesystem;

// "<what> '<path>': <rest>"
std::string about(std::string_view what, const std::string& path, const std::string& rest) {
  return std::string(what) + " '" + shown_value(path) + "': " + rest;
}

std::string reason(int error) {
  return error != 0 ? std::strerror(error)
                    : "a write failed (the system kept no reason: a full disk?)";
}

// Where a write to `path` goes: the file itself, or what a symbolic link to a file names; and
// whether it is written in place (anything that exists and is not a regular file).
struct Target {
  std::string path;
  bool in_place = false;
};

Target target_of(const std::string& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  if (!fs::exists(s)) return {path, false};
  if (!fs::is_regular_file(s)) return {path, true};
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path real = fs::canonical(path, ec);
    if (!ec) return {real.string(), false};
  }
  return {path, false};
}

std::string folder_of(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? std::string(".") : folder.string();
}

// Creates an empty file beside `final_path` that no one else uses; "" and `error` set on failure.
std::string create_temporary(const std::string& final_path, int& error) {
  static std::atomic<unsigned> counter{0};
  const fs::path p(final_path);
  std::string name = p.filename().string();
  if (name.size() > 120) name.resize(120);  // the name stays under NAME_MAX (255)
  // Printable ASCII only: a program handed the name (gnuplot drops control bytes from it) writes
  // exactly this file, and a listing of the folder shows it plainly.
  for (char& c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '_';
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string candidate =
        (p.parent_path() /
         ("." + name + "." + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp"))
            .string();
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return candidate;
    }
    if (errno != EEXIST) {
      error = errno;
      return "";
    }
  }
  error = EEXIST;
  return "";
}

// Removes the temporary file unless it was renamed into place.
struct TemporaryFile {
  explicit TemporaryFile(std::string file) : path(std::move(file)) {}
  std::string path;
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

// The system reads a path up to its first NUL: 'dir/tr\0ace.json' would write 'dir/tr'.
void refuse_nul(std::string_view flag, const std::string& path) {
  if (path.find('\0') != std::string::npos)
    throw ConfigError(about(flag, path, "a file name cannot hold a NUL byte (\\x00)"));
}

// `write(file)` into a temporary file renamed over `path`, or into `path` itself for a device.
void commit(std::string_view flag, const std::string& path,
            const std::function<void(const std::string& file)>& write) {
  refuse_nul(flag, path);
  const Target target = target_of(path);
  if (target.in_place) {
    write(target.path);
    return;
  }
  int error = 0;
  TemporaryFile temporary{create_temporary(target.path, error)};
  if (temporary.path.empty()) {
    throw ConfigError(about(flag, path,
                            "cannot create a file in the folder '" +
                                shown_value(folder_of(target.path)) + "': " + reason(error)));
  }
  write(temporary.path);
  if (std::rename(temporary.path.c_str(), target.path.c_str()) != 0) {
    throw Error(about(flag, path, "cannot put the written file in place: " + reason(errno)));
  }
  temporary.path.clear();
}

}  // namespace

void check_output_path(std::string_view flag, const std::string& path) {
  if (path.empty()) throw ConfigError(std::string(flag) + " '': an empty file name");
  refuse_nul(flag, path);
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  // A name too long was found only when the written file was renamed into place, after the work.
  if (ec == std::errc::filename_too_long || ec == std::errc::too_many_symbolic_link_levels)
    throw ConfigError(about(flag, path, ec.message()));
  if (fs::is_directory(s)) {
    throw ConfigError(about(flag, path, "Is a directory; give the name of a file in it"));
  }
  if (fs::exists(s) && !fs::is_regular_file(s)) {  // a device or a pipe: written in place
    if (::access(path.c_str(), W_OK) != 0) {
      throw ConfigError(about(flag, path, "cannot write there: " + reason(errno)));
    }
    return;
  }
  const Target target = target_of(path);
  const std::string folder = folder_of(target.path);
  const fs::file_status f = fs::status(folder, ec);
  if (!fs::exists(f)) {
    throw ConfigError(about(flag, path,
                            "the folder '" + shown_value(folder) +
                                "' does not exist (No such file or directory); create it first"));
  }
  if (!fs::is_directory(f)) {
    throw ConfigError(
        about(flag, path, "'" + shown_value(folder) + "' is not a folder (Not a directory)"));
  }
  if (fs::exists(s) && ::access(target.path.c_str(), W_OK) != 0) {
    throw ConfigError(about(flag, path, "the file is not writable: " + reason(errno)));
  }
  int error = 0;
  const TemporaryFile probe{create_temporary(target.path, error)};
  if (probe.path.empty()) {
    throw ConfigError(about(
        flag, path,
        "cannot create a file in the folder '" + shown_value(folder) + "': " + reason(error)));
  }
}

void write_output_file(std::string_view flag, const std::string& path,
                       const std::function<void(std::ostream&)>& write) {
  commit(flag, path, [&](const std::string& file) {
    errno = 0;
    std::ofstream f(file, std::ios::out | std::ios::trunc);
    if (!f.is_open()) {
      throw ConfigError(about(flag, path, "cannot create the file: " + reason(errno)));
    }
    errno = 0;
    write(f);
    f.flush();
    int error = errno;
    if (f) {
      f.close();
      error = errno;
    }
    if (!f) {
      throw Error(about(flag, path, "cannot write the file: " + reason(error)));
    }
  });
}

void write_output_file_by(std::string_view flag, const std::string& path,
                          const std::function<void(const std::string& file)>& write) {
  commit(flag, path, [&](const std::string& file) {
    write(file);
    std::error_code ec;
    const fs::file_status s = fs::status(file, ec);
    if (fs::is_regular_file(s) && (fs::file_size(file, ec) == 0 || ec)) {
      throw Error(about(flag, path, "nothing was written"));
    }
  });
}

namespace {

// A part's name as a file-name token (part_output_paths).
std::string file_name_token(const std::string& part) {
  std::string label = part;
  const std::size_t space = label.find(' ');
  const std::string base = label.substr(0, space);
  if (base.find('/') != std::string::npos || base.ends_with(".json") || base.ends_with(".xml")) {
    label =
        fs::path(base).stem().string() + (space == std::string::npos ? "" : label.substr(space));
  }
  for (char& c : label) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_' || c == '=' || c == '@';
    if (!keep) c = '_';
  }
  if (label.size() > 80) label.resize(80);
  if (label.empty() || label == "." || label == "..") label = "part";
  return label;
}

}  // namespace

std::vector<std::string> part_output_paths(const std::string& path,
                                           const std::vector<std::string>& parts) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  if (parts.size() <= 1 || (fs::exists(s) && !fs::is_regular_file(s) && !fs::is_directory(s)))
    return std::vector<std::string>(parts.size(), path);
  const fs::path p(path);
  std::vector<std::string> out;
  for (const std::string& part : parts) {
    const std::string token = file_name_token(part);
    std::string name;
    for (int n = 1;; ++n) {
      name = (p.parent_path() / (p.stem().string() + "." + token +
                                 (n == 1 ? "" : "." + std::to_string(n)) + p.extension().string()))
                 .string();
      if (std::find(out.begin(), out.end(), name) == out.end()) break;
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace twinccl
