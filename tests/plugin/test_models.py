"""The model-step scenarios' names (torch_diode.tools.models, without torch; CTest label unit): every
name of the grammar is a scenario, the default set among them, and a name outside it is refused with
the grammar, by `diode demo --models` too. And the step sweep's part without a GPU
(torch_diode.tools.step_kernels): how profiled kernels are matched across compiles, how the workers'
parts become kernel lines the library reads, and what it refuses before starting, also when `diode
sweep-kernels --steps` runs it."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plugin", "python"))

# E402: imported after sys.path names the checkout's package above, not an installed one.
from torch_diode.tools import demo, models, step_kernels  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DIODE = os.environ.get("DIODE_CLI", os.path.join(ROOT, "build", "app", "diode"))


class ScenarioNamesTest(unittest.TestCase):
    def test_a_name_says_the_model_the_step_the_cache_the_batch_and_the_context(self):
        cases = {
            "llama-decode-b1-s512": ("decode", {"batch": 1, "context": 512}),
            "llama-decode-cat-b8-s1024": ("decode", {"batch": 8, "context": 1024, "cache": "cat"}),
            "gqa-decode-sdpa-b16-s8192": (
                "decode",
                {"batch": 16, "context": 8192, "model": "gqa", "cache": "cat", "attention": "sdpa"},
            ),
            "gqa-prefill-b2-s2048": ("prefill", {"batch": 2, "context": 2048, "model": "gqa"}),
            "gpt2-train-b4-s1024": ("train", {"batch": 4, "context": 1024}),
            "vit-b32": ("vit", {"batch": 32}),
        }
        for name, want in cases.items():
            self.assertEqual(models.parse_scenario(name), want, name)

    def test_the_default_set_and_the_table_are_names_of_the_grammar(self):
        self.assertEqual(len(set(models.SCENARIOS)), len(models.SCENARIOS))
        for name in models.SCENARIOS + models.TABLE_SCENARIOS:
            models.parse_scenario(name)
        self.assertTrue(set(models.TABLE_SCENARIOS) <= set(models.SCENARIOS))

    def test_a_name_outside_the_grammar_is_refused_with_it(self):
        for bad in (
            "vit-b8-s512",  # a ViT block has no context
            "gpt2-train-b8",  # a training step has one
            "llama-prefill-cat-b1-s1024",  # the cache is a decode's
            "llama-decode-b0-s512",
            "mistral-decode-b1-s512",
            "llama-decode-cat-b8-s1024-x",
        ):
            with self.assertRaises(ValueError) as e:
                models.parse_scenario(bad)
            self.assertIn(f"'{bad}'", str(e.exception))
            self.assertIn(models.SCENARIO_GRAMMAR, str(e.exception))

    def test_demo_takes_any_name_of_the_grammar_and_names_a_bad_entry(self):
        self.assertEqual(demo._model_specs("llama-decode-cat-b4-s2048:fp16"), [("llama-decode-cat-b4-s2048", "fp16")])
        self.assertEqual(demo._model_specs("table"), [(n, models.DTYPES[0]) for n in models.TABLE_SCENARIOS])
        with self.assertRaises(ValueError) as e:
            demo._model_specs("vit-b8,llama-decode-b1")
        self.assertIn("--models entry 'llama-decode-b1'", str(e.exception))
        with self.assertRaises(ValueError) as e:
            demo._model_specs("vit-b8:fp8")
        self.assertIn("DTYPE 'fp8'", str(e.exception))

    def test_demo_processes_run_in_waves_over_the_gpus_named(self):
        self.assertEqual(demo.process_waves(3, ["0", "1"]), [[(0, "0"), (1, "1")], [(2, "0")]])
        self.assertEqual(demo.process_waves(2, []), [[(0, None)], [(1, None)]])

        def run(*args):
            return subprocess.run(
                [sys.executable, "-m", "torch_diode.tools.demo", *args],
                capture_output=True,
                text=True,
                timeout=120,
                env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugin", "python")),
            )

        with tempfile.TemporaryDirectory() as d:
            # Real child processes, each refusing the name: started per GPU, then nothing to merge.
            decisions = os.path.join(d, "decisions.jsonl")
            with open(decisions + ".process1", "w") as f:  # what a process wrote: appended, then removed
                f.write('{"op": "mm"}\n')
            x = os.path.join(d, "x.json")
            r = run(
                "--models", "llama-decode-b1", "--processes", "3", "--gpus", "4, 5", "--json", x,
                "--decisions-out", decisions,
            )  # fmt: skip
            self.assertEqual(r.returncode, 1, r.stderr)
            for said in ("process 1 of 3 on GPU 4", "process 2 of 3 on GPU 5", "process 3 of 3 on GPU 4"):
                self.assertIn(said, r.stderr)
            self.assertEqual(r.stderr.count("--models entry 'llama-decode-b1'"), 3)
            self.assertIn("no process finished", r.stderr)
            with open(decisions) as f:
                self.assertEqual(f.read(), '{"op": "mm"}\n')
            self.assertFalse(os.path.exists(decisions + ".process1"))
            for bad, says in (
                (["--processes", "1", "--gpus", "0"], "--gpus spreads"),
                (["--processes", "2", "--gpus", "0,0"], "name each GPU once"),
            ):
                r = run("--models", "vit-b8", *bad, "--json", os.path.join(d, "y.json"))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(says, r.stderr)


SHAPE = {"reduction": True, "x": 4096, "y": 1, "r": 4096, "hint": "inner", "persistent_default": False,
         "persistent_possible": True, "loads": 2, "stores": 1, "reductions": 1, "other_ops": 4,
         "bytes_read": 33562624.0, "bytes_written": 8192.0, "itemsize": 2, "contiguity": 1.0}  # fmt: skip
A = {"R0_BLOCK": 2048, "XBLOCK": 4, "num_stages": 1, "num_warps": 8, "persistent": False}
B = {"R0_BLOCK": 512, "XBLOCK": 1, "num_stages": 1, "num_warps": 4, "persistent": False}


def part(default_ms, configs):
    kernel = {"shape": SHAPE, "default_ms": default_ms, "grid": 3, "configs": configs}
    return {"gpu": "NVIDIA H200", "sm_count": 132, "kernels": {"fused_mm_t_view": kernel}}


class StepKernelsTest(unittest.TestCase):
    def test_a_kernel_is_known_by_its_operations_whatever_its_category_and_place(self):
        rows = [
            {"name": "triton_red_fused_mm_t_view_12", "us": 40.0},
            {"name": "triton_unk_fused_mm_t_view_3", "us": 2.5},  # fixed config, another place: the same kernel
            {"name": "triton_per_fused_native_layer_norm_0", "us": 3.0},
            {"name": "nvjet_sm90_tst_128x8_64x12_4x1_v_bz_TNT", "us": 100.0},  # not Inductor's Triton
            {"name": "triton_tem_fused_mm_t_view_1", "us": 9.0},  # a GEMM template: its configuration is the GEMM's
        ]
        times = step_kernels.kernel_times(rows)
        self.assertEqual(times["fused_mm_t_view"], 42.5)
        self.assertEqual(times["fused_native_layer_norm"], 3.0)
        self.assertEqual(len(times), 2)

    def test_a_site_measured_in_a_step_gets_its_share_of_the_steps_time(self):
        # Two alike sites: the library form runs a cuDNN kernel (10 us a step) and ATen's copy of the
        # cache (6 us); decomposed, Inductor's kernels do the work (some renamed by the new fusion); a
        # shared cuBLAS kernel barely changes.
        library = {"cudnn_sdpa_kernel": 10.0, "void at::native::copy": 6.0, "triton_poi_fused_add_1": 3.0}
        library["nvjet_gemm"] = 100.0
        decomposed = {"triton_red_fused_bmm_cat_2": 9.0, "nvjet_gemm": 100.4, "triton_poi_fused_add_mm_3": 3.0}
        # The step: 0.300 ms with the library form, 0.296 decomposed, round by round.
        lib_ms, dec_ms = step_kernels.site_times(2, [0.300, 0.301, 0.299], [0.296, 0.297, 0.295], library, decomposed)
        self.assertAlmostEqual(lib_ms, 0.008)  # (10 + 6) us / 2 sites: Inductor's renamed kernel is not the library's
        self.assertAlmostEqual(dec_ms, 0.006)  # that, less 0.004 ms / 2 sites
        # A step much faster decomposed than the library kernels' time: at least an eighth of it.
        lib_ms, dec_ms = step_kernels.site_times(1, [0.300], [0.200], library, decomposed)
        self.assertAlmostEqual(dec_ms, lib_ms / 8)
        with self.assertRaises(ValueError) as e:  # nothing of the library form told apart
            step_kernels.site_times(
                1, [0.3], [0.3], {"nvjet_gemm": 100.0, "triton_poi_x_1": 5.0}, {"nvjet_gemm": 100.5}
            )
        self.assertIn("told apart", str(e.exception))
        site = {"op": "attention", "dtype": "bf16", "B": 32, "M": 1, "N": 513, "K": 128, "kv_group": 4, "concat": True}
        self.assertEqual(step_kernels.site_name(site), "attention-b32-m1-n513-k128-g4-cat")

    def test_workers_parts_become_kernel_lines_the_library_trains_on(self):
        other = part(0.046, [{"config": B, "error": "wrong result"}])
        other["kernels"]["fused_add_1"] = dict(other["kernels"]["fused_mm_t_view"], configs=[], default_ms=0.002)
        lines = step_kernels.lines_of(
            "llama-decode-cat-b1-s512", [part(0.044, [{"config": A, "time_ms": 0.020}]), other]
        )
        self.assertEqual(
            [line["name"] for line in lines],
            ["step:llama-decode-cat-b1-s512/fused_mm_t_view", "step:llama-decode-cat-b1-s512/fused_add_1"],
        )
        self.assertEqual(lines[1]["default_ms"], 0.002)  # a kernel only the second worker's part holds
        lines = lines[:1]
        line = lines[0]
        self.assertEqual(line["name"], "step:llama-decode-cat-b1-s512/fused_mm_t_view")
        self.assertEqual(line["family"], "llama2-7b")  # held out with the llama2-7b kernel cases
        self.assertAlmostEqual(line["default_ms"], 0.045)
        self.assertEqual([e["config"] for e in line["configs"]], [A, B])
        self.assertEqual(line["grid"], 3)
        if not os.access(DIODE, os.X_OK):
            self.skipTest(f"no diode binary at {DIODE}")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "step.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps(line) + "\n")
            r = subprocess.run([DIODE, "import", path, "--db", os.path.join(d, "s.db")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(step_kernels._done(path, "NVIDIA H200"), {"llama-decode-cat-b1-s512"})
            self.assertEqual(step_kernels._done(path, "NVIDIA H100 80GB HBM3"), set())

    def test_a_training_step_or_a_missing_package_is_refused_before_any_gpu_work(self):
        with self.assertRaises(ValueError) as e:
            step_kernels.family_of("gpt2-train-b8-s512")
        self.assertIn("training step", str(e.exception))
        self.assertEqual(step_kernels.family_of("gqa-decode-cat-b4-s2048"), "llama3-8b")
        self.assertEqual(step_kernels.family_of("vit-b8"), "vit-l16")
        for argv, says in (
            (["--steps", "gpt2-train-b8-s512", "--package", __file__], "training step"),
            (["--steps", "llama-decode-b1", "--package", __file__], "is not of the form"),
            (["--steps", "vit-b8", "--package", "/no/such.diode"], "no such file"),
            (["--steps", "vit-b8", "--package", __file__, "--match", "("], "is not a regular expression"),
        ):
            r = subprocess.run(
                [sys.executable, "-m", "torch_diode.tools.step_kernels", "--out", "/dev/null", *argv],
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugin", "python")),
            )
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(says, r.stderr)

    def test_diode_sweep_kernels_steps_lists_the_steps_left_and_refuses_what_does_not_apply(self):
        if not os.access(DIODE, os.X_OK):
            self.skipTest(f"no diode binary at {DIODE}")
        package = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "steps.jsonl")
            with open(out, "w") as f:  # one step measured already, on whichever GPU
                f.write(json.dumps({"kind": "kernel", "name": "step:llama-decode-cat-b1-s512/fused_mm_t_view"}) + "\n")

            def sweep(*args):
                return subprocess.run(
                    [DIODE, "sweep-kernels", "--out", out, *args], capture_output=True, text=True, timeout=120
                )

            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list", "--kinds", "kernel")
            self.assertEqual((r.returncode, r.stdout), (0, "vit-b4\n"), r.stderr)
            # Its sites are not measured yet: with them asked for too (the default), both steps are left.
            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list")
            self.assertEqual((r.returncode, r.stdout), (0, "vit-b4\nllama-decode-cat-b1-s512\n"), r.stderr)
            with open(out, "a") as f:  # a step's site line, or the one line that says it has none
                f.write(
                    json.dumps({"kind": "site", "name": "step:llama-decode-cat-b1-s512/mm-b1-m1-n4096-k4096"}) + "\n"
                )
                f.write(json.dumps({"kind": "site", "name": "step:vit-b4/sites", "skipped": "no small-M site"}) + "\n")
            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list", "--kinds", "site")
            self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list", "--kinds", "tile")
            self.assertEqual(r.returncode, 2)
            self.assertIn("give kernel, site or both", r.stderr)
            r = sweep("--steps", "vit-b4")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--steps needs --package", r.stderr)
            # --match chooses among a step's kernels, a pattern beginning with "-" included.
            r = sweep(
                "--steps",
                "vit-b4,llama-decode-cat-b1-s512",
                "--package",
                package,
                "--list",
                "--kinds",
                "kernel",
                "--match",
                "-x",
            )
            self.assertEqual((r.returncode, r.stdout), (0, "vit-b4\n"), r.stderr)
            r = sweep("--steps", "vit-b4", "--package", package, "--families", "llama2-7b")
            self.assertEqual(r.returncode, 2)
            self.assertIn("choose among the kernel sweep's cases", r.stderr)  # not a step's kernels
            r = sweep("--package", package)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--package requires --steps", r.stderr)
            for empty in ("", ","):
                r = sweep("--steps", empty, "--package", package, "--list")
                self.assertEqual(r.returncode, 2)
                self.assertIn("names no step", r.stderr)
            with open(out, "a") as f:  # a step measured in part: listed, until its lines are removed
                f.write(
                    json.dumps({"kind": "kernel", "name": "step:vit-b4/fused_add", "grid": 3, "configs": [{}]}) + "\n"
                )
            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list")
            self.assertEqual((r.returncode, r.stdout), (0, "vit-b4\n"), r.stderr)
            r = sweep("--steps", "vit-b4,llama-decode-cat-b1-s512", "--package", package, "--list", "--limit", "1")
            self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)  # --limit cuts steps on purpose
            r = sweep("--steps", "gpt2-train-b8-s512", "--package", package, "--list")
            self.assertEqual(r.returncode, 2)
            self.assertIn("training step", r.stderr)  # the tool's own refusal, before any GPU work


if __name__ == "__main__":
    unittest.main()
