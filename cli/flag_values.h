// Strict parsing of command-line values: every bad value is an InvalidArgument naming the flag
// and the value as typed (bounded, with unprintable bytes escaped), never a silent default.
//
//   int n = parse_int_flag("-n", "5", 1, 1000000);        // 5
//   std::size_t b = parse_bytes_flag("-b", "64K");          // 65536
//   parse_int_flag("-n", "0x10", 1, 100);                  // throws: "-n '0x10': expected ..."
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace twinccl::cli {

// `text` as it may appear in a message: at most 64 characters, bytes outside printable ASCII
// written as \xNN, "..." when cut.
std::string shown(std::string_view text);

// Decimal digits only (no sign, spaces, base prefixes or exponents), in [min, max]; `why_max`
// ends the message when there is a reason for the bound.
long long parse_int_flag(std::string_view flag, const std::string& text, long long min,
                         long long max, std::string_view why_max = {});

// A finite decimal number (digits, an optional fraction and exponent; no nan, inf or hex).
double parse_number_flag(std::string_view flag, const std::string& text);

// Bytes with an optional 1024-based suffix: 8, 64K, 1.5M, 128M, 8G, 1T (KB/KiB/MB/... and a final
// B accepted, case-insensitive); a fraction is rounded down to whole bytes, as nccl-tests does.
// No signs, exponents or values above kMaxSizeBytes.
inline constexpr std::size_t kMaxSizeBytes = std::size_t{1} << 50;  // 1 PiB
std::size_t parse_bytes_flag(std::string_view flag, const std::string& text);

// --proto: LL, LL128 or Simple exactly, as NCCL_PROTO's documentation spells them (every command
// alike: perf, whatif, replay, compare); throws InvalidArgument naming the flag and the value.
void check_protocol_flag(std::string_view flag, const std::string& text);

// "1073741824 bytes (1 GiB)": a byte count with its nearest binary unit, for messages.
std::string describe_bytes(double bytes);

// A CSV field (--format csv): the text, in quotes with its quotes doubled when it holds a comma,
// a quote or a newline.
std::string csv_field(std::string_view text);

}  // namespace twinccl::cli
