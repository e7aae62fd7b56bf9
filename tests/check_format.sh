#!/usr/bin/env bash
# CI's format check (CTest test `clang_format`, label unit): every tracked C++ file laid out as
# the repository's .clang-format says, by Debian 12's clang-format 14 (.ci/bootstrap installs
# it; other versions format some constructs differently). To fix:
#   git ls-files '*.cpp' '*.h' | xargs clang-format -i
set -euo pipefail
src="$1"
clang_format="${2:-clang-format}"
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: no list of tracked files to check" >&2
  exit 77
fi
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "clang-format is not installed; .ci/bootstrap installs it (Debian package clang-format)" >&2
  exit 1
fi
cd "$src"
git ls-files -z '*.cpp' '*.h' | xargs -0 "$clang_format" --dry-run --Werror
echo "$(git ls-files '*.cpp' '*.h' | wc -l) files formatted as .clang-format says"
