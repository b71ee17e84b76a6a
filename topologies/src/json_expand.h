// Internal to the JSON reader: repetition of entries ("repeat", "for_each") and {placeholder}
// substitution in names. Errors are ConfigError prefixed with `where` ("c.json: links[3]").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace twinccl::topo::json_format {

using Vars = std::vector<std::pair<std::string, long long>>;

[[noreturn]] void fail(const std::string& where, const std::string& message);

// Calls fn(vars, where) once per repetition of `entry`: "repeat": N loops i over 0..N-1;
// "for_each": {"node": 4, "i": [2, 5]} nests loops in the order written (counts or inclusive
// [first, last] ranges). `outer` variables (like a template's node) come first. `where` passed
// to fn names the entry and the loop values: "c.json: links[3] (node=1, i=5)".
void for_each_repetition(const nlohmann::ordered_json& entry, const std::string& where,
                         const Vars& outer,
                         const std::function<void(const Vars&, const std::string&)>& fn);

// How many times for_each_repetition() would call fn (at most 2^22; larger is a ConfigError).
long long repetition_count(const nlohmann::ordered_json& entry, const std::string& where);

// Replaces {var}, {var+K}, {var-K}, {var*K}, {var/K} and {var%K} (K an integer) in text.
std::string substitute(std::string_view text, const Vars& vars, const std::string& where);

}  // namespace twinccl::topo::json_format
