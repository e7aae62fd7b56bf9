"""Measuring tools, imported only when you measure: the sweep worker (`python3 -m torch_diode.tools.worker`,
which `diode sweep` starts), in-graph timing, the collector, the demo and its model steps, and the timing
validation. `import torch_diode` loads none of them: a compile with the selector needs only the package's
top level (the Inductor hook, model loading, status and stats)."""
