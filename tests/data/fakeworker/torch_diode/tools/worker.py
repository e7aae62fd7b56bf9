"""A stand-in for the inductor worker, for the process-supervision tests only (the real worker
needs a GPU). It speaks the same JSON-lines protocol and misbehaves on purpose, keyed by M:
  M == 13  the process dies with SIGSEGV mid-problem
  M == 17  the process hangs (the runner's per-problem timeout must kill it)
  M == 19  answers ok=false with an out-of-memory message, and says so on stderr (the worker log)
  M == 24  answers problem JSON version 2, as the in-graph worker does: times per method, a
           candidate that failed its in-graph timing, and both baselines
  other    answers two candidates with times derived from the sizes (version 1: time_ms)
FAKE_WORKER_INGRAPH=1 answers every problem as the in-graph worker does (version 2, both candidates
timed warm and cold in CUDA graphs, both baselines), data a graph_warm package can be trained on.
FAKE_WORKER_HELLO_FAIL=1 makes the hello report a missing GPU; FAKE_WORKER_TORCH=V reports torch V;
FAKE_WORKER_GPU_FROM_ENV=1 names the
GPU after CUDA_VISIBLE_DEVICES (so two GPUs look like two models). With FAKE_WORKER_TRACE=FILE each
worker appends to FILE a "start" line with the environment the sweep gave it, then a line for each request.
"""
import json
import os
import signal
import sys
import time


def template(**timing):
    """The one Triton candidate the stand-in answers, with its timing fields."""
    return dict(
        kind="triton", template="mm", BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_stages=3, num_warps=4, **timing
    )


def baselines(t):
    """Plain torch.compile's and max-autotune's times, as the in-graph worker gives them."""
    return {
        "default": {"graph_warm": t * 0.55, "graph_cold": t * 0.65, "compile_s": 0.4},
        "max_autotune": {"graph_warm": t * 0.5, "graph_cold": t * 0.6, "compile_s": 2.5, "pick": 0},
    }


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if os.environ.get("FAKE_WORKER_HELLO_FAIL"):
        emit({"event": "hello", "ok": False, "error": "torch 2.11.0 sees no CUDA GPU (fake)"})
        return 3
    gpu = "Fake GPU"
    if os.environ.get("FAKE_WORKER_GPU_FROM_ENV"):
        gpu += " " + os.environ.get("CUDA_VISIBLE_DEVICES", "?")
    emit(
        {
            "event": "hello",
            "ok": True,
            "torch": os.environ.get("FAKE_WORKER_TORCH", "2.11.0-fake"),
            "triton": "3.6.0-fake",
            "hardware": {"gpu": gpu, "sm_count": 7, "memory_mb": 1024, "driver": "0"},
            "pid": os.getpid(),
        }
    )
    trace = os.environ.get("FAKE_WORKER_TRACE")
    if trace:
        env = {
            k: os.environ.get(k)
            for k in (
                "CUDA_VISIBLE_DEVICES",
                "TORCH_DIODE_GPU_LOCK",
                "TORCHINDUCTOR_COMPILE_THREADS",
                "TORCHINDUCTOR_CACHE_DIR",
                "TORCH_DIODE_WORKER_CACHE",
            )
        }
        with open(trace, "a") as f:
            f.write(json.dumps({"event": "start", "pid": os.getpid(), "env": env}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("cmd") == "quit":
            return 0
        p = req["problem"]
        if trace:
            with open(trace, "a") as f:
                f.write(
                    json.dumps(
                        {
                            "pid": os.getpid(),
                            "M": p["M"],
                            "N": p["N"],
                            "inductor_benchmark": req.get("inductor_benchmark"),
                            "exhaustive_configs": req.get("exhaustive_configs"),
                            "sample_seed": req.get("sample_seed"),
                            "dtypes": req.get("vocabulary", {}).get("dtypes"),
                        }
                    )
                    + "\n"
                )
        if p["M"] == 13:
            os.kill(os.getpid(), signal.SIGSEGV)
        if p["M"] == 17:
            time.sleep(3600)
        if p["M"] == 19:
            sys.stderr.write("fake worker: CUDA out of memory at M=19\n")
            sys.stderr.flush()
            emit({"id": req["id"], "ok": False, "error": "out of GPU memory: tried to allocate 300 GiB"})
            continue
        t = 1e-6 * p["M"] * p["N"] * p["K"] / 1000.0
        if os.environ.get("FAKE_WORKER_INGRAPH"):
            p["version"] = 2
            tiled = t * (0.4 + 0.2 * (p["N"] % 3))  # the template wins on some shapes, ATen on others
            p["candidates"] = [
                {"kind": "aten", "name": "extern_kernels.mm", "times": {"graph_warm": t * 0.5, "graph_cold": t * 0.6}},
                template(times={"graph_warm": tiled, "graph_cold": tiled * 1.2}),
            ]
            if req.get("inductor_benchmark"):  # Inductor's own number, on the problems the sweep asks it for
                for c in p["candidates"]:
                    c["times"]["inductor_autotune"] = c["times"]["graph_warm"] * 1.5
            p["baselines"] = baselines(t)
            emit({"id": req["id"], "ok": True, "problem": p, "compile_s": 0.5})
            continue
        if p["M"] == 24:
            p["version"] = 2
            p["candidates"] = [
                {
                    "kind": "aten",
                    "name": "extern_kernels.mm",
                    "times": {"graph_warm": t * 0.5, "graph_cold": t * 0.6, "inductor_autotune": t},
                },
                template(
                    times={"inductor_autotune": t * 0.9},
                    error="wrong result: max error 0.5 of the largest ATen value (tolerance 0.03)",
                ),
            ]
            p["baselines"] = baselines(t)
            emit({"id": req["id"], "ok": True, "problem": p, "compile_s": 2.9})
            continue
        p["candidates"] = [{"kind": "aten", "name": "extern_kernels.mm", "time_ms": t}, template(time_ms=t * 0.9)]
        emit({"id": req["id"], "ok": True, "problem": p, "compile_s": 0.01})
    return 0


if __name__ == "__main__":
    sys.exit(main())
