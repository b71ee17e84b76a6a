#!/usr/bin/env bash
# The out-of-tree consumer (examples/consumer) built the two ways a user builds it (CTest, label
# package; cmake/TwinCCLPackageTests.cmake passes the variables below):
#   check_consumer.sh installed     cmake --install of this build into $WORK/prefix, then
#                                   find_package(TwinCCL) and a pkg-config compile against it
#   check_consumer.sh subdirectory  add_subdirectory(<TwinCCL sources>) in a fresh build
# Each builds the emulator-only program (TwinCCL::twinccl), runs it (all_reduce, 4 ranks, checked),
# and proves it needs no CUDA/NCCL and no SimGrid: no NEEDED entry, no NCCL library or simulator on
# its link line, and asking it for TWINCCL_BACKEND=nccl or TWINCCL_TOPOLOGY says what was not
# linked. The program linked with TwinCCL::simtime (CMake; pkg-config twinccl-simtime) prints the
# simulated time of its run on TWINCCL_TOPOLOGY=dgx-h100. Where TwinCCL has the NCCL backend,
# the program linked with TwinCCL::nccl must find it (it fails loading the missing libnccl instead).
# Environment: TWINCCL_SOURCE_DIR, TWINCCL_BINARY_DIR, WORK (scratch folder, emptied),
# CONSUMER_CMAKE_ARGS (;-separated: compiler, launcher, build type, warnings, NCCL choice).
set -u
mode="$1"
src="$TWINCCL_SOURCE_DIR"
work="$WORK"
IFS=';' read -r -a cmake_args <<< "${CONSUMER_CMAKE_ARGS:-}"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work" && mkdir -p "$work"
missing=/nonexistent/libnccl.so.2

# $1: program. Runs it on the emulator and checks what it links.
check_emulator_program() {
  local program="$1" out needed
  out="$(TWINCCL_BACKEND=emu "$program" 2>&1)" && echo "$out" | grep -q "on 4 ranks: 10 everywhere, OK" \
    && ok "$(basename "$program") ran: $out" || bad "$(basename "$program") on the emulator: $out"
  needed="$(readelf -d "$program" | grep NEEDED)"
  if echo "$needed" | grep -Eq 'libcuda|libcudart|libnccl'; then
    bad "$(basename "$program") needs CUDA/NCCL: $needed"
  elif [ "${2:-}" != simtime ] && echo "$needed" | grep -q 'libsimgrid'; then
    bad "$(basename "$program") needs SimGrid without TwinCCL::simtime: $needed"
  else
    ok "$(basename "$program") NEEDED: $(echo "$needed" | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
  fi
}

# $1: a program linked with TwinCCL::simtime. Its run's simulated time on dgx-h100.
check_simtime_program() {
  local program="$1" out
  out="$(cd "$work" && TWINCCL_BACKEND=emu TWINCCL_TOPOLOGY=dgx-h100 TWINCCL_TIMELINE=/dev/null "$program" 2>&1)" \
    && echo "$out" | grep -q "simulated time of this run on dgx-h100" \
    && ok "$(basename "$program") with TWINCCL_TOPOLOGY: $(echo "$out" | sed -n 3p)" \
    || bad "$(basename "$program") with TWINCCL_TOPOLOGY=dgx-h100: $out"
}

# $1: consumer build folder. The CMake-built programs: link lines and behaviour.
check_cmake_programs() {
  local build="$1" line out
  check_emulator_program "$build/all_reduce_emu"
  line="$(cd "$build" && ninja -t commands all_reduce_emu | tail -1)"
  if echo "$line" | grep -Eq 'twinccl_nccl|libnccl|libcuda|-lnccl|-lcuda|/cuda|simgrid|twinccl_sim'; then
    bad "all_reduce_emu link line names NCCL/CUDA or the simulator: $line"
  else ok "all_reduce_emu link line: $(echo "$line" | grep -o '[^ /]*\.a\|-l[^ ]*' | tr '\n' ' ')"; fi
  out="$(TWINCCL_BACKEND=nccl "$build/all_reduce_emu" 2>&1)"
  if [ $? -eq 2 ] && echo "$out" | grep -q "linked without TwinCCL's NCCL backend"; then
    ok "all_reduce_emu with TWINCCL_BACKEND=nccl: $out"
  else bad "all_reduce_emu with TWINCCL_BACKEND=nccl: $out"; fi
  out="$(TWINCCL_BACKEND=emu TWINCCL_TOPOLOGY=dgx-h100 "$build/all_reduce_emu" 2>&1)"
  if [ $? -eq 2 ] && echo "$out" | grep -q "link TwinCCL::simtime"; then
    ok "all_reduce_emu with TWINCCL_TOPOLOGY: $out"
  else bad "all_reduce_emu with TWINCCL_TOPOLOGY=dgx-h100: $out"; fi
  check_emulator_program "$build/all_reduce_timed" simtime
  check_simtime_program "$build/all_reduce_timed"
  if [ -x "$build/all_reduce_any" ]; then
    check_emulator_program "$build/all_reduce_any"
    out="$(TWINCCL_BACKEND=nccl TWINCCL_NCCL_LIBRARY=$missing TWINCCL_CUDART_LIBRARY=$missing "$build/all_reduce_any" 2>&1)"
    if echo "$out" | grep -q "could not be loaded"; then
      ok "all_reduce_any reaches the NCCL backend: $(echo "$out" | head -1)"
    else bad "all_reduce_any with TWINCCL_BACKEND=nccl did not reach the NCCL backend: $out"; fi
  elif grep -q "TWINCCL_HAVE_NCCL:INTERNAL=ON\|^NCCL_INCLUDE_DIR:PATH=/" "$TWINCCL_BINARY_DIR/CMakeCache.txt" \
       && [ -f "$TWINCCL_BINARY_DIR/backends/libtwinccl_nccl.a" ]; then
    bad "TwinCCL has the NCCL backend but the consumer found no TwinCCL::nccl"
  fi
}

