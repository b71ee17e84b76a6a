#!/usr/bin/env bash
# C++ formatting as .clang-format says, with Debian's clang-format 14 (apt install clang-format-14;
# other major versions format some constructs differently, so the version is pinned).
#
#   scripts/format.sh --check [files...]   list the files that are not formatted; exit 1 if any
#   scripts/format.sh --fix [files...]     format them in place
#
# Without files: every C++ file git tracks (*.cc, *.h, *.cpp). CTest runs --check as format.check
# when the build is configured with -DTWINCCL_FORMAT_CHECK=ON (label format).
# CLANG_FORMAT=/path/to/clang-format overrides the program.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in
  --check | --fix) shift ;;
  *) echo "usage: scripts/format.sh --check|--fix [files...]" >&2; exit 2 ;;
esac
clang_format="${CLANG_FORMAT:-}"
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null; then clang_format="$candidate"; break; fi
  done
fi
if [ -z "$clang_format" ]; then
  echo "format.sh: clang-format 14 not found (Debian: apt install clang-format-14)" >&2
  exit 2
fi
version="$("$clang_format" --version | grep -o 'version [0-9]*' | cut -d' ' -f2)"
if [ "$version" != 14 ]; then
  echo "format.sh: $clang_format is version $version; the project's format is clang-format 14's" >&2
  exit 2
fi
files=("$@")
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "format.sh: no file $f" >&2; exit 2; }
done
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h' '*.cpp')
fi
if [ "$mode" = --fix ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$clang_format" -i --style=file
  echo "format.sh: formatted ${#files[@]} files"
  exit 0
fi
# One clang-format per 40 files, two at a time; a file that differs yields "<file>:<line>:<col>: error".
report="$(printf '%s\0' "${files[@]}" | xargs -0 -n 40 -P 2 "$clang_format" --style=file --dry-run --Werror 2>&1)" \
  && status=0 || status=$?
mapfile -t unformatted < <(echo "$report" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [ "$status" -ne 0 ] && [ ${#unformatted[@]} -eq 0 ]; then  # clang-format failed otherwise
  echo "$report" | tail -20
  echo "format.sh: $clang_format failed (exit $status)"
  exit 2
fi
if [ ${#unformatted[@]} -gt 0 ]; then
  printf '  %s\n' "${unformatted[@]}"
  echo "format.sh: ${#unformatted[@]} of ${#files[@]} files differ from .clang-format (scripts/format.sh --fix)"
  exit 1
fi
echo "format.sh: ${#files[@]} files formatted"
