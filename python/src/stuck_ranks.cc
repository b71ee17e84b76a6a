// StuckRanks (see stuck_ranks.h).
#include "stuck_ranks.h"

#include <pybind11/pybind11.h>

#include <cstdio>
#include <cstdlib>

namespace py = pybind11;

namespace twinccl::python {

StuckRanks::StuckRanks(int world_size, bool exit_if_stuck)
    : n_(world_size > 0 ? world_size : 0),
      exit_(exit_if_stuck),
      returned_(new std::atomic<bool>[static_cast<std::size_t>(n_)]) {
  for (int r = 0; r < n_; ++r) returned_[static_cast<std::size_t>(r)] = false;
}

void StuckRanks::returned(int rank) {
  if (rank >= 0 && rank < n_) returned_[static_cast<std::size_t>(rank)] = true;
}

void StuckRanks::check(std::chrono::steady_clock::time_point since, const std::string& why,
                       int holder) {
  if (reported_ || std::chrono::steady_clock::now() - since < kReportAfter) return;
  std::string ranks;
  int count = 0;
  for (int r = 0; r < n_; ++r) {
    if (returned_[static_cast<std::size_t>(r)]) continue;
    if (++count <= 16) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (count == 0) return;
  reported_ = true;
  if (count > 16) ranks += " and " + std::to_string(count - 16) + " more";
  const std::string blocked =
      " blocked outside Python and TwinCCL (in C++ code it called, such as a torch wait, or a "
      "lock), where no stop reaches it";
  std::string text = "twinccl.run: rank" + std::string(count > 1 ? "s " : " ") + ranks +
                     (count > 1 ? " have" : " has") + " not returned " +
                     std::to_string(kReportAfter.count()) + " s after the run was stopped (" + why +
                     "): ";
  if (holder >= 0) {
    text += "rank " + std::to_string(holder) + " holds the turn to run Python and is" + blocked +
            (count > 1 ? "; the others wait for the turn" : "");
  } else {
    text += (count > 1 ? "each is" : "it is") + blocked;
  }
  text += exit_ ? "; the launcher ends the process (exit status 1), as torchrun ends the workers "
                  "left when one failed"
                : "; this process cannot end those threads: interrupt or kill it";
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  if (exit_) {
    try {  // what the ranks printed, still in Python's buffers
      py::module_ sys = py::module_::import("sys");
      sys.attr("stdout").attr("flush")();
      sys.attr("stderr").attr("flush")();
    } catch (const std::exception&) {
    }
    std::fflush(stdout);
    std::_Exit(1);
  }
}

}  // namespace twinccl::python
