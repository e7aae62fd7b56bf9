#!/usr/bin/env bash
# Screenshots of every workbench page from the real application, on what a fresh clone opens: the
# shipped H200 in-graph data and the plugin's default package for it (h200-ingraph-warm). The
# Sweep page with its plan and a run of the data to compare with, the Train page as it opens (a
# screenshot starts no sweep and no training), the Validate page after validating the package on
# the data's held-out problems, the Bias page, the Export page on the package, the Demo page on
# the H200 demo result and its model steps. A --screenshot run keeps its settings and data in a
# throw-away folder of its own (app/workbench/main.cpp): nothing of the user's changes.
# Usage: docs/screenshots/take.sh [BUILD_DIR]   (writes docs/screenshots/<name>.png)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/app/diode-workbench
# name  page[/tab] as the page list names them  [database]
shots=(
  "overview Overview"
  "hardware Hardware"
  "sweep Sweep"
  "data Data/Measurements"
  "data-heatmap Data/Heatmap"
  "data-roofline Data/Roofline"
  "train Train"
  "validate Validate"
  "bias Bias"
  "export Export"
  "demo Demo"
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
