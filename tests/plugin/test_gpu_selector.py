"""GPU tests of the selector inside Inductor (CTest label gpu; docs/PLUGIN.md: `ctest -L gpu`). They
compile real GEMMs with torch.compile on the local GPU and skip, with the reason, where torch,
Triton or a GPU is missing. Needs DIODE_CLI for the collector -> `diode import` check."""

import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
# The warm package shipped before baddbmm (feature schema 2), for what an older package does.
SCHEMA2 = os.path.join(ROOT, "tests", "data", "packages", "h200-ingraph-warm-schema2.diode")
os.environ["TORCH_DIODE_AUTOREGISTER"] = "0"  # this process installs explicitly
os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"

try:
    import torch

    from torch_diode.tools.worker import environment_problem

    WHY = environment_problem()
except Exception as e:  # whatever stops the import skips the suite, with its reason
    WHY = f"torch cannot be imported: {e}"


def child(code, **env):
    """A fresh Python, so `import torch_diode` really auto-registers."""
    e = dict(os.environ)
    e.pop("TORCH_DIODE_AUTOREGISTER", None)
    e["PYTHONPATH"] = os.path.join(ROOT, "plugin", "python")
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=600)


def retarget(src, dst, gpu):
    """A copy of a package whose manifest says it was made on `gpu` (checksum recomputed)."""
    data = open(src, "rb").read()
    (mlen,) = struct.unpack_from("<I", data, 12)
    manifest = json.loads(data[16 : 16 + mlen])
    manifest["hardware"]["gpu"] = gpu
    text = json.dumps(manifest).encode()
    rest = data[16 + mlen + 4 :]
    # Tensor offsets are relative to the data section, which follows the manifest's CRC.
    with open(dst, "wb") as f:
        f.write(data[:12] + struct.pack("<I", len(text)) + text + struct.pack("<I", zlib.crc32(text)) + rest)


def gemm_decisions(records):
    """The GEMM decisions among what torch_diode.record_decisions kept (it keeps the kernel-config and
    small-M form decisions of the compile too)."""
    from torch_diode._decisions import gemm_decisions as only_gemm

    return only_gemm(records)


