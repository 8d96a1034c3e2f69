#!/usr/bin/env bash
# Lint and type checks, as CI runs them: ruff (rules in pyproject.toml [tool.ruff]) over every Python file,
# mypy (pyproject.toml [tool.mypy]) over the deployed code in lambdas/ and infra/. Needs `scripts/setup.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/mypy
