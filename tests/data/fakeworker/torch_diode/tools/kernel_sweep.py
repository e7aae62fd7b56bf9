"""A stand-in for the kernel sweep (the real one needs a GPU), for the process tests only: it
appends to --out the lines of $FAKE_KERNEL_SWEEP_LINES, and its command line and the GPU it was
given (CUDA_VISIBLE_DEVICES, TORCH_DIODE_GPU_LOCK) as one JSON line to $FAKE_KERNEL_SWEEP_TRACE
when set; with FAKE_KERNEL_SWEEP_HANG=1 it then waits to be killed, as a long sweep would be when
cancelled. With --list it prints $FAKE_KERNEL_SWEEP_LEFT cases (default none), writes no lines and
appends a line to $FAKE_KERNEL_SWEEP_LISTED when set.
"""
import json
import os
import sys
import time


def main():
    argv = sys.argv[1:]
    if "--list" in argv:
        listed = os.environ.get("FAKE_KERNEL_SWEEP_LISTED")
        if listed:
            with open(listed, "a") as f:
                f.write("listed\n")
        for i in range(int(os.environ.get("FAKE_KERNEL_SWEEP_LEFT", "0"))):
            print("kernel", f"family/case-{i}")
        return 0
    out = argv[argv.index("--out") + 1]
    trace = os.environ.get("FAKE_KERNEL_SWEEP_TRACE")
    if trace:
        with open(trace, "a") as f:
            gpu = {k: os.environ[k] for k in ("CUDA_VISIBLE_DEVICES", "TORCH_DIODE_GPU_LOCK") if k in os.environ}
            f.write(json.dumps({"argv": argv, "env": gpu}) + "\n")
    with open(os.environ["FAKE_KERNEL_SWEEP_LINES"]) as src, open(out, "a") as dst:
        dst.write(src.read())
    if os.environ.get("FAKE_KERNEL_SWEEP_HANG"):
        while True:
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
