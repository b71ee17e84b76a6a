"""twinccl.__version__ is CMakeLists.txt's project(VERSION), as find_package and pkg-config report,
and pip's metadata (pyproject.toml reads the same line) agrees when the package was pip-installed."""
import importlib.metadata
import os
import re
import sys

import pytest

import twinccl
from conftest import source_dir


def project_version():
    with open(os.path.join(source_dir(), "CMakeLists.txt")) as f:
        return re.search(r"project\(TwinCCL VERSION ([0-9.]+)", f.read()).group(1)


def test_version_is_the_cmake_project_version():
    assert twinccl.__version__ == project_version()


def test_pip_metadata_reports_the_same_version():
    try:
        installed = importlib.metadata.version("twinccl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("twinccl imported from the build tree, not pip-installed")
    assert installed == twinccl.__version__


def test_the_installed_package_is_the_one_tested():
    """CTest's python.pytest with a virtual environment must import what pip installed there."""
    if os.environ.get("TWINCCL_PYTEST_INSTALLED") != "1":
        pytest.skip("not CTest's run against the pip-installed package")
    site_packages = os.path.join(sys.prefix, "lib")
    assert os.path.abspath(twinccl.__file__).startswith(site_packages), twinccl.__file__
    assert importlib.metadata.version("twinccl") == twinccl.__version__
