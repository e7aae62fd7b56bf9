#!/usr/bin/env bash
# Screenshots of every workbench page from the real application, on the shipped H200 data: the
# Sweep page after a real cpu sweep, the Train page after a short real training run, the
# Validate page after validating the shipped model on its held-out problems, the Bias page on the
# in-graph data, the Demo page on the H200 demo result. A --screenshot run keeps its settings and
# data in a throw-away folder of its own (app/workbench/main.cpp): nothing of the user's changes.
# Usage: docs/screenshots/take.sh [BUILD_DIR]   (writes docs/screenshots/<name>.png)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/app/diode-workbench
ingraph=trained_models/h200/h200-ingraph.db
# name  page[/tab]  [database]
shots=(
  "overview overviewPage"
  "hardware hardwarePage"
  "sweep sweepPage"
  "data dataPage/Measurements"
  "data-heatmap dataPage/Heatmap"
  "data-roofline dataPage/Roofline"
  "train trainPage"
  "validate validatePage"
  "bias biasPage $ingraph"
  "export exportPage"
  "demo demoPage"
)
run() {
  if command -v xvfb-run >/dev/null; then xvfb-run -a -s "-screen 0 1280x800x24" "$@"
  else QT_QPA_PLATFORM=offscreen "$@"; fi
}
for shot in "${shots[@]}"; do
  read -r name page db <<<"$shot"
  run "$bin" ${db:+"$db"} --page "$page" --screenshot "docs/screenshots/$name.png" \
    2> >(grep -v -e 'QPainter::begin' -e 'paint buffer returned inactive' -e XDG_RUNTIME_DIR >&2)
  echo "docs/screenshots/$name.png"
done
