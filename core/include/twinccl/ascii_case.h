// Names matched whatever their case: ASCII letters lowered, every other byte (UTF-8 ones
// included) kept, independent of the C locale.
//
//   lowercase_ascii("Ring_LL128.JSON");  // "ring_ll128.json"
//   name_key("All-Reduce");              // "allreduce", as name_key("all_reduce")
#pragma once

#include <string>
#include <string_view>

namespace twinccl {

// `text` with A-Z made a-z.
inline std::string lowercase_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `text` lower-cased without '_' and '-', so "all_reduce", "AllReduce" and "all-reduce" match.
inline std::string name_key(std::string_view text) {
  std::string out;
  for (char c : lowercase_ascii(text)) {
    if (c != '_' && c != '-') out.push_back(c);
  }
  return out;
}

}  // namespace twinccl
