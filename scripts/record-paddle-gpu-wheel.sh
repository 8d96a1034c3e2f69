#!/usr/bin/env bash
# Records the sha256 of the PaddlePaddle GPU wheel the endpoint image installs, before its first build.
#
# PaddlePaddle's GPU 3.x wheels are not on PyPI, so the hashed lock cannot hold this one; the endpoint's
# Dockerfile installs it only if its sha256 is recorded in containers/vl-endpoint/paddlepaddle-gpu.sha256.
# This script downloads the wheel the Dockerfile names (its PADDLE_VERSION, PADDLE_GPU_WHEEL and CUDA_VERSION)
# from PaddlePaddle's index over HTTPS, prints its sha256 and the one the index publishes in its link, and
# records it only when both agree. Commit the file afterwards. Needs pip (the .venv of scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

dockerfile=containers/vl-endpoint/Dockerfile
record=containers/vl-endpoint/paddlepaddle-gpu.sha256
arg() { sed -n "s/^ARG $1=//p" "$dockerfile" | head -n 1; }
version=$(arg PADDLE_VERSION); wheel=$(arg PADDLE_GPU_WHEEL); cuda=$(arg CUDA_VERSION)
tag="cu${cuda//./}"
index="https://www.paddlepaddle.org.cn/packages/stable/${tag}/"

if grep -q "  ${tag}/${wheel}\$" "$record"; then
  echo "record-paddle-gpu-wheel: ${tag}/${wheel} is already recorded:"; grep "  ${tag}/${wheel}\$" "$record"; exit 0
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
.venv/bin/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --platform linux_x86_64 \
  --index-url "$index" --dest "$work" "paddlepaddle-gpu==${version}"
[ -f "$work/$wheel" ] || { echo "record-paddle-gpu-wheel: the index served $(ls "$work"), not $wheel" >&2; exit 1; }
got=$(sha256sum "$work/$wheel" | cut -d' ' -f1)
# The index's own link carries the file's sha256 (#sha256=...): a second source for the same value.
published=$(.venv/bin/python - "$index" "$wheel" <<'PY'
import re, sys, urllib.request
index, wheel = sys.argv[1], sys.argv[2]
page = urllib.request.urlopen(index + "paddlepaddle-gpu/", timeout=60).read().decode()
match = re.search(re.escape(wheel) + r"#sha256=([0-9a-f]{64})", page)
print(match.group(1) if match else "")
PY
)
echo "downloaded: $got"
echo "published:  ${published:-(the index page names no sha256 for this file)}"
if [ "$got" != "$published" ]; then
  echo "record-paddle-gpu-wheel: the two differ or the index publishes none; check the hash by hand before recording it" >&2
  exit 1
fi
printf '%s  %s/%s\n' "$got" "$tag" "$wheel" >> "$record"
echo "recorded in $record: commit it, then deploy the GPU stack"
