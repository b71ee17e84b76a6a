#include "output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include "flag_values.h"
#include "twinccl/errors.h"

namespace twinccl::cli {
namespace {

std::string reason(int error) {
  return error != 0 ? std::strerror(error) : "an unknown output error";
}

}  // namespace

void write_output_file(std::string_view flag, const std::string& path,
                       const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f.is_open()) {
    throw ConfigError(
        fmt::format("{} '{}': cannot create the file: {}", flag, shown(path), reason(errno)));
  }
  errno = 0;
  write(f);
  f.flush();
  int error = errno;
  if (f) {
    f.close();
    error = errno;
  }
  if (!f)
    throw Error(
        fmt::format("{} '{}': cannot write the file: {}", flag, shown(path), reason(error)));
}

void flush_standard_output(std::ostream& out) {
  errno = 0;
  out.flush();
  if (!out) throw Error("cannot write the output to standard output: " + reason(errno));
}

}  // namespace twinccl::cli
