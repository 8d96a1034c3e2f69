#!/usr/bin/env python3
"""Check that an image's hashed locks install on the image's own platform and Python, without Docker.

    python containers/check-requirements.py cpu-ocr|vl-endpoint

For each lock of the image (containers/image-locks.py), pip's resolver runs as a dry run with the
Dockerfile's options (``--require-hashes --only-binary=:all:``, ``--no-deps`` for the model packages) for
manylinux x86_64 wheels up to the base image's glibc and CPython 3.12, against PyPI. A pinned version with
no wheel for the image, a hash that matches no file, or a dependency missing from the lock fails here,
before ``cdk deploy`` builds the image. Prints what each lock would install (``name==version``) and exits
with pip's status. (The GPU image's paddlepaddle-gpu is not on PyPI and not in the lock; its own sha256 is
checked by the Dockerfile.)

pip evaluates environment markers for the Python that runs it, not for ``--python-version``, so this script
gives pip the image's marker environment.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LOCKS = runpy.run_path(str(REPO / "containers" / "image-locks.py"))
#: The oldest glibc that manylinux wheels tag (manylinux2014 = 2.17); older tags follow from it.
OLDEST_GLIBC_MINOR = 17


def image_locks(image: str) -> list[Any]:
    return [lock for lock in LOCKS["locks"]() if lock.name.split()[0] == image]


def platforms(lock: Any) -> list[str]:
    """pip's ``--platform`` values: every manylinux tag the base image's glibc can load."""
    glibc_minor = int(lock.glibc.split(".")[1])
    tags = [f"manylinux_2_{minor}_x86_64" for minor in range(glibc_minor, OLDEST_GLIBC_MINOR - 1, -1)]
    return tags + ["manylinux2014_x86_64"]  # pip adds manylinux2010 and manylinux1 to this one


def _use_marker_environment(lock: Any) -> None:
    """Make pip's marker evaluation see the image's Python and platform instead of this process's."""
    from pip._vendor.packaging import markers

    environment = {**markers.default_environment(), **lock.marker_environment}
    markers.default_environment = lambda: dict(environment)
    probe = f'python_version == "{lock.python_version}" and platform_machine == "x86_64"'
    if not markers.Marker(probe).evaluate():
        raise RuntimeError("this pip does not take the image's marker environment; the check cannot be trusted")


def resolve(lock: Any) -> tuple[int, list[str]]:
    """Run pip's resolver over one lock; returns pip's status and ``name==version`` of what it would install."""
    from pip._internal.cli.main import main as pip_main

    _use_marker_environment(lock)
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        args = [
            "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
            "--require-hashes", "--only-binary=:all:", "--implementation", "cp", "--python-version", lock.python_version,
            *[option for platform in platforms(lock) for option in ("--platform", platform)],
            "--index-url", "https://pypi.org/simple", "--retries", "1", "--timeout", "30", "-r", str(REPO / lock.path),
        ]
        if lock.no_deps:
            args += ["--no-deps", "--ignore-requires-python"]
        status = pip_main(args)
        if status != 0 or not report.is_file():
            return status or 1, []
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return 0, sorted(f"{item['metadata']['name']}=={item['metadata']['version']}" for item in installs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", choices=("cpu-ocr", "vl-endpoint"))
    args = parser.parse_args(argv)
    for lock in image_locks(args.image):
        status, installs = resolve(lock)
        if status != 0:
            print(f"{lock.name}: pip could not install {lock.path} (status {status})", file=sys.stderr)
            return status
        print(f"# {lock.name}: {lock.path}")
        print("\n".join(installs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
