#!/usr/bin/env bash
# An emulator-only program links no simulator and no SimGrid; asking it for simulated time is a
# ConfigError naming TwinCCL::simtime; the same program linked with TwinCCL::simtime has it
# (CTest package.emulator_only, cmake/TwinCCLPackageTests.cmake).
#   check_emulator_only.sh <emulator-only program> <program linked with TwinCCL::simtime>
# The first program's linker map is <program>.map beside it.
set -u
emu_only="$1"
with_simtime="$2"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

export TWINCCL_BACKEND=emu
unset TWINCCL_TOPOLOGY TWINCCL_TIMELINE TWINCCL_TRACE

out="$("$emu_only" 2>&1)" && echo "$out" | grep -q "on 4 ranks: 10 everywhere, OK" \
  && ok "emulator-only program ran: $out" || bad "emulator-only program on the emulator: $out"

needed="$(readelf -d "$emu_only" | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
if echo "$needed" | grep -qi simgrid; then bad "emulator-only program needs SimGrid: $needed"
else ok "NEEDED: $needed"; fi

# Symbols defined or referenced: SimGrid's, or TwinCCL's simulator or topologies.
symbols="$(nm -C "$emu_only" | grep -E ' (simgrid::|sg_|xbt_)|twinccl::sim::|twinccl::topo::|TopologyRun|make_of_run' | head -5)"
if [ -n "$symbols" ]; then bad "emulator-only program has simulator symbols, e.g.: $symbols"
else ok "no SimGrid, sim:: or topo:: symbol ($(nm "$emu_only" | wc -l) symbols)"; fi

map="$emu_only.map"
if [ ! -s "$map" ]; then bad "no linker map $map"
elif loaded="$(grep -oE '[^ /(]*(libsimgrid[^ )]*|libtwinccl_(sim|simtime|topologies)\.a)' "$map" | sort -u | tr '\n' ' ')"; [ -n "$loaded" ]; then
  bad "the link loaded: $loaded"
else ok "the link loaded no libsimgrid, libtwinccl_sim/_simtime/_topologies ($(stat -c %s "$emu_only") bytes)"; fi

# Simulated time asked of a program without it: a ConfigError (exit 2) naming what to link.
for asked in TWINCCL_TOPOLOGY=dgx-h100 "TWINCCL_TIMELINE=$work/timeline.json"; do
  out="$(env "$asked" "$emu_only" 2>&1)"
  code=$?
  if [ "$code" -eq 2 ] && echo "$out" | grep -q "configuration error: ${asked%%=*}=.*link TwinCCL::simtime"; then
    ok "$asked: $out"
  else bad "$asked on the emulator-only program (exit $code): $out"; fi
done
[ -e "$work/timeline.json" ] && bad "the emulator-only program wrote a timeline"

# The same program linked with TwinCCL::simtime.
out="$(TWINCCL_TOPOLOGY=dgx-h100 TWINCCL_TIMELINE="$work/timeline.json" "$with_simtime" 2>&1)"
code=$?
if [ "$code" -eq 0 ] && echo "$out" | grep -q "simulated time of this run on dgx-h100" && [ -s "$work/timeline.json" ]; then
  ok "with TwinCCL::simtime: $(echo "$out" | head -2 | tr '\n' ' ')"
else bad "with TwinCCL::simtime and TWINCCL_TOPOLOGY=dgx-h100 (exit $code): $out"; fi
if readelf -d "$with_simtime" | grep NEEDED | grep -qi simgrid; then ok "the program with TwinCCL::simtime needs SimGrid"
else bad "the program with TwinCCL::simtime does not need SimGrid: its check above would be vacuous"; fi
exit "$fail"
