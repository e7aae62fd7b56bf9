"""The stand-in worker lives where the real one does: torch_diode.tools.worker."""
