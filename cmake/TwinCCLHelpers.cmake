# twinccl_library(NAME <target> [EXPORT_NAME <name>] [DEPS ...] [PRIVATE_DEPS ...] [SOURCES ...]
#                  [INCLUDE_DIR <dir>])
# One library target per top-level folder: sources are every .cc below the folder except its
# tests; public headers live in <folder>/include (or INCLUDE_DIR). The library is installed and
# exported as TwinCCL::<EXPORT_NAME> (cmake/TwinCCLInstall.cmake), with the same alias in the build
# tree so that a project using add_subdirectory names it the same way.
# Header-only PRIVATE_DEPS (nlohmann_json, Boost) are compile-time only: they stay out of the
# exported link interface, so a consumer of the installed static libraries need not find them.
set(TWINCCL_HEADER_ONLY_DEPS nlohmann_json::nlohmann_json Boost::headers)
function(twinccl_library)
  cmake_parse_arguments(ARG "" "NAME;EXPORT_NAME;INCLUDE_DIR" "DEPS;PRIVATE_DEPS;SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB_RECURSE ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  endif()
  if(NOT ARG_INCLUDE_DIR)
    set(ARG_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  if(NOT ARG_EXPORT_NAME)
    string(REGEX REPLACE "^twinccl_" "" ARG_EXPORT_NAME ${ARG_NAME})
  endif()
  set(private_deps)
  foreach(dep ${ARG_PRIVATE_DEPS})
    if(dep IN_LIST TWINCCL_HEADER_ONLY_DEPS)
      list(APPEND private_deps $<BUILD_INTERFACE:${dep}>)
    else()
      list(APPEND private_deps ${dep})
    endif()
  endforeach()
  if(NOT ARG_SOURCES)  # a folder whose sources have not landed yet: headers only
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE $<BUILD_INTERFACE:${ARG_INCLUDE_DIR}>)
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
  else()
    add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
    target_include_directories(${ARG_NAME} PUBLIC $<BUILD_INTERFACE:${ARG_INCLUDE_DIR}>)
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${private_deps})
    twinccl_warnings(${ARG_NAME})
  endif()
  set_target_properties(${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  add_library(TwinCCL::${ARG_EXPORT_NAME} ALIAS ${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY TWINCCL_INSTALLED_LIBRARIES ${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY TWINCCL_INSTALLED_HEADER_DIRS ${ARG_INCLUDE_DIR})
endfunction()

function(twinccl_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
                                           -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false -Wrestrict positives inside std::string concatenation at -O2/-O3
    # (GCC bug 105329). -Wnull-dereference is left off: GCC 12 reports it inside nlohmann_json and
    # libstdc++ headers at -O3.
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(TWINCCL_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# -g1 (line tables): the sanitizers' reports name functions, files and lines; full debug info only
# made these builds ~30% slower to compile (CI builds both).
if(TWINCCL_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -g1 -O1)
  add_link_options(-fsanitize=thread)
elseif(TWINCCL_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1 -O1)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT TWINCCL_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TWINCCL_SANITIZE must be '', 'thread' or 'address', not '${TWINCCL_SANITIZE}'")
endif()
# clang's libFuzzer (fuzz/CMakeLists.txt, scripts/fuzz.sh): every library is instrumented for
# coverage, so the fuzzer sees the parsers' branches (without it only the fuzz target's own file
# is, about 30 edges, and the search is blind).
if(TWINCCL_LIBFUZZER)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
