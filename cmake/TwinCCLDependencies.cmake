# Every dependency comes from Debian's packages (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
find_package(Boost 1.74 REQUIRED CONFIG)           # Boost::headers (Asio is header-only)
find_package(nlohmann_json 3.10 REQUIRED CONFIG)   # topology files, traces, JSON output
find_package(fmt REQUIRED CONFIG)                  # tables and messages
if(TWINCCL_BUILD_CLI)
  find_package(CLI11 REQUIRED CONFIG)              # command-line parsing
endif()
if(TWINCCL_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED CONFIG)        # tests (v2: <catch2/catch.hpp>)
endif()
if(TWINCCL_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG)                   # bench/ only (Google Benchmark)
endif()

# NCCL backend: built when CUDA's and NCCL's headers are found (NCCL has no CMake config). Only
# the headers are used: libcudart and libnccl are loaded at run time (backends/nccl/loader.h), so
# NCCL_LIBRARY is informational (and the default for scripts that want to name it).
set(TWINCCL_HAVE_NCCL OFF)
if(NOT TWINCCL_WITH_NCCL STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR)
    set(TWINCCL_HAVE_NCCL ON)
    message(STATUS "TwinCCL: NCCL backend ON (headers ${NCCL_INCLUDE_DIR}; libraries loaded at run time)")
  elseif(TWINCCL_WITH_NCCL STREQUAL "ON")
    message(FATAL_ERROR "TWINCCL_WITH_NCCL=ON but CUDA or NCCL was not found")
  else()
    message(STATUS "TwinCCL: NCCL backend OFF (CUDA or NCCL not found)")
  endif()
endif()
