# cmake --install: headers, the static libraries with their exported targets, the twinccl program,
# a CMake package (find_package(TwinCCL)) and pkg-config files (twinccl, twinccl-simtime,
# twinccl-nccl).
#
#   TwinCCL::twinccl  run(), the API and the emulator: what a program links (no SimGrid)
#   TwinCCL::simtime  the simulated time of an emulated run (TWINCCL_TOPOLOGY, TWINCCL_TIMELINE):
#                     link it too for them; it brings the simulator and SimGrid
#   TwinCCL::nccl     the NCCL backend (only when built): link it too to run on NCCL
#   TwinCCL::sim      the simulator (timing, replay, tuner); TwinCCL::topologies, ::core, ::emu,
#                     ::store below them
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TWINCCL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TwinCCL
    CACHE STRING "Where the CMake package (TwinCCLConfig.cmake) is installed, relative to the prefix")
get_property(twinccl_libraries GLOBAL PROPERTY TWINCCL_INSTALLED_LIBRARIES)
get_property(twinccl_header_dirs GLOBAL PROPERTY TWINCCL_INSTALLED_HEADER_DIRS)
list(REMOVE_DUPLICATES twinccl_header_dirs)  # backends/include: twinccl_run's and twinccl_simtime's

install(TARGETS ${twinccl_libraries} EXPORT TwinCCLTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir ${twinccl_header_dirs})
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
          FILES_MATCHING PATTERN "*.h")
endforeach()
if(TARGET twinccl)
  install(TARGETS twinccl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
endif()

install(EXPORT TwinCCLTargets NAMESPACE TwinCCL:: DESTINATION ${TWINCCL_INSTALL_CMAKEDIR}
        FILE TwinCCLTargets.cmake COMPONENT development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TwinCCLConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/TwinCCLConfig.cmake
                              INSTALL_DESTINATION ${TWINCCL_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so 0.1 is satisfied by 0.1.y only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TwinCCLConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TwinCCLConfig.cmake ${PROJECT_BINARY_DIR}/TwinCCLConfigVersion.cmake
        DESTINATION ${TWINCCL_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config: the static libraries in link order, then what they need (fmt, threads; simgrid for
# twinccl-simtime).
# The .pc files name their prefix relative to where they are (${pcfiledir}), so that an install
# with `cmake --install --prefix <elsewhere>` or a moved tree still works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TWINCCL_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
else()
  file(RELATIVE_PATH twinccl_up /twinccl-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /twinccl-prefix)
  string(REGEX REPLACE "/$" "" twinccl_up "${twinccl_up}")
  set(TWINCCL_PC_PREFIX "\${pcfiledir}/${twinccl_up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(TWINCCL_PC_${kind}_FULL ${CMAKE_INSTALL_${kind}})
  else()
    set(TWINCCL_PC_${kind}_FULL "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
# Libraries are added folder by folder in dependency order (core first), so the reverse order is a
# valid static link order. twinccl.pc: the API, run() and the emulator; twinccl-simtime.pc: the
# simulated time with the simulator below it (then twinccl.pc's, through Requires); the NCCL
# backend and the bootstrap store are twinccl-nccl.pc's.
set(twinccl_pc_simtime twinccl_simtime twinccl_sim twinccl_topologies)
set(TWINCCL_PC_LIBS)
set(TWINCCL_PC_SIMTIME_LIBS)
set(twinccl_reversed ${twinccl_libraries})
list(REVERSE twinccl_reversed)
foreach(lib ${twinccl_reversed})
  get_target_property(type ${lib} TYPE)
  if(lib STREQUAL "twinccl_nccl" OR lib STREQUAL "twinccl_store" OR type STREQUAL "INTERFACE_LIBRARY")
    continue()
  endif()
  get_target_property(output_name ${lib} OUTPUT_NAME)
  if(NOT output_name)
    set(output_name ${lib})
  endif()
  if(lib IN_LIST twinccl_pc_simtime)
    string(APPEND TWINCCL_PC_SIMTIME_LIBS " -l${output_name}")
  else()
    string(APPEND TWINCCL_PC_LIBS " -l${output_name}")
  endif()
endforeach()
set(TWINCCL_PC_DL_LIBS)
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND TWINCCL_PC_DL_LIBS " -l${lib}")
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/twinccl.pc.in ${PROJECT_BINARY_DIR}/twinccl.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/twinccl-simtime.pc.in ${PROJECT_BINARY_DIR}/twinccl-simtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/twinccl.pc ${PROJECT_BINARY_DIR}/twinccl-simtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
if(TARGET twinccl_nccl)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/twinccl-nccl.pc.in ${PROJECT_BINARY_DIR}/twinccl-nccl.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/twinccl-nccl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
          COMPONENT development)
endif()
