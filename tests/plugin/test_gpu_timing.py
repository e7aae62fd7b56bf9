"""GPU tests of the worker's in-graph timing path (CTest label gpu). They compile real GEMMs on
the local GPU; without torch, Triton or a GPU the whole suite is skipped with the reason and
exits 77, which CTest shows as skipped (never as passed)."""

import json
import os
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROBLEMS = os.path.join(ROOT, "tests", "data", "gpu-timing-problems.jsonl")
os.environ["TORCH_DIODE_AUTOREGISTER"] = "0"

try:
    from torch_diode.tools import worker

    WHY = worker.environment_problem()
except Exception as e:  # whatever stops the import skips the suite, with its reason
    WHY = f"torch_diode.tools.worker cannot be imported: {e}"


def problems():
    with open(PROBLEMS) as f:
        return [json.loads(line) for line in f if line.strip()]


class TimingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from torch_diode._native import vocabulary

        worker.use_vocabulary(vocabulary())  # core's names, as the runner's request hands them over
        cls.collector, cls.timer, why = worker.setup()
        assert why is None, why

    def measure(self, p, **kw):
        out, _compile_s, _failed = worker.measure(p, "DEFAULT", self.collector, self.timer, **kw)
        return out

    def test_every_candidate_timed_in_graph_with_baselines(self):
        p = problems()[0]  # bf16 decode mm: ATen and ~20 Triton configs
        out = self.measure(p)
        self.assertEqual(out["version"], 2)
        ok = [c for c in out["candidates"] if not c.get("error")]
        self.assertGreaterEqual(len(ok), 5, out["candidates"])
        self.assertTrue(any(c["kind"] == "aten" for c in ok))
        for c in ok:
            t = c["times"]
            for m in ("graph_warm", "graph_cold", "inductor_autotune"):
                self.assertGreater(t[m], 0.0, (m, c))
                self.assertLess(t[m], 10.0, (m, c))
            # Cold L2 never makes a GEMM much faster than warm L2.
            self.assertGreater(t["graph_cold"], 0.8 * t["graph_warm"], c)
        for b in ("default", "max_autotune"):
            self.assertGreater(out["baselines"][b]["graph_warm"], 0.0)
            self.assertGreater(out["baselines"][b]["compile_s"], 0.0)
        pick = out["candidates"][out["baselines"]["max_autotune"]["pick"]]
        inductor = [c["times"]["inductor_autotune"] for c in ok]
        self.assertEqual(pick["times"]["inductor_autotune"], min(inductor))
        # The compiled max-autotune function runs its pick: same kernel, same time (within noise).
        self.assertAlmostEqual(
            out["baselines"]["max_autotune"]["graph_warm"],
            pick["times"]["graph_warm"],
            delta=0.15 * pick["times"]["graph_warm"] + 0.002,
        )

    def test_wrong_result_is_a_failed_measurement(self):
        real = worker.compat.choice_run_fn
        broken = []

        def corrupting(choice, inputs, out):
            launch = real(choice, inputs, out)
            if worker.compat.is_extern(choice):
                return launch
            broken.append(choice)

            def wrong():
                launch()
                out.neg_()

            return wrong

        worker.compat.choice_run_fn = corrupting
        try:
            out = self.measure(problems()[1])
        finally:
            worker.compat.choice_run_fn = real
        self.assertTrue(broken)
        triton = [c for c in out["candidates"] if c["kind"] == "triton"]
        self.assertTrue(triton)
        for c in triton:
            self.assertIn("error", c)
            self.assertNotIn("graph_warm", c["times"])
        aten = [c for c in out["candidates"] if c["kind"] == "aten" and not c.get("error")]
        self.assertTrue(aten, out["candidates"])
        self.assertTrue(any(c["error"].startswith("wrong result") for c in triton), triton[0]["error"])

    def test_no_autotune_shape_times_aten(self):
        out = self.measure(problems()[4])  # M = 1: Inductor goes straight to ATen
        self.assertGreaterEqual(len(out["candidates"]), 1)
        aten = [c for c in out["candidates"] if c["kind"] == "aten"]
        self.assertTrue(aten)
        self.assertGreater(aten[0]["times"]["graph_warm"], 0.0)

    def test_a_time_does_not_depend_on_what_ran_before(self):
        """An fp32 M=1 mm whose matrix was just written took 5.8 us warm on an H100 and 9.3 us once
        it had been evicted (cuBLAS reads it past L2), when timings started from the L2 their
        predecessor left. Every timing now starts flushed: just written, after a flush and after a
        rewrite give one time."""
        import torch

        shape = {"B": 1, "M": 1, "N": 896, "K": 4864, "a_transposed": False, "b_transposed": True}
        fn, args = worker.make_inputs(dict(shape, op="mm", dtype="fp32"))

        def warm():
            with self.timer.stream_ctx():
                return self.timer.time(lambda: fn(*args), cold=False)[0]

        fresh = warm()
        self.timer.flush()
        flushed = warm()
        for x in args:
            x.mul_(1.0)  # written again: back in L2
        torch.cuda.synchronize()
        rewritten = warm()
        for t in (flushed, rewritten):
            self.assertLessEqual(abs(t - fresh), 0.05 * fresh + 0.0003, (fresh, flushed, rewritten))

    def test_fast_path_agrees_with_compiling_each_candidate_alone(self):
        from torch_diode.tools import validate_timing

        p = dict(problems()[2], search_space="DEFAULT")  # attention-like bmm
        out = self.measure(p)
        import random

        for cand in validate_timing.pick(out["candidates"], 2, random.Random(1)):
            warm, cold = validate_timing.slow_time(p, cand, self.timer)
            fast = cand["times"]["graph_warm"]
            # The recorded validation (docs/BENCHMARKS.md) asks 3 % or 0.3 us; here 10 % + 0.5 us
            # keeps the test about the method, not about a noisy machine.
            self.assertLessEqual(abs(fast - warm), 0.10 * warm + 0.0005, (cand, fast, warm))


if __name__ == "__main__":
    if WHY:
        print(f"skipped: {WHY}")
        sys.exit(77)
    unittest.main()
