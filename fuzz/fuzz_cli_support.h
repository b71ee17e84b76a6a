// For the fuzz targets that run the whole `twinccl` program (cli/run_main.cc) in-process: its
// exit code, with stdout thrown away and stderr kept for the target's checks.
//
//   std::string err;
//   const int code = twinccl::fuzz::run_main_captured(args, &err);  // args[0] = "twinccl"
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"

namespace twinccl::fuzz {

inline int run_main_captured(std::vector<std::string>& args, std::string* err) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, errors;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(errors.rdbuf());
  const int code = twinccl::cli::run_main(static_cast<int>(args.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  *err = errors.str();
  return code;
}

}  // namespace twinccl::fuzz
