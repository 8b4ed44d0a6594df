"""tiny-openreg: CMake builds the device library into tiny_openreg/lib/, then setuptools builds
the _C stub that links it ($ORIGIN/lib rpath); the wheel carries lib/*.so and include/*.h as package
data, for plugins that link the device library (as torch_npu's wheel carries include/ and lib/). The
shape of PyTorch's OpenReg (test/cpp_extensions/open_registration_extension/torch_openreg)."""

import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tiny_openreg")


class BuildWithCMake(build_ext):
    """CMake first (configure, build, install into the package's lib/), then the _C stub."""

    def run(self):
        import torch
        from torch.utils.cpp_extension import include_paths, library_paths

        cmake_build = os.path.join(self.build_temp, "cmake")
        os.makedirs(cmake_build, exist_ok=True)
        configure = [
            "cmake",
            "-S",
            HERE,
            "-B",
            cmake_build,
            f"-DCMAKE_INSTALL_PREFIX={PACKAGE}",
            f"-DTORCH_INCLUDE_DIRS={';'.join(include_paths())}",
            f"-DTORCH_LIBRARY_DIR={library_paths()[0]}",
            f"-DTORCH_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
            f"-DPython_EXECUTABLE={sys.executable}",
        ]
        subprocess.check_call(configure)
        jobs = os.environ.get("MAX_JOBS", "2")  # as torch's own extensions read it
        subprocess.check_call(["cmake", "--build", cmake_build, "--target", "install", "--parallel", jobs])
        super().run()


class BuildNativeFirst(build):
    """build_ext before build_py: the package data (lib/*.so) exists when build_py collects it."""

    sub_commands = [c for c in build.sub_commands if c[0] == "build_ext"] + [
        c for c in build.sub_commands if c[0] != "build_ext"
    ]


setup(
    packages=["tiny_openreg"],
    package_data={"tiny_openreg": ["lib/*.so", "include/*.h"]},  # what a plugin builds against
    ext_modules=[
        Extension(
            "tiny_openreg._C",
            sources=["tiny_openreg/csrc/stub.c"],
            include_dirs=["csrc"],
            libraries=["tiny_openreg"],
            library_dirs=[os.path.join(PACKAGE, "lib")],
            extra_link_args=["-Wl,-rpath,$ORIGIN/lib"],
        )
    ],
    cmdclass={"build": BuildNativeFirst, "build_ext": BuildWithCMake},
)
