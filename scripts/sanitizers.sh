#!/usr/bin/env bash
# The emulator and core tests under ThreadSanitizer, then under AddressSanitizer + UBSan (issue 4).
# Builds only what those tests need (core, trace, emu, tests_core, tests_emu, and under ASan the
# fuzz targets; no NCCL, and tests_emu compiles no simulator) in build-tsan/ and build-asan/, runs
# the fast tests (ctest labels emu and core, plus fuzz under ASan; emu_sim, the emulator with the
# simulator, is not built here) with a smaller random-program count.
# Warnings are not errors here (the normal build enforces them; -O1 + sanitizers warns differently).
#
#   scripts/sanitizers.sh            # both
#   scripts/sanitizers.sh thread     # one of: thread, address
# TWINCCL_SANITIZER_PROGRAMS: random programs per run (default 150).
set -uo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(thread address)
programs="${TWINCCL_SANITIZER_PROGRAMS:-150}"
jobs="$(nproc)"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"
# Long sweeps the normal build already runs (minutes under a sanitizer; the random programs cover
# the same paths here).
# The deadlock tests at the 4096-rank cap: ~15 GB under ThreadSanitizer (the normal build runs
# them in seconds; the sanitizers see the same checker code in the smaller deadlock tests).
slow='every algorithm runs correctly|conformance on the schedule path|deadlock at scale'
# The fuzz targets (fuzz/fuzz_<name>.cc) run briefly with the plain driver under ASan+UBSan too.
fuzz_targets=()
for f in fuzz/fuzz_*.cc; do [ -e "$f" ] && fuzz_targets+=("$(basename "${f%.cc}")"); done
status=0
for kind in "${kinds[@]}"; do
  case "$kind" in
    thread) dir=build-tsan exclude="$slow" labels='^(emu|core)$' extra=() ;;
    address) dir=build-asan exclude="$slow" labels='^(emu|core|fuzz)$' extra=("${fuzz_targets[@]}") ;;
    *) echo "sanitizers.sh: unknown sanitizer '$kind' (thread or address)" >&2; exit 2 ;;
  esac
  echo "== $kind sanitizer: building tests_core, tests_emu ${extra[*]} in $dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_SANITIZE="$kind" -DTWINCCL_WITH_NCCL=OFF \
    -DTWINCCL_WARNINGS_AS_ERRORS=OFF >/dev/null || exit 1
  cmake --build "$dir" -j "$jobs" --target tests_core tests_emu "${extra[@]}" || exit 1
  echo "== $kind sanitizer: ctest -L '$labels' (TWINCCL_RANDOM_PROGRAMS=$programs)"
  TWINCCL_RANDOM_PROGRAMS="$programs" ctest --test-dir "$dir" -L "$labels" -E "$exclude" --output-on-failure \
    -j "$jobs" --timeout 600 || status=1
done
exit "$status"
