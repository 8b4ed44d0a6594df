"""The extension: csrc/tiny.cpp compiled against the torch installed where it is built."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    packages=["tiny_accel"],
    ext_modules=[CppExtension("tiny_accel._C", ["csrc/tiny.cpp"])],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=False)},
)
