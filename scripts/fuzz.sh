#!/usr/bin/env bash
# Coverage-guided fuzzing with clang's libFuzzer (+ASan, UBSan) of every fuzz/fuzz_<name>.cc, as
# long as asked, with fuzz/dict/<name>.dict where there is one (targets reading the same format
# share one by a link); findings land in
# build-fuzz/findings/<name>/ (turn each into a regression test).
#
#   scripts/fuzz.sh               # every target, 60 s each
#   scripts/fuzz.sh 600 trace_json  # one target, 10 minutes
# Without clang, CTest's "fuzz" label runs the same targets with the plain driver (fuzz/driver.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt install clang libclang-rt-14-dev)" >&2; exit 2; }
# clang 14 (Debian 12) lacks __builtin_source_location: force-include a stand-in (fuzz builds only).
# (A cache variable, not CXXFLAGS: the environment only seeds a build folder's first configure.)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_LIBFUZZER=ON \
  -DCMAKE_CXX_FLAGS="-include $PWD/fuzz/clang_source_location.h" \
  -DTWINCCL_SANITIZE=address -DTWINCCL_WITH_NCCL=OFF -DTWINCCL_WARNINGS_AS_ERRORS=OFF >/dev/null
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.cc; do n="${f#fuzz/fuzz_}"; names+=("${n%.cc}"); done
fi
targets=(); for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"
status=0
for n in "${names[@]}"; do
  mkdir -p "build-fuzz/findings/$n" "build-fuzz/corpus/$n"
  echo "== fuzz_$n for ${seconds}s"
  dict=(); [ -f "fuzz/dict/$n.dict" ] && dict=(-dict="fuzz/dict/$n.dict")  # the format's keywords
  ASAN_OPTIONS="detect_leaks=0 ${ASAN_OPTIONS:-}" "build-fuzz/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -max_len=1048576 -artifact_prefix="$PWD/build-fuzz/findings/$n/" "${dict[@]}" \
    "$PWD/build-fuzz/corpus/$n" "$PWD/fuzz/corpus/$n" || status=1
done
exit "$status"