build_consumer() {  # $1: build folder, then cmake arguments
  local build="$1"; shift
  cmake -S "$src/examples/consumer" -B "$build" -G Ninja "${cmake_args[@]}" "$@" >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; bad "configure"; return 1; }
  cmake --build "$build" -j "$(nproc)" >"$build.build.log" 2>&1 || { cat "$build.build.log"; bad "build"; return 1; }
  ok "configured and built $(basename "$build") ($(grep -c '^\[' "$build.build.log") build steps)"
}

case "$mode" in
installed)
  prefix="$work/prefix"
  cmake --install "$TWINCCL_BINARY_DIR" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
  for f in lib/cmake/TwinCCL/TwinCCLConfig.cmake lib/cmake/TwinCCL/TwinCCLConfigVersion.cmake \
           lib/cmake/TwinCCL/TwinCCLTargets.cmake lib/pkgconfig/twinccl.pc lib/pkgconfig/twinccl-simtime.pc \
           lib/libtwinccl_simtime.a include/twinccl/run.h \
           include/twinccl/communicator.h lib/libtwinccl.a; do
    [ -f "$prefix/$f" ] || bad "not installed: $f"
  done
  [ -x "$prefix/bin/twinccl" ] || [ ! -x "$TWINCCL_BINARY_DIR/cli/twinccl" ] || bad "not installed: bin/twinccl"
  ok "installed $(find "$prefix" -type f | wc -l) files into $prefix"
  # Users' warnings must not fire inside TwinCCL's headers.
  build_consumer "$work/build" -DCMAKE_PREFIX_PATH="$prefix" "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror" \
    && check_cmake_programs "$work/build"
  # pkg-config, for projects without CMake.
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  cxx="$(grep '^CMAKE_CXX_COMPILER:' "$TWINCCL_BINARY_DIR/CMakeCache.txt" | cut -d= -f2)"
  launcher="$(grep '^CMAKE_CXX_COMPILER_LAUNCHER:' "$TWINCCL_BINARY_DIR/CMakeCache.txt" | cut -d= -f2)"
  if flags="$(pkg-config --cflags twinccl)" && libs="$(pkg-config --libs twinccl)"; then
    # shellcheck disable=SC2086
    $launcher "$cxx" -std=c++20 -O1 $flags -c "$src/examples/consumer/all_reduce.cc" -o "$work/all_reduce.o" \
      && "$cxx" "$work/all_reduce.o" -o "$work/all_reduce_pc" $libs \
      && ok "pkg-config twinccl: built with $libs" && check_emulator_program "$work/all_reduce_pc" \
      || bad "pkg-config build failed"
    if libs="$(pkg-config --libs twinccl-simtime)" && "$cxx" "$work/all_reduce.o" -o "$work/all_reduce_pc_timed" $libs; then
      ok "pkg-config twinccl-simtime: built with $libs" && check_simtime_program "$work/all_reduce_pc_timed"
    else bad "pkg-config twinccl-simtime build failed"; fi
    if [ -f "$prefix/lib/pkgconfig/twinccl-nccl.pc" ]; then
      libs="$(pkg-config --libs twinccl-nccl)"
      # shellcheck disable=SC2086
      if "$cxx" "$work/all_reduce.o" -o "$work/all_reduce_pc_nccl" $libs; then
        out="$(TWINCCL_BACKEND=nccl TWINCCL_NCCL_LIBRARY=$missing TWINCCL_CUDART_LIBRARY=$missing "$work/all_reduce_pc_nccl" 2>&1)"
        echo "$out" | grep -q "could not be loaded" && ok "pkg-config twinccl-nccl reaches the NCCL backend" \
          || bad "pkg-config twinccl-nccl program did not reach the NCCL backend: $out"
      else bad "pkg-config twinccl-nccl link failed"; fi
    fi
  else
    bad "pkg-config twinccl"
  fi
  ;;
subdirectory)
  build_consumer "$work/build" -DTWINCCL_SOURCE_DIR="$src" && check_cmake_programs "$work/build"
  targets="$(cd "$work/build" && ninja -t targets all | cut -d: -f1)"
  for t in twinccl/tests/tests_core twinccl/cli/twinccl twinccl/examples/example_quickstart; do  # libraries only
    echo "$targets" | grep -qx "$t" && bad "add_subdirectory brought in $t"
  done
  for p in Catch2 CLI11; do
    grep -q "^${p}_DIR:PATH=/" "$work/build/CMakeCache.txt" && bad "add_subdirectory looked for $p"
  done
  echo "$targets" | grep -qx "twinccl/backends/libtwinccl.a" && ok "add_subdirectory: libraries only" \
    || bad "add_subdirectory: no twinccl/backends/libtwinccl.a target"
  ;;
*) echo "usage: $0 installed|subdirectory"; exit 2 ;;
esac
exit "$fail"
