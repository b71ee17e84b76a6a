// The rule that the ranks of one split color pass the same name, and the message when they do not,
// shared by the emulator and the NCCL backend (docs/misuse.md, "split").
//
//   std::vector<SplitNameAsked> asked{{0, "dp", "train.cc:12"}, {1, "tp", "train.cc:12"}};
//   std::string why = split_name_disagreement("world", 3, 0, asked);
//   // "split #3 on comm 'world': the ranks of color 0 disagree on the new communicator's name:
//   //  rank(s) 0 (train.cc:12) passed 'dp'; rank(s) 1 (train.cc:12) passed 'tp' (every rank of
//   //  one color must pass the same name)"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace twinccl {

// What one rank of a color asked split() for.
struct SplitNameAsked {
  int rank = 0;       // in the parent communicator
  std::string name;   // as passed ("" = none); compared whole, shown up to 80 characters
  std::string where;  // the call site, "file.cc:88"
};

// The longest name split() accepts: a communicator's name is in every message about it.
inline constexpr std::size_t kMaxCommNameBytes = 256;

// "" when `name` may name a communicator; else why not, for the caller's message: longer than
// kMaxCommNameBytes ("name 'xxx...' (52428800 bytes) is longer than 256 bytes (...)"), or a
// control byte such as NUL ("name 'a\x00b' holds a control byte ('\x00') at offset 1; ...").
std::string split_name_problem(std::string_view name);

// "" when every entry of `asked` (one color's ranks, in the new communicator's order) has the
// same name; else the MismatchError text naming, per name, the first 16 ranks and a call site.
std::string split_name_disagreement(std::string_view comm, std::uint64_t seq, int color,
                                    const std::vector<SplitNameAsked>& asked);

}  // namespace twinccl
