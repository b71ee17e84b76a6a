// Standard output as valid UTF-8: while a command runs, every byte it prints (tables, CSV, notes)
// passes through a filter that keeps valid UTF-8 and writes any other byte as \xNN
// (twinccl/utf8_text.h), so a Latin-1 topology file name in a whatif table or CSV cannot make the
// output invalid. A character split across two writes is held until its last byte arrives.
//
//   Utf8Output filtered(std::cout);   // in run_main, around the command
//   run_whatif_command(o, std::cout);
//   filtered.finish();                // writes what is held; flush_standard_output checks it
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace twinccl::cli {

class Utf8Filter : public std::streambuf {
 public:
  explicit Utf8Filter(std::streambuf* target) : target_(target) {}
  // Writes everything held, an unfinished character as \xNN bytes; false when the write failed.
  bool finish();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool emit(bool final);
  std::streambuf* target_;
  std::string pending_;
};

// Puts a Utf8Filter in front of `out` for its lifetime.
class Utf8Output {
 public:
  explicit Utf8Output(std::ostream& out) : out_(out), filter_(out.rdbuf()) {
    old_ = out_.rdbuf(&filter_);
  }
  ~Utf8Output() {
    filter_.finish();
    out_.rdbuf(old_);
  }
  Utf8Output(const Utf8Output&) = delete;
  Utf8Output& operator=(const Utf8Output&) = delete;
  // Writes what is held; sets badbit on `out` when that fails.
  void finish() {
    if (!filter_.finish()) out_.setstate(std::ios::badbit);
  }

 private:
  std::ostream& out_;
  Utf8Filter filter_;
  std::streambuf* old_ = nullptr;
};

}  // namespace twinccl::cli
