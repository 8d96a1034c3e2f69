#!/usr/bin/env python3
"""Print pyproject.toml's runtime dependencies (plus the named extras) as requirement lines.

The Dockerfiles install these before copying the code, so the slow dependency layer is cached across
code changes while the pins stay in pyproject.toml. Usage: ``requirements-from-pyproject.py PYPROJECT [EXTRA ...]``.
"""

from __future__ import annotations

import sys
import tomllib


def main(args: list[str]) -> int:
    with open(args[0], "rb") as handle:
        project = tomllib.load(handle)["project"]
    lines = list(project.get("dependencies", []))
    for extra in args[1:]:
        lines += project["optional-dependencies"][extra]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
