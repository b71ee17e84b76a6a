#!/usr/bin/env bash
# Issue 24's fidelity report, rerun by anyone: every held-out published figure of
# tests/fidelity/figures/*.csv predicted with the analytic model, and the per-class scoreboard
# (large >= 64 MiB within 10%, small < 1 MiB within 25%, middle within 25%, worst error, off by
# > 2x) as the Markdown table docs/fidelity.md shows. Exits non-zero when a row is malformed or
# outside its band (naming FILE:LINE), or when docs/fidelity.md does not show this very table.
#
#   scripts/fidelity-report.sh          build tests_fidelity (configuring build/ if needed), report
#   scripts/fidelity-report.sh --rows   every row too: source, prediction, measured, error, band
#   TWINCCL_BUILD_DIR=build-x scripts/fidelity-report.sh   use that built folder
#
# It is the test `fidelity.held-out figures CSV rows ...` (tests/fidelity/test_figures.cc) run
# on its own, so the report and the assertion can never disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TWINCCL_BUILD_DIR:-build}
if [ "${1:-}" = "--rows" ]; then
  export TWINCCL_FIDELITY_ROWS=1
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/fidelity-report.sh [--rows]" >&2
  exit 2
fi
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  TWINCCL_BUILD_TARGETS=tests_fidelity scripts/build.sh >&2
else
  cmake --build "$build" --target tests_fidelity >&2
fi
"$build/tests/tests_fidelity" \
  "held-out figures CSV rows are within their band and the per-class scoreboard"
