#!/usr/bin/env bash
# "Load anywhere" (issue 15 item 6): programs built with the NCCL backend link no CUDA or NCCL
# library (they are dlopen'ed only when TWINCCL_BACKEND=nccl), so they start and run the emulator
# on a machine without CUDA; asking for NCCL there gives one clear error naming what is missing.
#   check_load_anywhere.sh <program>... <example>   (the last argument is run)
set -u
fail=0
for program in "$@"; do
  needed="$(readelf -d "$program" | grep NEEDED)"
  if echo "$needed" | grep -Eq 'libcuda|libcudart|libnccl'; then
    echo "FAIL: $program links CUDA/NCCL directly:"; echo "$needed" | grep -E 'libcuda|libnccl'; fail=1
  else
    echo "ok: $program has no CUDA/NCCL NEEDED entry"
  fi
done
example="${!#}"
missing=/nonexistent/libnccl.so.2
if TWINCCL_BACKEND=emu TWINCCL_WORLD_SIZE=4 TWINCCL_NCCL_LIBRARY=$missing TWINCCL_CUDART_LIBRARY=$missing \
   "$example" >/dev/null 2>&1; then
  echo "ok: $example runs the emulator with the CUDA/NCCL libraries pointing at a missing file"
else
  echo "FAIL: $example did not run the emulator with TWINCCL_NCCL_LIBRARY=$missing"; fail=1
fi
err="$(TWINCCL_BACKEND=nccl TWINCCL_NCCL_LIBRARY=$missing TWINCCL_CUDART_LIBRARY=$missing "$example" 2>&1 >/dev/null)"
rc=$?
if [ "$rc" -ne 0 ] && echo "$err" | grep -q "could not be loaded" && echo "$err" | grep -q "$missing"; then
  echo "ok: TWINCCL_BACKEND=nccl without the libraries fails with: $(echo "$err" | head -2 | tr '\n' ' ')"
else
  echo "FAIL: TWINCCL_BACKEND=nccl without the libraries: exit $rc, stderr: $err"; fail=1
fi
exit "$fail"
