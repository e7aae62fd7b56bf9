#!/bin/sh
# An interpreter whose import path has no torch, as on a machine without PyTorch: runs the real
# worker, which must say so in one message before the run starts.
exec python3 -S "$@"
