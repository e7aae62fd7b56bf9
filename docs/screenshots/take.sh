#!/usr/bin/env bash
# Screenshots of every workbench page from the real application under Xvfb, on the shipped H200
# data: the Sweep page after a real cpu sweep, the Train page after a short real training run,
# the Validate page after validating the shipped model, the Demo page on the H200 demo result.
# Usage: docs/screenshots/take.sh [BUILD_DIR]   (writes docs/screenshots/<page>.png)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/app/diode-workbench
TMPDIR=$(mktemp -d) # settings, data and the sweep's store of every run; removed at the end
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
for page in overviewPage hardwarePage sweepPage dataPage trainPage validatePage exportPage demoPage; do
  # Fresh settings and data for each page: the shipped dataset and model, the default layout.
  XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d) \
  xvfb-run -a -s "-screen 0 1280x800x24" "$bin" --page "$page" --screenshot "docs/screenshots/${page%Page}.png" \
    2> >(grep -v -e 'QPainter::begin' -e 'paint buffer returned inactive' -e XDG_RUNTIME_DIR >&2)
  echo "docs/screenshots/${page%Page}.png"
done
