# Tests of TwinCCL as a package, not of its code:
#   package.installed, package.subdirectory   the consumer project examples/consumer built against
#       this build installed (find_package, pkg-config) and against the sources (add_subdirectory);
#       tests/package/check_consumer.sh says what each checks. Label package.
#   package.emulator_only   an emulator-only program (examples/consumer/all_reduce.cc linked with
#       twinccl_run = TwinCCL::twinccl alone) links no simulator and no SimGrid (its NEEDED entries,
#       symbols and linker map), and TWINCCL_TOPOLOGY / TWINCCL_TIMELINE make it fail with a
#       ConfigError naming TwinCCL::simtime; the same program linked with twinccl_simtime prints
#       the simulated time and writes the timeline (tests/package/check_emulator_only.sh; ~1 s).
#   format.check   every C++ file formatted as .clang-format says (TWINCCL_FORMAT_CHECK=ON; label
#       format; scripts/format.sh --fix formats them).
# The consumer is compiled like this build (compiler, its launcher such as ccache, build type,
# warnings), so TwinCCL's libraries built again by add_subdirectory hit the compiler cache: their
# compile lines equal this build's except for object paths (scripts/build.sh uses ccache when
# installed; CI takes ~20 s for both tests). Without ccache, or with CCACHE_BASEDIR set (paths are
# then hashed relative to each build folder, which differ), the first run compiles the libraries.
set(twinccl_consumer_args
    -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
    -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
    -DTWINCCL_WARNINGS_AS_ERRORS=${TWINCCL_WARNINGS_AS_ERRORS}
    -DTWINCCL_WITH_NCCL=${TWINCCL_WITH_NCCL})
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND twinccl_consumer_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
if(TWINCCL_SANITIZE)
  list(APPEND twinccl_consumer_args -DTWINCCL_SANITIZE=${TWINCCL_SANITIZE})
endif()
string(REPLACE ";" "\\;" twinccl_consumer_args_escaped "${twinccl_consumer_args}")
foreach(mode installed subdirectory)
  if(mode STREQUAL "installed" AND NOT TWINCCL_INSTALL)
    continue()
  endif()
  add_test(NAME package.${mode} COMMAND ${PROJECT_SOURCE_DIR}/tests/package/check_consumer.sh ${mode})
  set_tests_properties(package.${mode} PROPERTIES LABELS package TIMEOUT 1200 ENVIRONMENT
    "TWINCCL_SOURCE_DIR=${PROJECT_SOURCE_DIR};TWINCCL_BINARY_DIR=${PROJECT_BINARY_DIR};WORK=${PROJECT_BINARY_DIR}/package-test/${mode};CONSUMER_CMAKE_ARGS=${twinccl_consumer_args_escaped}")
endforeach()

set(twinccl_consumer_source ${PROJECT_SOURCE_DIR}/examples/consumer/all_reduce.cc)
add_executable(package_emulator_only ${twinccl_consumer_source})
target_link_libraries(package_emulator_only PRIVATE TwinCCL::twinccl)
# The linker's map names every archive member and shared library the link loaded.
target_link_options(package_emulator_only PRIVATE
                    "LINKER:-Map=$<TARGET_FILE_DIR:package_emulator_only>/package_emulator_only.map")
add_executable(package_with_simtime ${twinccl_consumer_source})
target_link_libraries(package_with_simtime PRIVATE TwinCCL::twinccl TwinCCL::simtime)
add_test(NAME package.emulator_only
         COMMAND ${PROJECT_SOURCE_DIR}/tests/package/check_emulator_only.sh
                 $<TARGET_FILE:package_emulator_only> $<TARGET_FILE:package_with_simtime>)
set_tests_properties(package.emulator_only PROPERTIES LABELS package TIMEOUT 60)

if(TWINCCL_FORMAT_CHECK)
  find_program(TWINCCL_CLANG_FORMAT NAMES clang-format-14 clang-format REQUIRED)
  add_test(NAME format.check COMMAND ${PROJECT_SOURCE_DIR}/scripts/format.sh --check)
  set_tests_properties(format.check PROPERTIES LABELS format TIMEOUT 300
                       ENVIRONMENT "CLANG_FORMAT=${TWINCCL_CLANG_FORMAT}")
endif()
