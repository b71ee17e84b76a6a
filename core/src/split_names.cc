// The split-name rule's message (see twinccl/split_names.h).
#include "twinccl/split_names.h"

#include <algorithm>
#include <utility>

#include "twinccl/call_site_text.h"

namespace twinccl {
namespace {

// Up to 80 characters of a user's name, quoted, control bytes escaped.
std::string quoted(const std::string& name) { return quoted_text(name, 80, false); }

}  // namespace

std::string split_name_disagreement(std::string_view comm, std::uint64_t seq, int color,
                                    const std::vector<SplitNameAsked>& asked) {
  // The names in the order of their first rank (so every backend words it alike).
  std::vector<std::pair<std::string_view, std::vector<const SplitNameAsked*>>> by_name;
  std::size_t ranks_with_other_names = 0;
  for (const SplitNameAsked& a : asked) {
    auto same = std::find_if(by_name.begin(), by_name.end(),
                             [&](const auto& entry) { return entry.first == a.name; });
    if (same == by_name.end() && by_name.size() == 16) {  // bounded for 4096 different names
      ++ranks_with_other_names;
      continue;
    }
    if (same == by_name.end()) {
      by_name.push_back({a.name, {}});
      same = by_name.end() - 1;
    }
    same->second.push_back(&a);
  }
  if (by_name.size() < 2) return "";
  std::string text = "split #" + std::to_string(seq) + " on comm '" + std::string(comm) +
                     "': the ranks of color " + std::to_string(color) +
                     " disagree on the new communicator's name:";
  std::string sep = " ";
  for (const auto& [name, ranks] : by_name) {
    text += sep + "rank(s) ";
    for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
      text += (i ? "," : "") + std::to_string(ranks[i]->rank);
    if (ranks.size() > 16) text += ",...";
    text += " (" + ranks[0]->where + ") passed " +
            (name.empty() ? std::string("no name") : quoted(std::string(name)));
    sep = "; ";
  }
  if (ranks_with_other_names > 0)
    text += "; " + std::to_string(ranks_with_other_names) + " more rank(s) passed other names";
  return text + " (every rank of one color must pass the same name)";
}

std::string split_name_problem(std::string_view name) {
  if (name.size() > kMaxCommNameBytes) {
    return "name " + quoted_text(name, 40) + " is longer than " +
           std::to_string(kMaxCommNameBytes) +
           " bytes (it is part of every message about the communicator)";
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    auto byte = static_cast<unsigned char>(name[i]);
    if (byte < 0x20 || byte == 0x7f) {
      return "name " + quoted_text(name) + " holds a control byte (" +
             quoted_text(name.substr(i, 1)) + ") at offset " + std::to_string(i) +
             "; use printable text";
    }
  }
  return {};
}

}  // namespace twinccl
