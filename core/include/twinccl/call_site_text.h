// How a message names one call: the operation, the communicator, the rank and the call site.
//
//   throw InvalidArgument(call_site_text("all_reduce", comm.name(), comm.rank(), op.where) +
//                         ": root=9 out of range [0, 8)");
//   // "all_reduce on comm 'world' rank 3 (train.cc:88): root=9 out of range [0, 8)"
//
// Every error about a call starts this way (docs/misuse.md), so a person can find the line and the
// rank at once, whichever part of the library noticed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace twinccl {

// "<operation> on comm '<comm>' rank <rank> (<file>:<line>)". `operation` may carry more than the
// name ("all_reduce #3", "all_gather's tensor_list[1] (a recv)").
std::string call_site_text(std::string_view operation, std::string_view comm, int rank,
                           const std::source_location& where);
// The same without the call site: "<operation> on comm '<comm>' rank <rank>".
std::string call_site_text(std::string_view operation, std::string_view comm, int rank);

// "file.cc:88": the file's name (no directories) and line.
std::string describe_call_site(const std::source_location& where);

// A memory address as messages print it: "0x7f3a1c000040".
std::string address_text(std::uintptr_t address);

// The one rule for echoing a user's text (a name, a value, a path) in a message, so that a message
// stays short and printable whatever the user passed.
//
// Quoted: "'dp'", at most `max_bytes` of it, cut on a UTF-8 character boundary
// ("'xxxx...' (52428800 bytes)"), control bytes written as \xNN, the quote and '\' escaped with a
// '\'. With `with_length` false the cut text ends in "...'" alone (split names: the NCCL backend
// sees a name cut to its record, so the length would differ between backends).
std::string quoted_text(std::string_view text, std::size_t max_bytes = 80, bool with_length = true,
                        char quote = '\'');
// Unquoted, ASCII only (a value inside quotes the caller writes, a byte of an unknown encoding):
// at most `max_chars` characters of output, every byte outside printable ASCII as \xNN, "..." when
// cut.
std::string shown_value(std::string_view text, std::size_t max_chars = 64);

}  // namespace twinccl
