// How much memory an emulated `twinccl perf` row needs, checked before anything is allocated, so a
// size that cannot fit ends in a message naming the size, the ranks and the limit instead of
// std::bad_alloc (or the machine swapping) in the middle of a sweep.
#pragma once

#include <cstddef>
#include <string_view>

#include "perf_options.h"

namespace twinccl::cli {

// Bytes an emulated run of one call holds at its peak, summed over the ranks (each rank's own
// send and receive sizes: a rooted collective's root holds more than the others): the send and
// receive buffers, with `check` the input kept for the reference and the check's before, expected
// and result copies, and an allowance for an algorithm's staging. The factors and the peak RSS
// they were fitted to are in emu_memory.cc.
double emulator_bytes_needed(OpKind kind, DataType dtype, std::size_t count, int root, int nranks,
                             bool check);

// The most an emulated run may use: half the machine's physical memory, or half the address-space
// limit (ulimit -v) when that is lower. `why` receives which of the two it is.
double emulator_memory_limit_bytes(std::string* why = nullptr);

// Throws InvalidArgument when the run of `kind` at `bytes` (the sweep's size, `count` elements per
// call) on `nranks` emulated ranks (checked or not) needs more than the limit; `advice` ends the
// message
// ("lower -e or --ranks").
void check_emulator_memory(OpKind kind, DataType dtype, std::size_t bytes, std::size_t count,
                           int root, int nranks, bool check, std::string_view advice);

}  // namespace twinccl::cli
