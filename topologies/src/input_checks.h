// Internal to the file readers: what every topology file goes through before a parser sees it,
// and how a bad value is shown in an error.
//
// How it works. The JSON and XML parsers recurse (or build an object per level) and an ordered
// JSON object finds its keys by linear search, so a file nested 100k deep crashes them and an
// object with 100k fields takes hours. One linear pass over the text, outside strings, comments
// and attribute values, counts nesting (and JSON object fields) and refuses a file past the caps
// in limits.h before parsing, naming the line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace twinccl::topo::input {

// The file's bytes; ConfigError when it cannot be opened, is a directory or is larger than
// limits::max_file_bytes. `what` names the format in messages ("topology file").
std::string read_file(const std::filesystem::path& path, std::string_view what);

// ConfigError "<source>:<line>: ..." for JSON nested deeper than limits::max_nesting_depth or an
// object with more than limits::max_object_members fields.
void check_json_shape(std::string_view text, const std::string& source);

// ConfigError "<source>:<line>: ..." for XML elements nested deeper than max_nesting_depth.
void check_xml_shape(std::string_view text, const std::string& source);

// `text` quoted for an error message (core's quoted_text): at most limits::max_echo_bytes bytes,
// control characters escaped, and the full length stated when cut: "\"AAAA...\" (10000000 bytes)".
// Names are quoted with '\'' ("unknown vertex 'leaf9'"), values with '"'.
std::string echo(std::string_view text, char quote = '"');

}  // namespace twinccl::topo::input
