"""torch_diode: pick GEMM kernels inside torch.compile from a Diode Workbench model package.

This part of the package holds the sweep worker (`python3 -m torch_diode.worker`) and the plan
expander shared with the C++ runner; it imports torch only when a GPU sweep actually runs.
"""

__version__ = "0.1.0"
