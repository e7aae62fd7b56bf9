"""A stand-in for the step sweep (the real one needs a GPU), for the process tests only: it appends to
--out the lines of $FAKE_STEP_SWEEP_LINES and its command line as one JSON line to
$FAKE_KERNEL_SWEEP_TRACE when set. With --list it prints nothing (every step measured) and writes nothing.
"""
import json
import os
import sys


def main():
    argv = sys.argv[1:]
    if "--list" in argv:
        return 0
    out = argv[argv.index("--out") + 1]
    trace = os.environ.get("FAKE_KERNEL_SWEEP_TRACE")
    if trace:
        with open(trace, "a") as f:
            f.write(json.dumps({"argv": argv}) + "\n")
    with open(os.environ["FAKE_STEP_SWEEP_LINES"]) as src, open(out, "a") as dst:
        dst.write(src.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
