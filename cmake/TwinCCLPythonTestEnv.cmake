# Which twinccl package CTest's Python tests import (python/CMakeLists.txt includes this before it
# looks for pybind11, when the tests are built).
# With a virtual environment (TWINCCL_PYTHON_TEST_VENV: scripts/test.sh passes <repo>/.venv, which
# scripts/python-env.sh makes; the default when it exists), twinccl_python_test_env() adds the test
# python.install, `pip install .` into it (a CTest fixture: `ctest -R python.pytest` runs it too),
# and the tests import the package pip installed, as its users get it. Without one, they import
# the build tree's package (PYTHONPATH=<build>/python) with ${Python3_EXECUTABLE}.
# The build tree's extension then uses the environment's pybind11 too, so that pip's build (in
# <build>-pip/, beside <build>: its compile lines relative to it equal this build's) gets every
# object, the extension's included, from the compiler cache (ccache, also with a base_dir).
if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(twinccl_default_venv ${PROJECT_SOURCE_DIR}/.venv)
endif()
set(TWINCCL_PYTHON_TEST_VENV "${twinccl_default_venv}" CACHE PATH
    "Virtual environment the Python tests pip-install the package into and run in (empty: the build tree's package)")
if(TWINCCL_PYTHON_TEST_VENV)
  if(NOT EXISTS ${TWINCCL_PYTHON_TEST_VENV}/bin/python)
    message(FATAL_ERROR "TWINCCL_PYTHON_TEST_VENV=${TWINCCL_PYTHON_TEST_VENV} has no bin/python: run scripts/python-env.sh")
  endif()
  execute_process(COMMAND ${TWINCCL_PYTHON_TEST_VENV}/bin/python -m pybind11 --cmakedir
                  OUTPUT_VARIABLE twinccl_venv_pybind11 OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(twinccl_venv_pybind11)
    set(pybind11_DIR ${twinccl_venv_pybind11} CACHE PATH "pybind11's CMake package (the tests' environment's)" FORCE)
  endif()
endif()

# Sets TWINCCL_PYTEST_PYTHON (the interpreter of pytest), TWINCCL_PYTEST_ENVIRONMENT,
# TWINCCL_PYTEST_FIXTURES and TWINCCL_PYTEST_WORKING_DIRECTORY (the tests' properties).
function(twinccl_python_test_env)
  set(environment "TWINCCL_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
  if(NOT TWINCCL_PYTHON_TEST_VENV)
    set(TWINCCL_PYTEST_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} PARENT_SCOPE)
    set(TWINCCL_PYTEST_PYTHON ${Python3_EXECUTABLE} PARENT_SCOPE)
    set(TWINCCL_PYTEST_ENVIRONMENT "${environment};PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}" PARENT_SCOPE)
    set(TWINCCL_PYTEST_FIXTURES "" PARENT_SCOPE)
    return()
  endif()
  message(STATUS "TwinCCL: Python tests pip-install the package into ${TWINCCL_PYTHON_TEST_VENV}")
  set(python ${TWINCCL_PYTHON_TEST_VENV}/bin/python)
  set(pip_args --no-build-isolation --no-deps --force-reinstall --quiet
      --config-settings=build-dir=${PROJECT_BINARY_DIR}-pip
      --config-settings=cmake.define.CMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      --config-settings=cmake.define.TWINCCL_WARNINGS_AS_ERRORS=${TWINCCL_WARNINGS_AS_ERRORS})
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND pip_args --config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  add_test(NAME python.install COMMAND ${python} -m pip install ${pip_args} ${PROJECT_SOURCE_DIR})
  set_tests_properties(python.install PROPERTIES LABELS python TIMEOUT 1200 FIXTURES_SETUP twinccl_pip_installed)
  # `python -m pytest` puts its working directory first on sys.path: not <build>/python, whose
  # twinccl would shadow the installed one; TWINCCL_PYTEST_INSTALLED: test_version.py checks that.
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/pytest-installed)
  set(TWINCCL_PYTEST_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/pytest-installed PARENT_SCOPE)
  set(TWINCCL_PYTEST_PYTHON ${python} PARENT_SCOPE)
  set(TWINCCL_PYTEST_ENVIRONMENT "${environment};TWINCCL_PYTEST_INSTALLED=1" PARENT_SCOPE)
  set(TWINCCL_PYTEST_FIXTURES twinccl_pip_installed PARENT_SCOPE)
endfunction()
