// Force-included by scripts/fuzz.sh into clang's libFuzzer build only: clang before 15 has no
// __builtin_source_location, so libstdc++'s <source_location> declares nothing and the project
// (which uses std::source_location for call sites) does not compile. This stand-in has the same
// members, built on the __builtin_FILE/LINE/FUNCTION that clang 14 has. Never used by the product.
#pragma once

#include <version>

#if !defined(__cpp_lib_source_location) && defined(__clang__) && \
    !__has_builtin(__builtin_source_location)
#include <cstdint>

namespace std {  // NOLINT: a stand-in for a declaration the standard library could not provide here
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           std::uint_least32_t line = __builtin_LINE(),
                                           const char* function = __builtin_FUNCTION()) noexcept {
    source_location where;
    where.file_ = file;
    where.line_ = line;
    where.function_ = function;
    return where;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return 0; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
};
}  // namespace std
#endif
