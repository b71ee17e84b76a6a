// How a message names one call: the operation, the communicator, the rank and the call site.
//
//   throw InvalidArgument(call_site_text("all_reduce", comm.name(), comm.rank(), op.where) +
//                         ": root=9 out of range [0, 8)");
//   // "all_reduce on comm 'world' rank 3 (train.cc:88): root=9 out of range [0, 8)"
//
// Every error about a call starts this way (docs/misuse.md), so a person can find the line and the
// rank at once, whichever part of the library noticed.
#pragma once

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

// A user's text (a name, an algorithm) as messages quote it: "'dp'", at most `max_bytes` of it
// ("'xxxx...' (52428800 bytes)"), control bytes written as \xNN, so that a message stays short
// and printable whatever the user passed.
// With `with_length` false the cut text ends in "...'" alone (split names: the NCCL backend sees
// a name cut to its record, so the length would differ between backends).
std::string quoted_text(std::string_view text, std::size_t max_bytes = 80, bool with_length = true);

}  // namespace twinccl
