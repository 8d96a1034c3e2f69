#!/usr/bin/env bash
# Lint and type checks, as CI runs them: ruff (rules in pyproject.toml [tool.ruff]) over every Python file,
# mypy (pyproject.toml [tool.mypy]) over the deployed code in lambdas/ and infra/. Needs `scripts/setup.sh`.
# Each step says when it starts and how long it took: a first mypy run, with no .mypy_cache yet, takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
  local name=$1; shift
  echo "check: $name ..." >&2
  local started=$SECONDS
  "$@"
  echo "check: $name passed in $((SECONDS - started)) s" >&2
}
step "ruff (lint)" .venv/bin/ruff check .
if [ -d .mypy_cache ]; then note=""; else note=" (first run: no .mypy_cache yet, this takes a few minutes)"; fi
step "mypy (types)$note" .venv/bin/mypy