@unittest.skipIf(WHY, WHY or "")
class SelectorTest(unittest.TestCase):
    def setUp(self):
        import torch_diode

        torch_diode.uninstall()
        torch._dynamo.reset()

    def tearDown(self):
        import torch_diode

        torch_diode.uninstall()
        torch._dynamo.reset()

    def compile_and_check(self, op, *shape, dtype=None):
        dtype = dtype or torch.bfloat16
        torch._dynamo.reset()  # a new compile each time, never dynamo's cached one
        B, M, N, K = shape
        if op == "bmm":
            a = torch.randn(B, M, K, device="cuda", dtype=dtype)
            b = torch.randn(B, K, N, device="cuda", dtype=dtype)
            fn, args = torch.bmm, (a, b)
        else:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            w = torch.randn(N, K, device="cuda", dtype=dtype)  # a weight used as x @ w.t()
            if op == "addmm":
                bias = torch.randn(N, device="cuda", dtype=dtype)
                fn, args = (lambda c, x, y: torch.addmm(c, x, y)), (bias, a, w.t())
            else:
                fn, args = torch.mm, (a, w.t())
        compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False, fullgraph=True)
        out = compiled(*args)
        ref = fn(*args)
        torch.testing.assert_close(out.float(), ref.float(), rtol=3e-2, atol=3e-1)
        return compiled, args

    def test_demo_records_each_decision_and_times_each_gemm_once(self):
        # `diode demo --decisions-out`: every decision of a plugin mode with its case and mode; a
        # file of decisions goes back to --problems, each distinct GEMM once (docs/BENCHMARKS.md,
        # "The plugin against plain torch.compile, GEMM by GEMM").
        line = json.dumps(dict(op="mm", dtype="bf16", B=1, M=64, N=256, K=512, a_transposed=False, b_transposed=True))
        with tempfile.TemporaryDirectory() as d:
            src, out, made = (os.path.join(d, n) for n in ("src.jsonl", "out.json", "made.jsonl"))
            with open(src, "w") as f:
                f.write((line + "\n") * 3)
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugin", "python"))
            r = subprocess.run(
                [sys.executable, "-m", "torch_diode.tools.demo", "--problems", src, "--modes", "default,plugin"]
                + ["--package", PACKAGE, "--json", out, "--decisions-out", made],
                capture_output=True,
                text=True,
                env=env,
                timeout=600,
            )
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(out) as f:
                (case,) = json.load(f)["cases"]
            self.assertEqual(case["name"], "mm bf16 M=64 N=256 K=512 Bt")
            for mode in ("default", "plugin"):
                self.assertGreater(case["results"][mode]["kernel_ms"], 0)
            with open(made) as f:
                (decision,) = [json.loads(x) for x in f]
            self.assertEqual((decision["case"], decision["mode"], decision["M"]), (case["name"], "plugin", 64))
            self.assertEqual(sum(c["kept"] for c in decision["candidates"]), 1)

    def test_import_autoregisters_and_selects_mm_addmm_bmm(self):
        code = r"""
import json, torch, torch_diode
st = torch_diode.get_integration_status()
assert st["installed"], st
for op in ("mm", "addmm", "bmm"):
    torch._dynamo.reset()
    a = torch.randn(4 if op == "bmm" else 1, 1024, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4 if op == "bmm" else 1, 4096, 2048, device="cuda", dtype=torch.bfloat16)
    if op == "mm": f, args = torch.mm, (a[0], b[0])
    elif op == "addmm":
        bias = torch.randn(2048, device="cuda", dtype=torch.bfloat16)
        f, args = (lambda c, x, y: torch.addmm(c, x, y)), (bias, a[0], b[0])
    else: f, args = torch.bmm, (a, b)
    torch.compile(f, mode="max-autotune-no-cudagraphs", dynamic=False)(*args)
print(json.dumps({"status": st, "stats": torch_diode.get_stats()}))
"""
        r = child(code)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        res = json.loads(r.stdout.strip().splitlines()[-1])
        print("auto-registration:", json.dumps({k: res["status"][k] for k in ("installed", "model", "hardware")}))
        print("stats:", json.dumps(res["stats"]))
        self.assertTrue(res["status"]["model"]["path"].endswith(".diode"))
        stats = res["stats"]
        self.assertEqual(stats["fallback_total"], 0)
        for op in ("mm", "addmm", "bmm"):
            self.assertGreaterEqual(stats["selections_by_op"].get(op, 0), 1, stats)
        self.assertGreater(stats["candidates_filtered"], 0)

    def test_training_step_every_gemm_reaches_the_selector_and_none_is_benchmarked(self):
        # Plain torch.compile with the selector installed (the recommended way): the forward's
        # GEMMs and the backward's (dX and dW, compiled by AOTAutograd on autograd's own thread)
        # all reach the selector, and with top_k 1 Inductor benchmarks none of them.
        import torch_diode
        from torch._dynamo.utils import counters

        model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))
        model = model.to("cuda", torch.bfloat16)
        x = torch.randn(4, 512, 1024, device="cuda", dtype=torch.bfloat16)
        # A backward compiled before install: autograd's thread then holds Inductor's own handler,
        # which install() must replace (measured: otherwise every backward GEMM was autotuned).
        torch.compile(model)(x).float().pow(2).mean().backward()
        torch._dynamo.reset()
        self.assertTrue(torch_diode.install(model=PACKAGE, top_k=1))
        counters.clear()
        compiled = torch.compile(model)
        for _ in range(2):
            compiled(x).float().pow(2).mean().backward()
        st = torch_diode.get_stats()
        print(
            "training step:",
            json.dumps(
                {
                    k: st[k]
                    for k in ("lowerings", "model_selections", "not_selected", "autotuned", "lowerings_by_thread")
                }
            ),
        )
        # forward: 2 addmm; backward: dX of the second layer, dW of both (dX of the first is not needed)
        self.assertGreaterEqual(st["lowerings"], 5)
        self.assertEqual(st["model_selections"] + sum(st["not_selected"].values()), st["lowerings"])
        self.assertEqual(st["autotuned"], 0)
        self.assertEqual(counters["inductor"].get("select_algorithm_autotune", 0), 0, dict(counters["inductor"]))
        # and in a thread of the user's own
        torch._dynamo.reset()
        torch_diode.reset_stats()
        worker = threading.Thread(target=lambda: torch.compile(torch.mm)(x[0], model[0].weight.t()), name="user-thread")
        worker.start()
        worker.join()
        self.assertGreaterEqual(torch_diode.get_stats()["lowerings_by_thread"].get("user-thread", 0), 1)

    def test_lookup_table_from_decisions_runs_the_same_kernels_without_the_plugin(self):
        # Deploy without the plugin: the decisions recorded for a model become Inductor's own
        # lookup table (diode lookup-table merges their inductor_lookup entries, as here); a compile
        # with only that table (LookupTableChoices, no torch_diode) gets exactly the kernels the
        # plugin kept and benchmarks nothing; an entry whose template source changed is refused by
        # Inductor's own hash check and the compile falls back to autotuning.
        import torch_diode
        from torch._dynamo.utils import counters
        from torch._inductor import config
        from torch._inductor.lookup_table import LookupTableChoices

        model = (
            torch.nn.Sequential(torch.nn.Linear(4096, 11008, bias=False), torch.nn.SiLU(), torch.nn.Linear(11008, 4096))
            .to("cuda", torch.bfloat16)
            .eval()
        )
        x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
        self.assertTrue(torch_diode.install(model=PACKAGE, margin=0.0))  # the arg-min: Triton picks too
        with torch.no_grad(), torch_diode.record_decisions() as decisions:
            want = torch.compile(model)(x)
        torch_diode.uninstall()
        table = {d["inductor_lookup"]["key"]: d["inductor_lookup"]["configs"] for d in gemm_decisions(decisions)}
        self.assertEqual(len(table), 2)
        print("lookup keys:", list(table), "device key:", repr(LookupTableChoices._get_device_key(x.device)))

        hits = []

        class Counting(LookupTableChoices):
            def lookup_template_configs(self, kernel_inputs, op_name, template_uids, template_hash_map=None):
                got = super().lookup_template_configs(kernel_inputs, op_name, template_uids, template_hash_map)
                hits.append(got)
                return got

        def compile_with(t):
            torch._dynamo.reset()
            counters.clear()
            hits.clear()
            with config.patch(
                {
                    "lookup_table.table": t,
                    "inductor_choices_class": Counting,
                    "max_autotune_gemm": True,
                    "force_disable_caches": True,
                }
            ), torch.no_grad():
                return torch.compile(model)(x)

        out = compile_with(table)
        torch.testing.assert_close(out.float(), want.float(), rtol=2e-2, atol=2e-1)
        self.assertEqual(len(hits), 2)
        for got, d in zip(hits, decisions):
            kept = d["inductor_lookup"]["configs"]
            self.assertEqual([t for t in got], [c["template_id"] for c in kept])
        self.assertEqual(counters["inductor"].get("select_algorithm_autotune", 0), 0, dict(counters["inductor"]))

        stale = {
            k: [dict(c, template_hash="0" * 16) if "template_hash" in c else c for c in v] for k, v in table.items()
        }
        if any("template_hash" in c for v in table.values() for c in v):
            compile_with(stale)
            self.assertIn({}, hits)  # a Triton entry of another template source: not used
            self.assertGreaterEqual(counters["inductor"].get("select_algorithm_autotune", 0), 1)

    def test_every_kernel_picked_in_model_steps_gives_atens_result(self):
        # Correctness before speed: every GEMM kernel the plugin picks in the
        # model-level benchmark's steps (the recommended way: plain torch.compile, default options)
        # is compiled alone on that problem, where the plugin must make the same decision, and
        # its output is held to the worker's own check against ATen (worker._tolerance).
        import torch_diode
        from torch_diode._native import vocabulary
        from torch_diode._selector import PROBLEM_KEYS
        from torch_diode.tools import models, worker

        worker.use_vocabulary(vocabulary())
        picked = {}  # problem key -> (problem, kept candidate, scenario)
        self.assertTrue(torch_diode.install(model=PACKAGE))
        for name, dtype in (
            ("vit-b8", "bf16"),
            ("vit-b8", "fp16"),
            ("llama-decode-b8-s1024", "bf16"),
            ("llama-prefill-b1-s1024", "bf16"),
            ("gpt2-train-b8-s512", "bf16"),
        ):
            torch._dynamo.reset()
            sc = models.scenario(name, dtype)
            with torch_diode.record_decisions() as decisions:
                models.compile_scenario(sc)(*sc.args)  # a training step compiles its backward here
            self.assertGreater(len(gemm_decisions(decisions)), 0, name)
            for d in gemm_decisions(decisions):
                kept = [c for c in d["candidates"] if c["kept"]]
                self.assertEqual(len(kept), 1, d)
                key = tuple(d[k] for k in PROBLEM_KEYS)
                picked.setdefault(key, (d, kept[0], f"{name}:{dtype}"))
            del sc
            torch.cuda.empty_cache()
        triton = {k: v for k, v in picked.items() if v[1].get("kind") != "aten"}
        print(f"model steps: {len(picked)} distinct GEMMs, {len(triton)} with a Triton kernel picked")
        self.assertGreater(len(triton), 0, "no Triton pick to check: the test would prove nothing")
        for key, (d, kept, where) in sorted(triton.items()):
            torch._dynamo.reset()
            p = {k: d[k] for k in PROBLEM_KEYS}
            fn, args = worker.make_inputs(p)
            with torch_diode.record_decisions() as again:
                out = torch.compile(fn, dynamic=False, fullgraph=True)(*args)

            def config(c):
                return {k: v for k, v in c.items() if k != "predicted_ms"}

            mine = [
                config(c)
                for a in gemm_decisions(again)
                if tuple(a[k] for k in PROBLEM_KEYS) == key
                for c in a["candidates"]
                if c["kept"]
            ]
            self.assertEqual(mine, [config(kept)], f"{where} {p}: the same GEMM alone got another decision")
            err = worker._relative_error(out, fn(*args))
            tol = worker._tolerance(p, kept)
            self.assertLessEqual(
                err,
                tol,
                f"{where} {p}: picked {kept} is wrong, max error {err:.3g} of "
                f"the largest ATen value (tolerance {tol:g})",
            )

    def test_a_gemm_the_model_cannot_score_keeps_plain_kernel(self):
        import torch_diode

        def baddbmm(addend_m):
            torch._dynamo.reset()
            a = torch.randn(8, 256, 512, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(8, 512, 384, device="cuda", dtype=torch.bfloat16)
            c = torch.randn(8, addend_m, 384, device="cuda", dtype=torch.bfloat16)
            out = torch.compile(torch.baddbmm, dynamic=False)(c, a, b)
            torch.testing.assert_close(out.float(), torch.baddbmm(c, a, b).float(), rtol=3e-2, atol=3e-1)
            return torch_diode.get_stats()

        # A package of feature schema 2 has no input for baddbmm: plain's kernel, said why.
        self.assertTrue(torch_diode.install(model=SCHEMA2))
        st = baddbmm(1)
        print("baddbmm, schema 2:", json.dumps(st["not_selected"]))
        self.assertGreaterEqual(st["not_selected"].get("unscorable_op_baddbmm", 0), 1, st)
        self.assertEqual(st["autotuned"], 0)
        # The shipped package was trained on baddbmm with an addend (B, 1, N) (ALiBi's): it decides
        # that one; an addend that varies along M is not the op it learnt, and keeps plain's kernel.
        self.assertTrue(torch_diode.install(model=PACKAGE))
        st = baddbmm(1)
        print("baddbmm (B,1,N), shipped:", json.dumps(st))
        self.assertGreaterEqual(st["model_selections"], 1, st)
        self.assertNotIn("unscorable_op_baddbmm", st["not_selected"], st)
        torch_diode.reset_stats()
        st = baddbmm(256)
        print("baddbmm (B,M,N), shipped:", json.dumps(st["not_selected"]))
        self.assertEqual(st["model_selections"], 0, st)
        self.assertGreaterEqual(st["not_selected"].get("unscorable_baddbmm_full_addend", 0), 1, st)
        self.assertEqual(st["autotuned"], 0)

    def test_top_k_bounds_what_is_kept_and_records_decisions(self):
        import torch_diode

        self.assertTrue(torch_diode.install(model=PACKAGE, top_k=2, performance_threshold=10.0, margin=0.0))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "decisions.jsonl")
            with torch_diode.record_decisions(path) as decisions:
                self.compile_and_check("mm", 1, 2048, 3072, 1536)
            self.assertGreaterEqual(len(gemm_decisions(decisions)), 1)
            for dec in gemm_decisions(decisions):
                kept = [c for c in dec["candidates"] if c["kept"]]
                self.assertEqual(len(kept), 2)
                best = min(c["predicted_ms"] for c in dec["candidates"])
                self.assertIn(best, [c["predicted_ms"] for c in kept])
            lines = open(path).read().splitlines()
            self.assertEqual(len(lines), len(gemm_decisions(decisions)))  # the file holds the GEMM ones
            if os.environ.get("DIODE_CLI"):  # the decisions are problem JSON: diode rank reads them
                r = subprocess.run(
                    [os.environ["DIODE_CLI"], "rank", "--package", PACKAGE, "--input", path],
                    capture_output=True,
                    text=True,
                )
                self.assertEqual(r.returncode, 0, r.stderr)
                got = json.loads(r.stdout.splitlines()[0])["predicted_ms"]
                want = [c["predicted_ms"] for c in decisions[0]["candidates"]]
                self.assertEqual(got, want)

    def test_top_1_with_aten_best_compiles_no_triton_kernel(self):
        import torch_diode
        from torch._inductor.utils import run_and_get_code

        self.assertTrue(torch_diode.install(model=PACKAGE, top_k=1))
        # Search shapes for one where the model predicts ATen fastest, then check the code.
        shapes = [
            (1, 8192, 8192, 8192),
            (1, 4096, 4096, 4096),
            (1, 16, 4096, 4096),
            (1, 2048, 2048, 8192),
            (1, 8192, 1024, 1024),
            (1, 64, 14336, 4096),
        ]
        for shape in shapes:
            torch._dynamo.reset()
            with torch_diode.record_decisions() as decisions:
                a = torch.randn(shape[1], shape[3], device="cuda", dtype=torch.bfloat16)
                b = torch.randn(shape[2], shape[3], device="cuda", dtype=torch.bfloat16).t()
                f = torch.compile(torch.mm, mode="max-autotune-no-cudagraphs", dynamic=False)
                _, code = run_and_get_code(f, a, b)
            kept = [c for d in gemm_decisions(decisions) for c in d["candidates"] if c["kept"]]
            self.assertEqual(len(kept), 1)
            source = "\n".join(code)
            if kept[0]["kind"] == "aten":
                self.assertNotIn("triton_tem", source)
                self.assertIn("extern_kernels.mm", source)
                print("ATen predicted best for", shape, "-> no Triton template kernel in the generated code")
                return
            self.assertIn("triton_tem", source)  # the one Triton kernel kept is what runs
        self.skipTest("the model preferred a Triton kernel for every probed shape")

    def test_exhaustive_scores_the_large_space_and_keeps_top_k(self):
        import torch_diode

        self.assertTrue(torch_diode.install(model=PACKAGE, top_k=3, search_space="EXHAUSTIVE"))
        with torch_diode.record_decisions() as decisions:
            self.compile_and_check("mm", 1, 1024, 1024, 4096)
        dec = gemm_decisions(decisions)[0]
        self.assertGreater(len(dec["candidates"]), 200)
        self.assertLessEqual(sum(c["kept"] for c in dec["candidates"]), 3)
        # No config scored (let alone kept) needs more shared memory than this GPU has: those
        # cannot compile, and are excluded before scoring. The loads of num_stages tiles of A and B:
        limit = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
        element = torch.tensor([], dtype=getattr(torch, {"bf16": "bfloat16", "fp16": "float16"}[dec["dtype"]]))
        for c in dec["candidates"]:
            if c["kind"] == "triton":
                loads = c["num_stages"] * (c["BLOCK_M"] * c["BLOCK_K"] + c["BLOCK_K"] * c["BLOCK_N"])
                self.assertLessEqual(loads * element.element_size(), limit, c)
        print(
            f"EXHAUSTIVE: scored {len(dec['candidates'])} candidates, excluded "
            f"{torch_diode.get_stats()['candidates_excluded']} (limit {limit} bytes), mean scoring "
            f"{torch_diode.get_stats()['mean_scoring_us']:.0f} us"
        )

    def test_selector_error_falls_back_to_inductor_once_logged(self):
        import torch_diode
        from torch_diode import _selector

        self.assertTrue(torch_diode.install(model=PACKAGE))
        original = _selector.Runtime.select

        def broken(self, *a, **k):
            raise RuntimeError("injected failure")

        _selector.Runtime.select = broken
        try:
            with self.assertLogs("torch_diode", level="WARNING") as logs:
                self.compile_and_check("mm", 1, 512, 768, 1024)
                torch._dynamo.reset()
                self.compile_and_check("addmm", 1, 512, 768, 1024)
        finally:
            _selector.Runtime.select = original
        stats = torch_diode.get_stats()
        self.assertEqual(stats["fallbacks"].get("RuntimeError"), 2)
        self.assertEqual(len([m for m in logs.output if "injected failure" in m]), 1)

    def test_corrupt_and_foreign_packages(self):
        import torch_diode

        with tempfile.TemporaryDirectory() as d:
            corrupt = os.path.join(d, "corrupt.diode")
            data = bytearray(open(PACKAGE, "rb").read())
            data[-50] ^= 0xFF
            open(corrupt, "wb").write(data)
            with self.assertLogs("torch_diode", level="WARNING"):
                self.assertFalse(torch_diode.install(model=corrupt))
            st = torch_diode.get_integration_status()
            self.assertFalse(st["installed"])
            self.assertIn("checksum mismatch", st["reason"])
            self.compile_and_check("mm", 1, 256, 512, 512)  # compiles as without the plugin
            self.assertEqual(torch_diode.get_stats()["calls"], 0)

            foreign = os.path.join(d, "a100.diode")
            retarget(PACKAGE, foreign, "NVIDIA A100-SXM4-80GB")
            # Not chosen automatically: only that package on the path, and the shipped one.
            r = child(
                "import json, torch_diode; print(json.dumps(torch_diode.list_available_models()))",
                TORCH_DIODE_MODEL_PATH=foreign,
                TORCH_DIODE_AUTOREGISTER="0",
            )
            models = {os.path.basename(m["path"]): m for m in json.loads(r.stdout)}
            self.assertFalse(models["a100.diode"]["matches_hardware"])
            # register_model loads it, with a warning.
            with self.assertLogs("torch_diode", level="WARNING") as logs:
                self.assertTrue(torch_diode.register_model(foreign))
            self.assertTrue(any("A100" in m for m in logs.output))
            self.compile_and_check("mm", 1, 256, 512, 512)
            self.assertGreaterEqual(torch_diode.get_stats()["model_selections"], 1)

    def test_no_gpu_and_old_torch_install_nothing(self):
        r = child(
            "import json, torch_diode; print(json.dumps(torch_diode.get_integration_status()))", CUDA_VISIBLE_DEVICES=""
        )
        st = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertFalse(st["installed"])
        self.assertIn("no CUDA GPU", st["reason"])
        self.assertEqual(r.stderr.count("WARNING"), 1, r.stderr)
        r = child(
            "import torch; torch.__version__ = '2.8.0'\nimport json, torch_diode\n"
            "print(json.dumps(torch_diode.get_integration_status()))"
        )
        st = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertFalse(st["installed"])
        self.assertIn("too old", st["reason"])
        self.assertEqual(r.stderr.count("WARNING"), 1, r.stderr)

    def test_collector_output_imports_with_diode(self):
        from torch._inductor.select_algorithm import add_feedback_saver

        from torch_diode.tools.collect_timings import collect

        other = []
        add_feedback_saver(lambda *args: other.append(args[1]))  # another tool's saver keeps working
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "collected.jsonl")
            with collect(path) as c:
                self.compile_and_check("addmm", 1, 384, 1536, 768)
                torch._dynamo.reset()
                self.compile_and_check("bmm", 3, 256, 512, 640)
            self.assertGreaterEqual(c.problems, 2)
            self.assertTrue(other)
            recs = [json.loads(x) for x in open(path)]
            self.assertEqual({r["op"] for r in recs}, {"addmm", "bmm"})
            self.assertTrue(all(r["version"] == 2 for r in recs))  # the format diode sweep exports
            self.assertTrue(all(any(cand["times"].get("inductor_autotune") for cand in r["candidates"]) for r in recs))
            if os.environ.get("DIODE_CLI"):
                db = os.path.join(d, "collected.db")
                r = subprocess.run(
                    [os.environ["DIODE_CLI"], "import", path, "--db", db], capture_output=True, text=True
                )
                self.assertEqual(r.returncode, 0, r.stderr)
                s = subprocess.run(
                    [os.environ["DIODE_CLI"], "stats", "--db", db, "--json"], capture_output=True, text=True
                )
                self.assertEqual(json.loads(s.stdout)["problems"], len(recs))
                print("collector:", len(recs), "problems imported with diode import")

    def test_scoring_overhead_per_decision(self):
        import torch_diode

        self.assertTrue(torch_diode.install(model=PACKAGE, top_k=1))
        for n in (256, 512, 768, 1024, 1536, 2048, 3072, 4096):
            self.compile_and_check("mm", 1, n, n + 128, n)
        st = torch_diode.get_stats()
        per = st["mean_scoring_us"] + st["mean_selector_us"]
        print(
            f"selector overhead per decision: {per:.0f} us (scoring {st['mean_scoring_us']:.0f} us) "
            f"over {st['model_selections']} decisions of "
            f"~{st['candidates_scored'] // max(1, st['model_selections'])} candidates"
        )
        self.assertLess(per, 2000)


if __name__ == "__main__":
    if WHY:
        print(f"skipped: {WHY}")
        sys.exit(77)  # CTest's SKIP_RETURN_CODE: a skip is shown as skipped, not passed
    unittest.main(verbosity=2)
