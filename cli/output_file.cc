// Standard output checked at the end of a command (the files themselves: core's output_file.cc).
#include "output_file.h"

#include <cerrno>
#include <cstring>
#include <ostream>

#include "twinccl/errors.h"

namespace twinccl::cli {

void flush_standard_output(std::ostream& out) {
  errno = 0;
  out.flush();
  if (!out) {
    throw Error(std::string("cannot write the output to standard output: ") +
                (errno != 0 ? std::strerror(errno)
                            : "a write failed (the system kept no reason: a full disk?)"));
  }
}

}  // namespace twinccl::cli
