"""Build the earlc package and its extension module earlc._core.

The extension is the C core (csrc/, no Python inside) plus the thin glue in
python/earlc/_ext/.  libotf2 is found through pkg-config; the core uses
pthreads.  Warnings are errors, as in the Makefile's C build.
"""
import glob
import os
import shlex
import subprocess

from setuptools import Extension, find_packages, setup


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "otf2"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit("earlc needs libotf2 found through pkg-config "
                         "(Debian: apt-get install libotf2-trace-dev pkg-config): %s" % exc)
    return shlex.split(out)


cflags = pkg_config("--cflags")
libs = pkg_config("--libs")
# Hidden visibility: the module exports PyInit__core and the core's public
# API (EARL_API, csrc/include/earl_api.h), none of its internal names.
extra_compile = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                 "-Wno-missing-field-initializers", "-D_GNU_SOURCE",
                 "-fvisibility=hidden"] + cflags
if os.environ.get("EARLC_SANITIZE"):
    extra_compile += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1", "-g"]

def numpy_include():
    try:
        import numpy
    except ImportError as exc:  # make deps installs it before building
        raise SystemExit("earlc builds against numpy's C headers (pip install numpy): %s" % exc)
    return numpy.get_include()


# csrc/ holds the trace model; each subsystem has a folder of its own
# (csrc/states, csrc/hb, ...).  csrc/record is not part of the extension: it is
# the MPI recorder, a library of its own built with mpicc (Makefile).  The
# public headers are in csrc/include; internal headers stay beside their code
# and are included by their path from csrc/ across folders.
CORE_DIRS = ["csrc"] + sorted(d.rstrip("/") for d in glob.glob("csrc/*/")
                              if d.rstrip("/") not in ("csrc/record", "csrc/include"))
CORE_INCLUDES = ["csrc/include", "csrc"]


def core_files(pattern):
    return sorted(f for d in CORE_DIRS for f in glob.glob(os.path.join(d, pattern)))


core = Extension(
    "earlc._core",
    sources=core_files("*.c") + sorted(glob.glob("python/earlc/_ext/*.c")),
    include_dirs=CORE_INCLUDES + [numpy_include()],
    depends=(sorted(glob.glob("csrc/include/*.h")) + core_files("*.h")
             + sorted(glob.glob("python/earlc/_ext/*.h"))),
    extra_compile_args=extra_compile,
    extra_link_args=libs + ["-pthread"],
)

setup(
    name="earlc",
    version="0.1.0",
    description="Post-mortem performance analysis of parallel programs from OTF2 traces",
    # the built-in properties live in the repository's properties/ folder and ship
    # inside the package as earlc.properties
    package_dir={"": "python", "earlc.properties": "properties"},
    packages=find_packages("python") + ["earlc.properties"] +
    ["earlc.properties." + p for p in find_packages("properties")],
    package_data={"earlc.export": ["*.js"]},
    ext_modules=[core],
    python_requires=">=3.9",
    install_requires=["numpy>=1.22", "pandas>=1.4"],
    entry_points={"console_scripts": ["earlc = earlc.cli:main"]},
)
