"""tiny-fused: a plugin of a plugin. Its op library is compiled against the torch installed where
the build runs and against the tiny-openreg installed there: its header and device library, found
with tiny_openreg.get_include() and get_lib() (the adapter's wheel ships both). The wheel says what
it was built for in its metadata: torch's minor (a PrivateUse1 binary is tied to it) and the exact
tiny-openreg release (the symbols it links), which `adapter-matrix check` reads."""

from importlib.metadata import version

import tiny_openreg
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

major, minor = (int(x) for x in torch.__version__.split(".")[:2])

setup(
    packages=["tiny_fused"],
    install_requires=[
        "adapter-matrix",
        f"torch>={major}.{minor},<{major}.{minor + 1}",
        f"tiny-openreg=={version('tiny-openreg')}",
    ],
    ext_modules=[
        CppExtension(
            "tiny_fused._C",
            sources=["tiny_fused/csrc/fused.cpp", "tiny_fused/csrc/module.c"],
            include_dirs=[tiny_openreg.get_include()],
            library_dirs=[tiny_openreg.get_lib()],
            libraries=["tiny_openreg"],
            # the installed adapter's lib/, beside this package in site-packages
            extra_link_args=["-Wl,-rpath,$ORIGIN/../tiny_openreg/lib"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
