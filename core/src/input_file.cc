// Input files (twinccl/input_file.h): the path looked at before opening, then read in blocks of
// 64 KiB with the size checked after each. The path is shown as core's quoted_text shows it.
#include "twinccl/input_file.h"

#include <cerrno>
#include <cstring>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl {

[[noreturn]] static void refuse(std::string_view what, const std::filesystem::path& path,
                                const std::string& why) {
  throw ConfigError("cannot read " + std::string(what) + " " + quoted_text(path.string(), 256) +
                    ": " + why);
}

std::ifstream open_input_file(std::string_view what, const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    const bool other = ec && ec != std::errc::no_such_file_or_directory;  // a name too long, ...
    refuse(what, path, other ? ec.message() : "no such file");
  }
  if (std::filesystem::is_directory(status))
    refuse(what, path, "it is a directory, not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(what, path, std::strerror(errno));
  return in;
}

std::string read_input_file(std::string_view what, const std::filesystem::path& path,
                            std::size_t max_bytes, std::string_view over_cap_advice) {
  std::ifstream in = open_input_file(what, path);
  std::string text, block(1 << 16, '\0');
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    text.append(block, 0, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      refuse(what, path,
             "more than " + std::to_string(max_bytes) + " bytes (the cap per file" +
                 std::string(over_cap_advice) + ")");
    }
  }
  if (in.bad()) refuse(what, path, "a read error");
  return text;
}

}  // namespace twinccl
