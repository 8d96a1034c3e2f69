#!/usr/bin/env bash
# Regenerates the container images' hashed lock files (containers/cpu-ocr/requirements.lock,
# containers/cpu-ocr/models.lock, containers/vl-endpoint/requirements.lock) from pyproject.toml, each
# image's requirement files and the versions installed in .venv (see containers/image-locks.py).
# Run it after changing any of those, or after scripts/setup.sh upgraded .venv; then commit the locks.
# Needs scripts/setup.sh's .venv and PyPI. Installs a pinned uv into .tools/uv (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

# uv resolves for another Python and platform than this machine's (--python-version, --python-platform)
# and writes every file's sha256. Pinned: another uv may resolve or format the locks differently.
UV_VERSION=0.13.8
if [ ! -x .tools/uv/bin/uv ] || [ "$(.tools/uv/bin/uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "lock-images: installing uv $UV_VERSION into .tools/uv"
  [ -x .tools/uv/bin/python ] || .venv/bin/python -m venv .tools/uv
  .tools/uv/bin/pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi
.venv/bin/python containers/image-locks.py write --uv "$PWD/.tools/uv/bin/uv"
