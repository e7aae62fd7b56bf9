"""CPU tests of the torch_diode package: the ctypes binding against `diode rank`, bad packages,
model discovery, and the status on a Python without torch. Run by CTest (label unit) with
DIODE_CLI, TORCH_DIODE_LIBRARY and PYTHONPATH set."""

import json
import os
import struct
import subprocess
import tempfile
import unittest
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(ROOT, "trained_models", "h200", "h200-gemm-mlp-v2.diode")
HELDOUT = os.path.join(ROOT, "trained_models", "h200", "h200-heldout.jsonl")
NO_TORCH = os.path.join(ROOT, "tests", "data", "python-without-torch.sh")
# The warm in-graph package shipped before baddbmm and the training layouts (feature schema 2, never
# trained on a column-major A): what an older package does is tested on it.
SCHEMA2 = os.path.join(ROOT, "tests", "data", "packages", "h200-ingraph-warm-schema2.diode")


def schema3_copy(src, dst, baddbmm_seen):
    """A copy of a feature-schema-2 package widened to schema 3: an op_baddbmm input (after op_bmm)
    with zero weights and the normalisation of a flag never seen in training (mean 0, deviation 1),
    or, with `baddbmm_seen`, small weights and the normalisation of a flag that varied."""
    with open(src, "rb") as f:
        data = f.read()
    (mlen,) = struct.unpack_from("<I", data, 12)
    manifest = json.loads(data[16 : 16 + mlen])
    assert manifest["feature_schema_version"] == 2
    at = manifest["feature_names"].index("op_bmm") + 1
    base = 16 + mlen + 4
    width = manifest["architecture"]["layers"][0]
    blob, tensors = b"", []
    for t in manifest["tensors"]:
        v = list(struct.unpack_from(f"<{t['nbytes'] // 4}f", data, base + t["offset"]))
        name, shape = t["name"], list(t["shape"])
        if name.endswith("input_mean"):
            v.insert(at, 0.5 if baddbmm_seen else 0.0)
            shape = [width + 1]
        elif name.endswith("input_std"):
            v.insert(at, 0.5 if baddbmm_seen else 1.0)
            shape = [width + 1]
        elif name.endswith("layer0.weight"):
            rows = [v[r * width : (r + 1) * width] for r in range(shape[0])]
            v = [
                x
                for r, row in enumerate(rows)
                for x in row[:at] + [0.01 * ((r % 5) - 2) if baddbmm_seen else 0.0] + row[at:]
            ]
            shape = [shape[0], width + 1]
        raw = struct.pack(f"<{len(v)}f", *v)
        tensors.append(dict(t, shape=shape, offset=len(blob), nbytes=len(raw), crc32=zlib.crc32(raw)))
        blob += raw
    manifest.update(tensors=tensors, data_bytes=len(blob), feature_schema_version=3)
    manifest["feature_names"].insert(at, "op_baddbmm")
    manifest["architecture"]["layers"][0] = width + 1
    text = json.dumps(manifest).encode()
    with open(dst, "wb") as f:
        f.write(data[:12] + struct.pack("<I", len(text)) + text + struct.pack("<I", zlib.crc32(text)) + blob)
    return dst


def with_manifest(src, dst, **fields):
    """A copy of package `src` with `fields` set in its manifest (the tensors as they were)."""
    with open(src, "rb") as f:
        data = f.read()
    (mlen,) = struct.unpack_from("<I", data, 12)
    manifest = json.loads(data[16 : 16 + mlen])
    manifest.update(fields)
    text = json.dumps(manifest).encode()
    with open(dst, "wb") as f:
        f.write(
            data[:12] + struct.pack("<I", len(text)) + text + struct.pack("<I", zlib.crc32(text)) + data[20 + mlen :]
        )
    return dst


def ktc(uid, **kw):
    """A KernelTemplateChoice as Inductor hands one to the selector (2.11's shape)."""
    from types import SimpleNamespace as NS

    return NS(template=NS(uid=uid), params=NS(kwargs=kw), extra_kwargs={})


def lowering_of(p, smem_device=None):
    """Inductor's view of problem line `p`: (by_template, kernel_inputs) with its candidates as
    KernelTemplateChoices and its operands laid out as the line says (static sizes need no Inductor)."""
    from types import SimpleNamespace as NS

    from torch_diode._selector import TORCH_DTYPE_NAMES

    B, M, N, K = p.get("B", 1), p["M"], p["N"], p["K"]
    batched = p["op"] in ("bmm", "baddbmm")

    def operand(rows, cols, transposed):
        size = [rows, cols]
        stride = [1, rows] if transposed else [cols, 1]
        if batched:
            size, stride = [B] + size, [rows * cols] + stride
        return size, stride

    (s1, t1), (s2, t2) = operand(M, K, p.get("a_transposed")), operand(K, N, p.get("b_transposed"))
    dtype = "torch." + TORCH_DTYPE_NAMES[p["dtype"]]
    mat1 = NS(get_size=lambda: s1, get_stride=lambda: t1, get_dtype=lambda: dtype)
    mat2 = NS(get_size=lambda: s2, get_stride=lambda: t2)
    addend = NS(get_size=lambda: [B, 1, N], get_stride=lambda: [N, 0, 1])  # baddbmm's, as problem JSON's
    extra = {"device": lambda: smem_device} if smem_device else {}
    inputs = NS(mat1mat2=lambda: (mat1, mat2), nodes=lambda: [addend, mat1, mat2], **extra)
    by_template = {}
    for c in p["candidates"]:
        if c["kind"] == "aten":
            uid = "aten::" + c["name"].split(".")[-1]
            by_template.setdefault(uid, []).append(ktc(uid))
        else:
            params = {k: v for k, v in c.items() if k not in ("kind", "template", "times", "error", "time_ms")}
            uid = "triton::" + c["template"]
            by_template.setdefault(uid, []).append(ktc(uid, **params))
    return by_template, inputs


BMM_KEYS = [("aten", "extern_kernels.bmm", 0, 0, 0, 0, 0, 0, -1, -1), ("triton", "bmm", 16, 64, 64, 8, 3, 4, -1, -1)]


def decided(model, problem, keys=BMM_KEYS):
    """(why the library did not decide, "" when it did; each key's predicted ms) for `problem`, with
    every candidate kept."""
    from torch_diode._native import Selector

    decision, _kept, predicted, _excluded = Selector(model, {"top_k": 100, "margin": 0}).decide_gemm(problem, keys)
    return decision.not_selected.decode(), predicted


def python_env(**extra):
    env = dict(os.environ)
    env.pop("TORCH_DIODE_AUTOREGISTER", None)  # importing torch_diode.tools.worker (test_compat) sets it
    env["PYTHONPATH"] = os.path.join(ROOT, "plugin", "python")
    env.update(extra)
    return env


class rt_recording:
    """Runtime's recorders as a context: the decisions made inside (record_decisions' path)."""

    def __init__(self, rt):
        self.rt, self.decisions = rt, []

    def __enter__(self):
        self.rt.recorders.append(self.decisions)
        return self.decisions

    def __exit__(self, *exc):
        self.rt.recorders.remove(self.decisions)


