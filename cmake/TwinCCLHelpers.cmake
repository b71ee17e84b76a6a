# twinccl_library(NAME <target> [DEPS ...] [PRIVATE_DEPS ...])
# One library target per top-level folder: sources are every .cc below the folder
# except its tests; public headers live in <folder>/include.
function(twinccl_library)
  cmake_parse_arguments(ARG "" "NAME" "DEPS;PRIVATE_DEPS;SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB_RECURSE ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  endif()
  if(NOT ARG_SOURCES)  # a folder whose sources have not landed yet: headers only
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
    add_library(twinccl::${ARG_NAME} ALIAS ${ARG_NAME})
    return()
  endif()
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  twinccl_warnings(${ARG_NAME})
  add_library(twinccl::${ARG_NAME} ALIAS ${ARG_NAME})
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

if(TWINCCL_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -g -O1)
  add_link_options(-fsanitize=thread)
elseif(TWINCCL_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT TWINCCL_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TWINCCL_SANITIZE must be '', 'thread' or 'address', not '${TWINCCL_SANITIZE}'")
endif()
