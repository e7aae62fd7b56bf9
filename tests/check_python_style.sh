#!/usr/bin/env bash
# CI's Python check (CTest test `python_style`, label unit): every tracked Python file laid out by
# black and clean under flake8, Debian 12's (black 23.1, flake8 5.0; .ci/bootstrap installs both),
# at the C++ code's 120 columns. E203 and W503 are the flake8 rules black's layout breaks. To fix:
#   git ls-files '*.py' | xargs black -l 120
set -euo pipefail
cd "$1"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: no list of tracked files to check" >&2
  exit 77
fi
for tool in black flake8; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool is not installed; .ci/bootstrap installs it (Debian package $tool)" >&2; exit 1; }
done
git ls-files -z '*.py' | xargs -0 black --check --quiet --line-length 120
git ls-files -z '*.py' | xargs -0 flake8 --max-line-length 120 --extend-ignore E203,W503
echo "$(git ls-files '*.py' | wc -l) Python files as black lays them out, flake8 clean"