class NativeTest(unittest.TestCase):
    def setUp(self):
        # The selector reads Inductor's config on every lowering; this Python has no torch, so
        # test_compat's fake Inductor stands in for it (the real one runs in test_gpu_selector).
        from test_compat import FakeInductor

        self.inductor = FakeInductor().__enter__()
        self.addCleanup(self.inductor.__exit__, None, None, None)

    def test_decisions_score_as_diode_rank_does(self):
        # The selector's rows, made from problem-JSON candidates, are scored by the library exactly as
        # `diode rank` scores the lines (every candidate kept, best first: margin 0, top_k past them).
        from torch_diode._native import Model, Selector, candidate_key

        ranked = subprocess.run(
            [os.environ["DIODE_CLI"], "rank", "--package", PACKAGE, "--input", HELDOUT],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
        selector = Selector(Model(PACKAGE), {"top_k": 100000, "margin": 0})
        with open(HELDOUT) as f:
            lines = [line for line in f if line.strip()]
        self.assertEqual(len(lines), len(ranked))
        for line, out in zip(lines, ranked):
            p, answer = json.loads(line), json.loads(out)
            problem = tuple(p.get(k, d) for k, d in (("op", 0), ("dtype", 0), ("B", 1), ("M", 0), ("N", 0), ("K", 0)))
            problem += (int(p.get("a_transposed", False)), int(p.get("b_transposed", False)))
            decision, kept, predicted, excluded = selector.decide_gemm(
                problem, [candidate_key(c) for c in p["candidates"]]
            )
            if not decision.selected:  # a lowering offering only ATen has nothing to choose: nothing scored
                self.assertEqual(decision.not_selected, b"only_aten")
                continue
            self.assertEqual(predicted, answer["predicted_ms"])
            self.assertEqual(kept, answer["order"])
            self.assertEqual(set(excluded), {""})

    def test_a_second_sweep_measures_the_fastest_beyond_the_portfolios_where_the_grid_holds_them(self):
        from torch_diode._native import NativeError, fastest_beyond_portfolio, kernel_candidates

        descent = os.path.join(ROOT, "trained_models", "h200", "h200-kernels-descent.jsonl")
        extra = fastest_beyond_portfolio([descent])
        self.assertGreater(len(extra), 20)
        self.assertEqual(len({json.dumps(c, sort_keys=True) for c in extra}), len(extra))
        with open(descent) as f:
            kernels = [json.loads(t) for t in f if t.strip() and "skipped" not in t]
        offered = 0
        for k in kernels:
            portfolio = kernel_candidates(k["shape"])
            with_extra = kernel_candidates(k["shape"], extra=extra)
            self.assertEqual(with_extra[: len(portfolio)], portfolio, k["name"])
            grid_extra = with_extra[len(portfolio) :]
            self.assertTrue(all(c in extra and c not in portfolio for c in grid_extra), k["name"])
            # The plugin applies only a configuration of the kernel's grid: every candidate is one.
            grid = kernel_candidates(k["shape"], grid=True)
            self.assertTrue(all(c in grid for c in with_extra), k["name"])
            offered += len(grid_extra)
        self.assertGreater(offered, len(kernels))
        with self.assertRaisesRegex(NativeError, "lines"):
            fastest_beyond_portfolio([])
        with self.assertRaisesRegex(NativeError, "no-such-file"):
            fastest_beyond_portfolio(["/no-such-file.jsonl"])
        with self.assertRaisesRegex(NativeError, "one of"):
            kernel_candidates(kernels[0]["shape"], near=extra[0], grid=True)
        with self.assertRaisesRegex(NativeError, r"extra\[0\].*XBLOCK"):
            kernel_candidates(kernels[0]["shape"], extra=[{"XBLOCK": 3, "num_warps": 4, "persistent": False}])

    def test_a_kernel_is_given_only_a_configuration_the_shipped_lines_measured_on_it(self):
        # The H100 kernel lines hold each kernel's whole portfolio, the library's candidates for it; the
        # package built from them fixes, on each kernel, one of those or none.
        from torch_diode._native import Model, Selector, kernel_candidates

        package = os.path.join(ROOT, "trained_models", "h100", "h100-ingraph-warm.diode")
        selector = Selector(Model(package), {})
        fixed = whole = unmeasured = 0
        with open(os.path.join(ROOT, "trained_models", "h100", "h100-kernels.jsonl")) as f:
            lines = [json.loads(t) for t in f if t.strip()]
        measured = [k for k in lines if "skipped" not in k]
        self.assertGreater(len(measured), 200)
        for k in measured:
            candidates = kernel_candidates(k["shape"])
            tried = [c["config"] for c in k["configs"]]
            # A configuration the GPU's memory stopped (workers share it) is left out of the line.
            self.assertEqual(tried, [c for c in candidates if c in tried], k["name"])
            whole += tried == candidates
            answer = selector.decide_json("kernel_config", {"shape": k["shape"]})
            if answer["fixed"]:
                fixed += 1
                self.assertIn(answer["config"], candidates, k["name"])
                unmeasured += answer["config"] not in tried
        self.assertGreater(fixed, 50)
        # The three lines the GPU's memory cut short (a 12-worker sweep), and at most one pick among
        # what they lack.
        self.assertGreaterEqual(whole, len(measured) - 3)
        self.assertLessEqual(unmeasured, 1)

    def test_the_selector_says_which_decisions_its_package_models(self):
        # The plugin turns Inductor's first-run tuning off only where kernel configurations are decided.
        from torch_diode._native import Model, Selector
        from torch_diode._selector import Options, Runtime

        warm = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        self.assertEqual(Selector(Model(warm)).options()["decides"], ["gemm_kernel", "small_m_form", "kernel_config"])
        self.assertEqual(Selector(Model(SCHEMA2)).options()["decides"], ["gemm_kernel"])
        self.assertTrue(Runtime(Model(warm), Options()).decides("kernel_config"))
        self.assertFalse(Runtime(Model(SCHEMA2), Options()).decides("kernel_config"))

    def test_installed_with_kernel_configurations_inductors_first_run_tuning_is_off_until_uninstall(self):
        # The Inductor options install() sets, on this test's fake Inductor: first-run tuning off where the
        # package decides kernel configurations, Inductor's value back after, and a torch without it left alone.
        import torch_diode
        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        triton = self.inductor.config.triton
        warm = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        for package, off in ((warm, True), (SCHEMA2, False)):
            runtime = Runtime(Model(package), Options(small_m_forms=False))
            torch_diode._engage(runtime.options, runtime)
            try:
                self.assertIs(triton.autotune_pointwise, not off, package)
                self.assertTrue(self.inductor.config.max_autotune_gemm)
            finally:
                torch_diode._restore_config()
            self.assertIs(triton.autotune_pointwise, True)
        runtime = Runtime(Model(warm), Options(kernel_configs=False, small_m_forms=False))
        torch_diode._engage(runtime.options, runtime)
        self.assertIs(triton.autotune_pointwise, True)
        torch_diode._restore_config()
        del self.inductor.config.triton
        runtime = Runtime(Model(warm), Options(small_m_forms=False))
        torch_diode._engage(runtime.options, runtime)  # no such option here: nothing to turn off, no error
        torch_diode._restore_config()

    def test_the_shipped_form_decision_writes_a_decomposed_projections_input_once(self):
        # The library's answer for a batch-1 step's projections and its attention (the H200 package
        # decomposes both): a projection reads its computed input written out once, attention does not.
        from torch_diode._native import Model, Selector

        package = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        selector = Selector(Model(package), {})
        site = {"dtype": "bf16", "B": 1, "M": 1, "kv_group": 1, "concat": False}
        down = selector.decide_json("small_m_form", {"site": dict(site, op="mm", N=4096, K=11008)})
        self.assertTrue(down["decompose"], down)
        self.assertTrue(down["materialise_operand"], down)
        attention = dict(site, op="attention", B=128, N=2048, K=128, concat=True)
        answer = selector.decide_json("small_m_form", {"site": attention})
        self.assertTrue(answer["decompose"], answer)
        self.assertFalse(answer["materialise_operand"], answer)

    def test_candidate_key_is_the_librarys_row(self):
        # The key Python builds is the library's packed row, field for field,
        # as diode_vocabulary names them; a problem-JSON candidate survives the round trip.
        from torch_diode._native import candidate_dict, candidate_key, vocabulary

        key = vocabulary()["candidate_key"]
        self.assertEqual(key[-len(vocabulary()["candidate_flags"]) :], vocabulary()["candidate_flags"])
        self.assertEqual(len(candidate_key({"kind": "aten", "name": "extern_kernels.mm"})), len(key))
        triton = {"kind": "triton", "template": "mm", "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}
        triton.update(GROUP_M=4, num_stages=3, num_warps=4, EVEN_K=True)
        self.assertEqual(candidate_key(triton), ("triton", "mm", 64, 128, 32, 4, 3, 4, 1, -1))
        for c in (triton, {"kind": "aten", "name": "extern_kernels.bmm"}):
            self.assertEqual(candidate_dict(candidate_key(c)), c)
        self.assertEqual(candidate_key({k: v for k, v in triton.items() if k != "GROUP_M"})[5], 8)

    def test_eval_and_the_plugin_pick_the_same_kernel_on_every_heldout_problem(self):
        # `diode eval` scores the plugin's rule: every shipped held-out problem (each GPU's in-graph
        # packages, warm and cold) put through the plugin's own path (Inductor's choices translated to
        # the library's rows, the device's shared memory, the one library call) keeps the candidate
        # `diode eval --table --decisions` reports for it, or plain's kernel for the same reason.
        from types import SimpleNamespace as NS

        from torch_diode import _inductor_compat as compat
        from torch_diode._native import Model, candidate_key
        from torch_diode._selector import KERNEL_FIELDS, Options, Runtime

        compat._smem_limits[0] = 232448  # what an H100 or H200 reports (the GPU table's 227 KB)
        self.addCleanup(compat._smem_limits.pop, 0, None)
        compared = 0
        for gpu in ("h200", "h100"):
            heldout = os.path.join(ROOT, "trained_models", gpu, f"{gpu}-ingraph-heldout.jsonl")
            with open(heldout) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            for regime in ("warm", "cold"):
                package = os.path.join(ROOT, "trained_models", gpu, f"{gpu}-ingraph-{regime}.diode")
                with tempfile.TemporaryDirectory() as d:
                    out = os.path.join(d, "decisions.jsonl")
                    subprocess.run(
                        [os.environ["DIODE_CLI"], "eval", "--package", package, "--input", heldout, "--table"]
                        + ["--decisions", out],
                        check=True,
                        capture_output=True,
                    )
                    with open(out) as f:
                        decisions = [json.loads(line) for line in f]
                self.assertGreater(len(decisions), 100, package)
                rt = Runtime(Model(package), Options())  # the package named alone, as `diode eval` has it
                for e in decisions:
                    p = lines[e["record"]]
                    by_template, inputs = lowering_of(p, NS(type="cuda", index=0))
                    kept = rt.lowering(by_template, inputs, p["op"])
                    self.assertEqual(len(kept), 1, (package, e))
                    key = compat.ktc_key(kept[0])[:KERNEL_FIELDS]
                    self.assertEqual(key, candidate_key(e["pick"])[:KERNEL_FIELDS], (package, e))
                    compared += 1
                st = rt.snapshot()
                self.assertEqual(st["lowerings"], len(decisions))
                reasons = {}
                for e in decisions:
                    if e["not_selected"]:
                        reasons[e["not_selected"]] = reasons.get(e["not_selected"], 0) + 1
                self.assertEqual(st["not_selected"], reasons, package)  # and for the same reasons
        print(f"eval and the plugin: the same pick on {compared} held-out decisions")

    def test_selector_scores_a_repeated_gemm_once(self):
        # Runtime.select with the real package on Inductor-shaped inputs (static sizes need no
        # Inductor): the second identical decision reuses the scores and keeps the same choices.
        from types import SimpleNamespace as NS

        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        ingraph = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        rt = Runtime(Model(ingraph), Options(top_k=2, margin=0, performance_threshold=100))
        mat1 = NS(get_size=lambda: [64, 4096], get_stride=lambda: [4096, 1], get_dtype=lambda: "torch.bfloat16")
        mat2 = NS(get_size=lambda: [4096, 1024], get_stride=lambda: [1, 4096])
        inputs = NS(mat1mat2=lambda: (mat1, mat2))
        mm, aten = NS(uid="triton::mm"), NS(uid="aten::mm")

        def choices():
            tiles = [(bm, bn, bk) for bm in (16, 64, 128) for bn in (64, 128) for bk in (32, 64)]
            return {
                "aten::mm": [NS(template=aten, params=NS(kwargs={}), extra_kwargs={})],
                "triton::mm": [
                    NS(
                        template=mm,
                        params=NS(
                            kwargs=dict(
                                BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, GROUP_M=8, num_stages=3, num_warps=4, EVEN_K=True
                            )
                        ),
                        extra_kwargs={"ALLOW_TF32": False},
                    )
                    for m, n, k in tiles
                ],
            }

        def kept_keys(kept):
            return [(k.template.uid, tuple(sorted(k.params.kwargs.items()))) for k in kept]

        first = kept_keys(rt.lowering(choices(), inputs, "mm"))
        second = kept_keys(rt.lowering(choices(), inputs, "mm"))
        self.assertEqual(len(first), 2)
        self.assertEqual(first, second)
        st = rt.snapshot()
        self.assertEqual((st["model_selections"], st["scores_reused"], st["candidates_scored"]), (2, 1, 26))

    def test_every_lowering_is_counted_and_what_the_model_cannot_decide_keeps_plain(self):
        # Runtime.lowering, the handler's whole path, with the real package: the lowerings seen,
        # the reasons a lowering was not selected, and no candidate list long enough for Inductor
        # to benchmark (top_k 1) whatever the GEMM.
        from types import SimpleNamespace as NS

        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        ingraph = SCHEMA2  # it cannot score baddbmm

        def inputs(dtype="torch.bfloat16"):
            mat1 = NS(get_size=lambda: [64, 4096], get_stride=lambda: [4096, 1], get_dtype=lambda: dtype)
            mat2 = NS(get_size=lambda: [4096, 1024], get_stride=lambda: [1, 4096])
            addend = NS(get_size=lambda: [1024], get_stride=lambda: [1])  # a bias, as a baddbmm's would be read
            return NS(mat1mat2=lambda: (mat1, mat2), nodes=lambda: [addend, mat1, mat2])

        def ktc(uid, **kw):
            return NS(template=NS(uid=uid), params=NS(kwargs=kw), extra_kwargs={})

        def choices(*extra):
            by = {
                "aten::addmm": [ktc("aten::addmm")],
                "aten::bias_addmm": [ktc("aten::bias_addmm")],
                "triton::mm": [
                    ktc("triton::mm", BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=4)
                ],
            }
            for uid in extra:
                by[uid] = [ktc(uid)]
            return by

        def uids(kept):
            return [k.template.uid for k in kept]

        rt = Runtime(Model(ingraph), Options())
        aten_only = {"aten::addmm": [ktc("aten::addmm")], "aten::bias_addmm": [ktc("aten::bias_addmm")]}
        self.assertEqual(uids(rt.lowering(aten_only, inputs(), "addmm")), ["aten::bias_addmm"])
        self.assertEqual(uids(rt.lowering(choices(), inputs(), "baddbmm")), ["aten::bias_addmm"])
        self.assertEqual(uids(rt.lowering(choices(), inputs("torch.int8"), "addmm")), ["aten::bias_addmm"])
        kept = rt.lowering(choices("decompose_k"), inputs(), "addmm")  # one the model cannot score
        self.assertEqual(len(kept), 1)
        self.assertNotIn("decompose_k", uids(kept))
        st = rt.snapshot()
        self.assertEqual(st["lowerings"], 4)
        self.assertEqual(st["model_selections"], 1)
        self.assertEqual(st["not_selected"], {"only_aten": 1, "unscorable_op_baddbmm": 1, "unscorable_dtype": 1})
        self.assertEqual(st["autotuned"], 0)
        self.assertEqual(st["candidates_unknown_dropped"], 1)
        self.assertEqual(sum(st["lowerings_by_thread"].values()), 4)
        self.assertEqual(st["lowerings_by_mode"], {"recommended": 4})

        # A compile outside the recommended way is counted and said.
        import torch_diode

        self.inductor.config.max_autotune = True
        rt.lowering(choices(), inputs(), "addmm")
        way = torch_diode._recommended_way(rt, rt.snapshot())
        self.assertFalse(way["ok"])
        self.assertEqual(len(way["why"]), 1)
        self.assertIn("1 GEMM lowering(s) compiled with max-autotune mode", way["why"][0])
        self.inductor.config.max_autotune = False
        self.inductor.config.max_autotune_pointwise = True  # wider pointwise tuning: said with its measured cost
        rt.lowering(choices(), inputs(), "addmm")
        way = torch_diode._recommended_way(rt, rt.snapshot())
        self.assertEqual(len(way["why"]), 2)
        self.assertIn("compiled with wider pointwise and reduction autotuning", way["why"][1])
        self.inductor.config.max_autotune_pointwise = False
        # Inductor's first-run pointwise benchmark back on in a compile: said where the package's kernel
        # configurations turned it off, not where they did not (this runtime's package decides none).
        self.inductor.config.triton.autotune_pointwise = True
        rt.lowering(choices(), inputs(), "addmm")
        self.assertEqual(len(torch_diode._recommended_way(rt, rt.snapshot())["why"]), 2)
        warm = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
        for options, said in ((Options(), True), (Options(kernel_configs=False), False)):
            deciding = Runtime(Model(warm), options)
            self.assertIs(deciding.turns_first_run_tuning_off(), said)
            deciding.lowering(choices(), inputs(), "addmm")
            way = torch_diode._recommended_way(deciding, deciding.snapshot())
            self.assertEqual(not way["ok"], said, way)
            if said:
                self.assertIn("first-run benchmark of pointwise configurations turned back on", way["why"][0])
        self.inductor.config.triton.autotune_pointwise = False
        deciding = Runtime(Model(warm), Options())
        deciding.lowering(choices(), inputs(), "addmm")
        self.assertTrue(torch_diode._recommended_way(deciding, deciding.snapshot())["ok"])
        self.assertTrue(torch_diode._recommended_way(Runtime(Model(ingraph), Options()), {})["ok"])
        self.assertIn(
            "autotune_gemm=False",
            torch_diode._recommended_way(Runtime(Model(ingraph), Options(autotune_gemm=False)), {})["why"][0],
        )

        # Asked for: Inductor's own candidates (it benchmarks them), or the error itself.
        auto = Runtime(Model(ingraph), Options(fallback="autotune", keep_unscored=True))
        self.assertIsNone(auto.lowering(choices(), inputs(), "baddbmm"))
        self.assertEqual(len(auto.lowering(choices("decompose_k"), inputs(), "addmm")), 2)
        self.assertEqual(auto.snapshot()["autotuned"], 2)
        with self.assertRaises(LookupError):
            Runtime(Model(ingraph), Options(fallback="raise")).lowering(choices(), inputs("torch.int8"), "addmm")
        broken = Runtime(Model(ingraph), Options())
        broken.selector.decide_gemm = lambda *a: 1 / 0
        with self.assertLogs("torch_diode", level="WARNING") as logs:
            self.assertEqual(uids(broken.lowering(choices(), inputs(), "addmm")), ["aten::bias_addmm"])
            broken.lowering(choices(), inputs(), "addmm")
        self.assertEqual(len(logs.output), 1)  # logged once per kind of error
        self.assertEqual(broken.snapshot()["not_selected"], {"fallback_ZeroDivisionError": 2})
        self.assertEqual(Options(fallback=True).fallback, "plain")  # the pre-0.3 booleans
        self.assertEqual(Options(fallback=False).fallback, "raise")
        with self.assertRaises(ValueError):
            Options(fallback="benchmark")

    def test_baddbmm_is_scored_by_packages_that_know_the_op(self):
        # baddbmm (bmm plus an addend (B, 1, N), as ALiBi attention) is an op of feature schema 3:
        # packages of schema 1 and 2 keep plain's kernel for it, counted as
        # unscorable_op_baddbmm; a schema-3 package not trained on it says so (unseen); one trained
        # on it scores it; an addend that varies along M is not the schema's op.
        from types import SimpleNamespace as NS

        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        ingraph = SCHEMA2
        shipped = Model(ingraph)
        decode = ("baddbmm", "bf16", 512, 1, 2048, 128, 0, 1)
        self.assertEqual(decided(shipped, decode)[0], "unscorable_op_baddbmm")
        self.assertEqual(decided(shipped, ("bmm",) + decode[1:])[0], "")
        # The packages shipped now (feature schema 3) were trained on baddbmm.
        for regime in ("warm", "cold"):
            now = Model(os.path.join(ROOT, "trained_models", "h200", f"h200-ingraph-{regime}.diode"))
            self.assertEqual(decided(now, decode)[0], "", regime)

        def inputs(addend_stride):
            mat1 = NS(
                get_size=lambda: [512, 1, 128], get_stride=lambda: [128, 128, 1], get_dtype=lambda: "torch.bfloat16"
            )
            mat2 = NS(get_size=lambda: [512, 128, 2048], get_stride=lambda: [262144, 1, 128])
            addend = NS(get_size=lambda: [512, 1, 2048], get_stride=lambda: addend_stride)
            return NS(mat1mat2=lambda: (mat1, mat2), nodes=lambda: [addend, mat1, mat2])

        def prefill(addend_stride):
            mat1 = NS(
                get_size=lambda: [64, 1024, 64], get_stride=lambda: [65536, 64, 1], get_dtype=lambda: "torch.bfloat16"
            )
            mat2 = NS(get_size=lambda: [64, 64, 1024], get_stride=lambda: [65536, 1, 64])
            addend = NS(get_size=lambda: [64, 1024, 1024], get_stride=lambda: addend_stride)
            return NS(mat1mat2=lambda: (mat1, mat2), nodes=lambda: [addend, mat1, mat2])

        def choices():
            tri = NS(
                template=NS(uid="triton::bmm"),
                params=NS(kwargs=dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=4)),
                extra_kwargs={},
            )
            return {
                "aten::baddbmm": [NS(template=NS(uid="aten::baddbmm"), params=NS(kwargs={}), extra_kwargs={})],
                "triton::bmm": [tri],
            }

        def uids(kept):
            return [k.template.uid for k in kept]

        old = Runtime(shipped, Options(margin=0))
        self.assertEqual(uids(old.lowering(choices(), inputs([2048, 0, 1]), "baddbmm")), ["aten::baddbmm"])
        self.assertEqual(old.snapshot()["not_selected"], {"unscorable_op_baddbmm": 1})
        self.assertEqual(old.snapshot()["model_selections"], 0)

        with tempfile.TemporaryDirectory() as d:
            unseen = Model(schema3_copy(ingraph, os.path.join(d, "unseen.diode"), baddbmm_seen=False))
            seen = Model(schema3_copy(ingraph, os.path.join(d, "seen.diode"), baddbmm_seen=True))
        # The widened package with a zero-weight op_baddbmm predicts what the schema-2 one did.
        bmm = ("bmm", "bf16", 512, 1, 2048, 128, 0, 1)
        for a, b in zip(decided(shipped, bmm)[1], decided(unseen, bmm)[1]):
            self.assertAlmostEqual(a, b, delta=1e-5 * a)

        rt = Runtime(unseen, Options(margin=0))
        self.assertEqual(uids(rt.lowering(choices(), inputs([2048, 0, 1]), "baddbmm")), ["aten::baddbmm"])
        self.assertEqual(rt.snapshot()["not_selected"], {"unscorable_unseen_op_baddbmm": 1})

        rt = Runtime(seen, Options(margin=0))
        kept = rt.lowering(choices(), inputs([2048, 0, 1]), "baddbmm")
        self.assertEqual(len(kept), 1)
        self.assertEqual(len(rt.lowering(choices(), prefill([1024, 0, 1]), "baddbmm")), 1)  # broadcast over M
        st = rt.snapshot()
        self.assertEqual((st["model_selections"], st["not_selected"]), (2, {}))
        full = rt.lowering(choices(), prefill([1048576, 1024, 1]), "baddbmm")  # a (B, M, N) addend
        self.assertEqual(uids(full), ["aten::baddbmm"])
        self.assertEqual(rt.snapshot()["not_selected"], {"unscorable_baddbmm_full_addend": 1})
        self.assertTrue(all(ms > 0 for ms in decided(seen, decode)[1]))
        # Asked not to: the op stays Inductor's.
        no = Runtime(seen, Options(ops=("mm", "addmm", "bmm")))
        no.lowering(choices(), inputs([2048, 0, 1]), "baddbmm")
        self.assertEqual(no.snapshot()["not_selected"], {"unscorable_op_baddbmm": 1})

    def test_a_layout_the_package_never_saw_keeps_plain(self):
        # The packages shipped before the training layouts were trained on no GEMM with a
        # column-major A (a training step's dW = dY^T X): such a package says so (its normalisation:
        # the flag never varied), and the
        # selector keeps plain's kernel for it instead of scoring by extrapolation.
        from types import SimpleNamespace as NS

        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        model = Model(SCHEMA2)
        mm = [("aten", "extern_kernels.mm", 0, 0, 0, 0, 0, 0, -1, -1), ("triton", "mm", 64, 64, 32, 8, 3, 4, -1, -1)]
        dW = ("mm", "bf16", 1, 1024, 4096, 8192, 1, 0)
        self.assertEqual(decided(model, dW, mm)[0], "unscorable_unseen_a_transposed")
        # The packages shipped now were trained on the backward's layouts too.
        shipped = Model(os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode"))
        self.assertEqual(decided(shipped, dW, mm)[0], "")
        self.assertEqual(decided(model, ("mm", "bf16", 1, 1024, 4096, 8192, 0, 1), mm)[0], "")
        self.assertEqual(decided(model, ("bmm", "fp32", 8, 64, 64, 64, 0, 0))[0], "")

        def inputs(a_stride):
            mat1 = NS(get_size=lambda: [1024, 8192], get_stride=lambda: a_stride, get_dtype=lambda: "torch.bfloat16")
            mat2 = NS(get_size=lambda: [8192, 4096], get_stride=lambda: [4096, 1])
            return NS(mat1mat2=lambda: (mat1, mat2))

        def choices():
            ktc = NS(
                template=NS(uid="triton::mm"),
                params=NS(kwargs=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=8)),
                extra_kwargs={},
            )
            return {
                "aten::mm": [NS(template=NS(uid="aten::mm"), params=NS(kwargs={}), extra_kwargs={})],
                "triton::mm": [ktc],
            }

        rt = Runtime(model, Options(margin=0))  # no ATen guard: only the coverage keeps ATen
        kept = rt.lowering(choices(), inputs([1, 1024]), "mm")  # A column-major: dY^T
        self.assertEqual([k.template.uid for k in kept], ["aten::mm"])
        self.assertEqual(len(rt.lowering(choices(), inputs([8192, 1]), "mm")), 1)  # row-major A: selected
        st = rt.snapshot()
        self.assertEqual(st["not_selected"], {"unscorable_unseen_a_transposed": 1})
        self.assertEqual((st["lowerings"], st["model_selections"], st["autotuned"]), (2, 1, 0))

    def test_a_candidate_found_wrong_or_too_big_is_never_kept(self):
        # Correctness before speed: a candidate whose output failed the worker's check on a
        # problem of this op, dtype and layout (the package's unsafe_candidates, written by the
        # trainer from the data's wrong results) is never kept, however fast it is predicted; nor
        # is a Triton config whose pipelined loads need more shared memory than the device has.
        from types import SimpleNamespace as NS

        from torch_diode import _inductor_compat as compat
        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime, candidate_dict, candidate_key

        ingraph = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")

        def inputs(dtype="torch.bfloat16", device=None):
            mat1 = NS(get_size=lambda: [64, 4096], get_stride=lambda: [4096, 1], get_dtype=lambda: dtype)
            mat2 = NS(get_size=lambda: [4096, 1024], get_stride=lambda: [1, 4096])
            return NS(mat1mat2=lambda: (mat1, mat2), **({"device": lambda: device} if device else {}))

        tiles = [(16, 64, 64, 3), (64, 64, 32, 4), (64, 128, 64, 3), (128, 128, 64, 3), (128, 128, 128, 4)]

        def choices(aten=True):
            by = {"aten::mm": [NS(template=NS(uid="aten::mm"), params=NS(kwargs={}), extra_kwargs={})]} if aten else {}
            by["triton::mm"] = [
                NS(
                    template=NS(uid="triton::mm"),
                    params=NS(
                        kwargs=dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, GROUP_M=8, num_stages=s, num_warps=4, EVEN_K=True)
                    ),
                    extra_kwargs={"ALLOW_TF32": False},
                )
                for m, n, k, s in tiles
            ]
            return by

        def kept(rt, aten=True, **kw):
            return [
                (
                    k.template.uid,
                    k.params.kwargs.get("BLOCK_M"),
                    k.params.kwargs.get("BLOCK_N"),
                    k.params.kwargs.get("BLOCK_K"),
                    k.params.kwargs.get("num_stages"),
                )
                for k in rt.lowering(choices(aten), inputs(**kw), "mm")
            ]

        options = dict(top_k=1, margin=0)  # Triton configs only: the best predicted is kept
        best = kept(Runtime(Model(ingraph), Options(**options)), aten=False)
        self.assertEqual(best[0][0], "triton::mm", best)
        _uid, bm, bn, bk, stages = best[0]
        wrong = {
            "kind": "triton",
            "template": "mm",
            "BLOCK_M": bm,
            "BLOCK_N": bn,
            "BLOCK_K": bk,
            "GROUP_M": 8,
            "num_stages": stages,
            "num_warps": 4,
            "EVEN_K": False,
            "ACC_TYPE": "tl.float32",
        }
        self.assertEqual(candidate_dict(candidate_key(wrong))["BLOCK_K"], bk)

        unsafe = [
            {
                "op": "mm",
                "dtype": "bf16",
                "a_transposed": False,
                "b_transposed": True,
                "candidate": wrong,
                "error": "wrong result: max error 1.08 of the largest ATen value (tolerance 0.03)",
                "problems": 1,
            },
            {"op": "mm"},  # malformed: skipped, not fatal
        ]
        with tempfile.TemporaryDirectory() as d:  # the package as the trainer writes it, with them
            model = Model(with_manifest(ingraph, os.path.join(d, "unsafe.diode"), unsafe_candidates=unsafe))
        rt = Runtime(model, Options(**options))
        with rt_recording(rt) as decisions:
            again = kept(rt, aten=False)
        self.assertEqual(len(again), 1)
        self.assertNotEqual(again, best)
        self.assertEqual(rt.snapshot()["candidates_excluded"], {"wrong_result": 1})
        self.assertEqual([(e["BLOCK_M"], e["reason"]) for e in decisions[0]["excluded"]], [(bm, "wrong_result")])
        kept(rt, aten=False, dtype="torch.float16")  # another dtype: nothing excluded
        self.assertEqual(rt.snapshot()["candidates_excluded"], {"wrong_result": 1})

        # 128x128x128 with 4 stages, bf16: 262,144 bytes of loads against the H200's 232,448.
        compat._smem_limits[0] = 232448  # what the GPU reports (test_gpu_selector reads a real one)
        self.addCleanup(compat._smem_limits.pop, 0, None)
        rt = Runtime(Model(ingraph), Options(top_k=10, margin=0, performance_threshold=1e9))
        self.assertEqual(len(kept(rt)), 6)  # no device said: nothing excluded
        on_gpu = kept(rt, device=NS(type="cuda", index=0))
        self.assertEqual(len(on_gpu), 5)
        self.assertNotIn(("triton::mm", 128, 128, 128, 4), on_gpu)
        self.assertEqual(rt.snapshot()["candidates_excluded"], {"shared_memory": 1})

    def test_record_decisions_keeps_the_kernel_config_decisions_too(self):
        # The runtime's recorders reach the hooks beside the GEMM one: a kernel's shape and the
        # library's answer are recorded (record_decisions' list), whatever Inductor then does with it.
        from torch_diode import _kernels
        from torch_diode._native import Model
        from torch_diode._selector import Options, Runtime

        h100 = os.path.join(ROOT, "trained_models", "h100")
        with open(os.path.join(h100, "h100-kernels.jsonl")) as f:
            shape = json.loads(next(t for t in f if '"shape"' in t))["shape"]
        rt = Runtime(Model(os.path.join(h100, "h100-ingraph-warm.diode")), Options())
        real = _kernels.kernel_shape
        _kernels.kernel_shape = lambda *a: shape
        try:
            with rt_recording(rt) as decisions:
                self.assertEqual(rt.decisions.kernel_kwargs(object, None, (), {}), {})
        finally:
            _kernels.kernel_shape = real
        self.assertEqual(len(decisions), 1, decisions)
        self.assertEqual(decisions[0]["kind"], "kernel_config")
        self.assertEqual(decisions[0]["shape"], shape)
        self.assertEqual(decisions[0]["decision"], rt.selector.decide_json("kernel_config", {"shape": shape}))
        # What a decisions file gets (record_decisions' path, diode demo --decisions-out): the GEMM ones,
        # problem lines that import reads; this one is not.
        from torch_diode._decisions import gemm_decisions

        self.assertEqual(gemm_decisions(decisions + [{"op": "mm"}]), [{"op": "mm"}])

    def test_measured_elsewhere_names_the_steps_another_mode_ran_faster_beyond_both_spreads(self):
        # get_integration_status()["measured_elsewhere"] reads the model steps shipped beside the package.
        import tempfile

        import torch_diode

        for gpu in ("h100", "h200"):
            folder = os.path.join(ROOT, "trained_models", gpu)
            with open(os.path.join(folder, f"{gpu}-model-steps.json")) as f:
                steps = {c["name"]: c["results"] for c in json.load(f)["cases"]}
            said = torch_diode._measured_elsewhere(os.path.join(folder, f"{gpu}-ingraph-warm.diode"))
            for name, results in steps.items():
                plugin = results["plugin"]
                for mode, r in results.items():
                    beyond = (
                        max(r["kernel_ms_spread"]) < min(plugin["kernel_ms_spread"])
                        and min(r["processes"], plugin["processes"]) >= 2
                    )
                    entry = [e for e in said if e["scenario"] == name and e["mode"] == mode]
                    self.assertEqual(len(entry), int(mode != "plugin" and beyond), (gpu, name, mode, said))
                    if entry:
                        self.assertEqual(entry[0]["speedup"], round(plugin["kernel_ms"] / r["kernel_ms"], 3))
            # The decode steps of both GPUs' packages: no other mode beyond both spreads.
            self.assertEqual(sorted((e["scenario"], e["mode"]) for e in said), [], gpu)
        with tempfile.TemporaryDirectory() as d:  # a mode beyond both spreads is named, one inside them is not

            def step(ms, spread, processes=3):
                return {"kernel_ms": ms, "kernel_ms_spread": spread, "processes": processes}

            with open(os.path.join(d, "g-model-steps.json"), "w") as f:
                json.dump(
                    {
                        "cases": [
                            {
                                "name": "beyond",
                                "results": {
                                    "plugin": step(0.30, [0.29, 0.31]),
                                    "max-autotune": step(0.25, [0.24, 0.26]),
                                    "default": step(0.295, [0.28, 0.31]),  # faster, inside both spreads
                                },
                            },
                            {
                                "name": "one process",  # no spread: a difference is not a finding
                                "results": {
                                    "plugin": step(0.30, [0.30, 0.30], 1),
                                    "max-autotune": step(0.20, [0.20, 0.20], 1),
                                },
                            },
                        ]
                    },
                    f,
                )
            said = torch_diode._measured_elsewhere(os.path.join(d, "g.diode"))
            self.assertEqual(
                [(e["scenario"], e["mode"], e["speedup"]) for e in said], [("beyond", "max-autotune", 1.2)]
            )
        with tempfile.TemporaryDirectory() as d:  # a result that cannot be read gives no advice, no error
            with open(os.path.join(d, "x-model-steps.json"), "w") as f:
                f.write(
                    '{"cases": [{"name": "s", "results": {"plugin": {"kernel_ms": "fast"}, '
                    '"default": {"kernel_ms": 0.1}}}]}'
                )
            with open(os.path.join(d, "y-model-steps.json"), "w") as f:
                f.write("not JSON")
            self.assertEqual(torch_diode._measured_elsewhere(os.path.join(d, "x.diode")), [])

    def test_the_kernel_sweep_gathers_its_workers_lines_once(self):
        # What a stopped run's workers wrote reaches --out (at a cancel, or at the next run for a
        # run killed outright): a case of a GPU once, a line a killed worker left half written
        # dropped. Another GPU's lines count as measured for that GPU only.
        import tempfile

        from torch_diode.tools import kernel_sweep

        def line(name, gpu="GPU A"):
            return json.dumps({"kind": "kernel", "name": name, "gpu": gpu}) + "\n"

        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "lines.jsonl")
            with open(out, "w") as f:
                f.write(line("a") + line("b", "GPU B"))
            with open(out + ".part0", "w") as f:
                f.write(line("a") + line("b"))
            with open(out + ".part1", "w") as f:
                f.write(line("c") + '{"kind": "kernel", "na')
            parts = kernel_sweep._parts(out)
            self.assertEqual(parts, [out + ".part0", out + ".part1"])
            kernel_sweep._gather(out, parts)
            with open(out) as f:
                got = [(e["gpu"], e["name"]) for e in map(json.loads, f)]
            self.assertEqual(got, [("GPU A", "a"), ("GPU B", "b"), ("GPU A", "b"), ("GPU A", "c")])
            self.assertEqual(kernel_sweep._parts(out), [])
            with open(out, "a") as f:
                f.write(json.dumps({"kind": "kernel", "name": "d", "family": "x", "skipped": "two kernels"}) + "\n")
                f.write(line("e", "GPU B"))
            self.assertEqual(kernel_sweep._done(out, "GPU A"), {"a", "b", "c", "d"})
            self.assertEqual(kernel_sweep._done(out, "GPU B"), {"b", "d", "e"})
            self.assertEqual(kernel_sweep._done(out), {"a", "b", "c", "d", "e"})

    def test_collected_failures_are_inductors_benchmarks(self):
        # collect()'s lines: a choice Inductor's benchmark could not time is an inductor_autotune
        # failure in the store, not an in-graph one (version 2 files an error without a null time
        # under the in-graph methods).
        from torch_diode.tools.collect_timings import autotune_timed

        aten = {"kind": "aten", "name": "extern_kernels.mm"}
        line = {"op": "mm", "dtype": "bf16", "B": 1, "M": 64, "N": 64, "K": 64, "version": 2}
        line["candidates"] = [autotune_timed(aten, 0.02), autotune_timed(dict(aten, name="x.mm"), float("inf"))]
        with tempfile.TemporaryDirectory() as d:
            path, db = os.path.join(d, "c.jsonl"), os.path.join(d, "c.db")
            with open(path, "w") as f:
                f.write(json.dumps(line) + "\n")
            cli = os.environ["DIODE_CLI"]
            subprocess.run([cli, "import", path, "--db", db], check=True, capture_output=True)
            st = json.loads(subprocess.run([cli, "stats", "--db", db, "--json"], capture_output=True, text=True).stdout)
        self.assertEqual(st["measurements_by_method"], {"inductor_autotune": 2})
        self.assertEqual(st["failed_measurements_by_method"], {"inductor_autotune": 1})

    def test_bad_package_names_the_fault(self):
        from torch_diode._native import Model, NativeError

        with open(PACKAGE, "rb") as f:
            data = f.read()
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "half.diode")
            with open(bad, "wb") as f:
                f.write(data[: len(data) // 2])
            with self.assertRaises(NativeError) as cm:
                Model(bad)
            self.assertIn("truncated", str(cm.exception))
            self.assertIn("half.diode", str(cm.exception))

    def test_a_bad_candidate_key_is_an_error_not_a_crash(self):
        from torch_diode._native import Model, NativeError, Selector

        selector = Selector(Model(PACKAGE))
        p = ("mm", "bf16", 1, 64, 64, 64, 0, 0)
        aten = ("aten", "extern_kernels.mm", 0, 0, 0, 0, 0, 0, -1, -1)
        with self.assertRaises(NativeError) as cm:
            selector.decide_gemm(p, [aten, ("cutlass", "x", 0, 0, 0, 0, 0, 0, -1, -1)])
        self.assertIn("rows[1]", str(cm.exception))
        with self.assertRaises(NativeError) as cm:
            selector.decide_gemm(p, [aten[:5]])
        self.assertIn("fields", str(cm.exception))

    def test_package_choice_is_cores_and_names_bad_input(self):
        from torch_diode._native import NativeError, choose_package

        h200 = {"gpu": "NVIDIA H200", "created_at": "2026-11-26", "timing_method": "graph_warm", "source_rank": 1}
        user = dict(h200, timing_method="graph_cold", source_rank=0)
        self.assertEqual(choose_package([h200, user], {"gpu": "NVIDIA H200"}, "warm"), (1, False))
        self.assertEqual(
            choose_package([h200], {"gpu": "NVIDIA H100 PCIe", "cc": "9.0", "sm_count": 114}, "warm"), (0, True)
        )
        self.assertEqual(choose_package([h200], {"gpu": "NVIDIA A100-SXM4-80GB"}, "warm"), (None, False))
        with self.assertRaises(NativeError) as cm:
            choose_package([dict(h200, timing_method="stopwatch")], {"gpu": "NVIDIA H200"}, "warm")
        self.assertIn("packages[0]", str(cm.exception))
        self.assertIn("stopwatch", str(cm.exception))
        # A field of the wrong type is named, with the package, as a wrong value is.
        for field, value, want in (("source_rank", "first", "an integer"), ("created_at", 20261126, "a string")):
            with self.assertRaises(NativeError) as cm:
                choose_package([h200, dict(h200, **{field: value})], {"gpu": "NVIDIA H200"}, "warm")
            self.assertIn(f"packages[1]: '{field}' is", str(cm.exception))
            self.assertIn(want, str(cm.exception))

    def test_models_are_found_with_their_hardware(self):
        import torch_diode

        with tempfile.TemporaryDirectory() as d:
            os.environ["TORCH_DIODE_MODEL_PATH"] = d
            with open(os.path.join(d, "broken.diode"), "wb") as f:
                f.write(b"DIODEPKG-not-really")
            try:
                models = torch_diode.list_available_models()
            finally:
                del os.environ["TORCH_DIODE_MODEL_PATH"]
        by_name = {os.path.basename(m["path"]): m for m in models}
        shipped = by_name["h200-gemm-mlp-v2.diode"]
        self.assertEqual(shipped["gpu"], "NVIDIA H200")
        self.assertEqual(shipped["source"], "shipped")
        self.assertEqual(sorted(shipped["ops"]), ["addmm", "bmm", "mm"])
        self.assertIn("error", by_name["broken.diode"])
        self.assertEqual(by_name["broken.diode"]["source"], "TORCH_DIODE_MODEL_PATH")

    def test_a_huge_search_location_is_walked_only_so_far(self):
        """TORCH_DIODE_MODEL_PATH=/ walked the whole filesystem at import (34 s on the 2-core VM):
        one location is searched to a bounded depth and number of entries, with a warning."""
        import torch_diode
        from torch_diode import _models

        with tempfile.TemporaryDirectory() as d:
            near = os.path.join(d, "a", "b")
            deep = os.path.join(d, "1", "2", "3", "4", "5")
            os.makedirs(near)
            os.makedirs(deep)
            with open(os.path.join(near, "near.diode"), "wb") as f:
                f.write(b"x")
            with open(os.path.join(deep, "deep.diode"), "wb") as f:
                f.write(b"x")
            found = [os.path.basename(p) for p in _models._package_files(d)]
            self.assertEqual(found, ["near.diode"])  # five folders down is past the bound
            crowd = os.path.join(d, "crowd")
            os.makedirs(crowd)
            for i in range(_models.MAX_SEARCH_ENTRIES + 10):
                open(os.path.join(crowd, f"f{i:05d}"), "wb").close()
            with self.assertLogs("torch_diode", level="WARNING") as logs:
                _models._package_files(d)
            self.assertIn("model search stopped in " + d, "\n".join(logs.output))
        started = __import__("time").monotonic()
        os.environ["TORCH_DIODE_MODEL_PATH"] = "/"
        try:
            with self.assertLogs("torch_diode", level="WARNING"):
                torch_diode.list_available_models()
        finally:
            del os.environ["TORCH_DIODE_MODEL_PATH"]
        print(
            f"list_available_models() with TORCH_DIODE_MODEL_PATH=/: {__import__('time').monotonic() - started:.2f} s"
        )


class NearestPackageTest(unittest.TestCase):
    """Which shipped package a device gets: its own GPU's, else the nearest of the same
    architecture (marked transferred, with the reason), never one of another architecture."""

    def choose(self, device):
        from torch_diode._models import available, best_for

        return best_for(device, available(device), "warm")

    def test_same_gpu_then_similar_then_refused(self):
        choice, why = self.choose({"gpu": "NVIDIA H200", "cc": "9.0", "sm_count": 132})
        self.assertEqual((os.path.basename(choice["path"]), why), ("h200-ingraph-warm.diode", ""))
        self.assertFalse(choice.get("transferred"))

        # The H100 has its own package; an H100 PCIe has none and gets the
        # nearest of the same architecture, the H100 80GB's, marked transferred with the reason.
        choice, why = self.choose({"gpu": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132})
        self.assertEqual((os.path.basename(choice["path"]), why), ("h100-ingraph-warm.diode", ""))
        self.assertFalse(choice.get("transferred"))

        choice, why = self.choose({"gpu": "NVIDIA H100 PCIe", "cc": "9.0", "sm_count": 114})
        self.assertEqual(os.path.basename(choice["path"]), "h100-ingraph-warm.diode")
        self.assertTrue(choice["transferred"])
        self.assertFalse(choice["matches_hardware"])
        self.assertEqual(choice["transfer"]["kind"], "similar")
        self.assertIn("same architecture (9.0)", choice["transfer"]["why"])

        choice, why = self.choose({"gpu": "NVIDIA A100-SXM4-80GB", "cc": "8.0", "sm_count": 108})
        self.assertIsNone(choice)
        self.assertIn("no model package for NVIDIA A100-SXM4-80GB", why)
        self.assertIn("architecture 8.0", why)


class StatusWithoutTorchTest(unittest.TestCase):
    def run_python(self, code, **env):
        return subprocess.run([NO_TORCH, "-c", code], capture_output=True, text=True, env=python_env(**env), timeout=60)

    def test_status_says_torch_is_missing(self):
        r = self.run_python("import torch_diode, json; print(json.dumps(torch_diode.get_integration_status()))")
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertFalse(st["installed"])
        self.assertFalse(st["torch"]["ok"])
        self.assertIn("torch is missing", st["reason"])
        self.assertEqual(r.stderr, "")  # a Python without torch is not worth a warning

    def test_without_torch_or_library_says_torch_quietly(self):
        # A Python with neither torch nor the native library: torch is what it lacks first, and
        # that is not worth a warning either.
        r = self.run_python(
            "import torch_diode, json; print(json.dumps(torch_diode.get_integration_status()))",
            TORCH_DIODE_LIBRARY="/nonexistent/libdiode_inductor.so",
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertFalse(st["installed"])
        self.assertIn("torch is missing", st["reason"])
        self.assertEqual(r.stderr, "")

    def test_autoregister_off_does_nothing(self):
        r = self.run_python(
            "import torch_diode, json; print(json.dumps(torch_diode.get_integration_status()))",
            TORCH_DIODE_AUTOREGISTER="0",
        )
        st = json.loads(r.stdout)
        self.assertFalse(st["autoregister"])
        self.assertEqual(st["torch"]["reason"], "not checked yet")
        self.assertIn("TORCH_DIODE_AUTOREGISTER=0", st["reason"])

    def test_import_loads_no_measuring_tool(self):
        # The runtime is the hook, model loading, status and stats; the worker, demo, in-graph
        # timing and collector are torch_diode.tools, imported only by those who measure.
        r = self.run_python(
            "import sys, torch_diode; torch_diode.get_integration_status(); torch_diode.list_available_models();"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('torch_diode'))))"
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        loaded = r.stdout.split()
        self.assertIn("torch_diode._native", loaded)
        self.assertEqual([m for m in loaded if m.startswith("torch_diode.tools")], [])

    def test_api_answers_without_torch(self):
        r = self.run_python(
            "import torch_diode as d; print(d.get_stats()['calls'], d.get_detected_hardware()['available']);"
            "print(d.install())"
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["0", "False", "False"])

    def test_model_locations_are_cores(self):
        # The plugin's folders come from core (diode_model_locations): the same rule `diode install`
        # and the workbench's Export page install by (':'-separated, empty entries skipped).
        r = self.run_python(
            "from torch_diode import _models; print(_models.search_locations()[:3])",
            TORCH_DIODE_MODEL_PATH="/a/first::/b/second.diode",
            XDG_DATA_HOME="/x/data",
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            r.stdout.strip(),
            str(
                [
                    ("TORCH_DIODE_MODEL_PATH", "/a/first"),
                    ("TORCH_DIODE_MODEL_PATH", "/b/second.diode"),
                    ("user", "/x/data/torch_diode/models"),
                ]
            ),
        )

    def test_install_options_are_the_selectors_and_checked_first(self):
        # install() takes Options's keywords (one list of defaults); a misspelt one or a bad value
        # is refused by name before anything else, torch or not.
        r = self.run_python(
            "import torch_diode as d\n"
            "for kw in ({'top_kk': 1}, {'top_k': 0}, {'regime': 'tepid'}):\n"
            "    try:\n        d.install(**kw)\n    except (TypeError, ValueError) as e:\n        print(e)\n"
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 3, r.stdout)
        self.assertIn("top_kk", lines[0])
        self.assertIn("top_k must be at least 1", lines[1])
        self.assertIn("regime must be 'warm' or 'cold'", lines[2])


if __name__ == "__main__":
    unittest.main(verbosity=2)
