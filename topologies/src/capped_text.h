// Text cut to the cap a topology file's reader takes (limits::max_name_bytes for a name,
// max_description_bytes for a description): valid UTF-8, whole characters, "..." where it was cut.
// One owner for json_write's name/description and apply_edits' names, descriptions and labels.
//
//   head["description"] = capped(t.description(), limits::max_description_bytes);
//   name = capped_keeping_end(base + "+" + label, limits::max_name_bytes, label.size() + 1);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace twinccl::topo::detail {

// `text` (bytes that are not UTF-8 as \xNN) when it fits in `max_bytes`, else its start cut on a
// character boundary and "...", `max_bytes` in all.
std::string capped(std::string_view text, std::size_t max_bytes);

// The same, cut in the middle: the last `end_bytes` of `text` (whole characters) stay, so that a
// name's newest edit label or a description's edit note survives; the start fills the rest.
std::string capped_keeping_end(std::string_view text, std::size_t max_bytes, std::size_t end_bytes);

}  // namespace twinccl::topo::detail
