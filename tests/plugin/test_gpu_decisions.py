"""GPU tests of the decisions beside the GEMM kernel inside Inductor (CTest label gpu): the small-M form
pass and the fixed pointwise/reduction configs, on Inductor's real code generation. They skip, with
the reason, where torch, Triton or a GPU is missing."""

import json
import logging
import os
import re
import struct
import sys
import tempfile
import unittest
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
os.environ["TORCH_DIODE_AUTOREGISTER"] = "0"
os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"

try:
    import torch

    from torch_diode.tools.worker import environment_problem

    WHY = environment_problem()
except Exception as e:  # whatever stops the import skips the suite, with its reason
    WHY = f"torch cannot be imported: {e}"


def without_decisions(src, dst):
    """A copy of a package with its manifest's "decisions" removed (checksum recomputed)."""
    data = open(src, "rb").read()
    (mlen,) = struct.unpack_from("<I", data, 12)
    manifest = json.loads(data[16 : 16 + mlen])
    manifest.pop("decisions", None)
    text = json.dumps(manifest).encode()
    with open(dst, "wb") as f:
        f.write(
            data[:12]
            + struct.pack("<I", len(text))
            + text
            + struct.pack("<I", zlib.crc32(text))
            + data[16 + mlen + 4 :]
        )


def decode_step(batch=8, context=1024, heads=32, kv_heads=8, hd=128):
    """One attention at one query token over a KV cache grown by torch.cat, grouped-query, as a
    decode step runs it; returns (fn, args)."""
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(batch, heads, 1, hd, device=dev, dtype=dt)
    ck = torch.randn(batch, kv_heads, context - 1, hd, device=dev, dtype=dt)
    cv = torch.randn_like(ck)
    nk = torch.randn(batch, kv_heads, 1, hd, device=dev, dtype=dt)
    nv = torch.randn_like(nk)
    n = heads // kv_heads

    def fn(q, ck, cv, nk, nv):
        k, v = torch.cat([ck, nk], 2), torch.cat([cv, nv], 2)
        k = k[:, :, None].expand(batch, kv_heads, n, context, hd).reshape(batch, heads, context, hd)
        v = v[:, :, None].expand(batch, kv_heads, n, context, hd).reshape(batch, heads, context, hd)
        s = torch.matmul(q, k.transpose(-1, -2)) / hd**0.5
        return torch.matmul(torch.softmax(s.float(), -1).to(dt), v)

    return fn, (q, ck, cv, nk, nv)


def residual_rms_norm(tokens=1, d=4096):
    """A decoder layer's residual sum and RMSNorm over `tokens` rows of `d`; returns (fn, args)."""
    dev, dt = "cuda", torch.bfloat16
    x, r = torch.randn(tokens, d, device=dev, dtype=dt), torch.randn(tokens, d, device=dev, dtype=dt)
    w = torch.randn(d, device=dev, dtype=dt)

    def fn(x, r, w):
        h = (x + r).float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(dt) * w

    return fn, (x, r, w)


class forms_turned:
    """The installed package's small-M answers with their form turned to `decompose`, each answer as
    the package gave it kept in `answers`: a test of how a form is written, whichever form the
    shipped data pick for its site."""

    def __init__(self, decompose: bool):
        self.decompose, self.answers = decompose, []

    def __enter__(self):
        from torch_diode import _native

        self.real = real = _native.Selector.decide_json

        def turned(selector, kind, request):
            answer = real(selector, kind, request)
            if kind != "small_m_form":
                return answer
            self.answers.append(answer)
            return dict(answer, decompose=self.decompose)

        _native.Selector.decide_json = turned
        return self

    def __exit__(self, *exc):
        from torch_diode import _native

        _native.Selector.decide_json = self.real
        return False


@unittest.skipIf(WHY, WHY or "")
class DecisionsTest(unittest.TestCase):
    def setUp(self):
        import torch_diode

        torch_diode.uninstall()
        torch._dynamo.reset()

    def tearDown(self):
        import torch_diode

        torch_diode.uninstall()
        torch._dynamo.reset()

    def compile_code(self, fn, args):
        from torch._inductor.utils import run_and_get_code

        compiled = torch.compile(fn, fullgraph=True, dynamic=False)
        out, code = run_and_get_code(compiled, *args)
        return out, "\n".join(code)

    def test_decode_attention_is_decomposed_and_its_kernels_get_fixed_configs(self):
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE), torch_diode.get_integration_status()["reason"])
        fn, args = decode_step()
        ref = fn(*args).float()
        with forms_turned(decompose=True):
            out, code = self.compile_code(fn, args)
        st = torch_diode.get_stats()["decisions"]
        self.assertEqual(st["small_m_form"]["seen"], 1, st)
        self.assertEqual(st["small_m_form"]["decided"], 1, st)
        self.assertNotIn("torch.ops.aten._scaled_dot_product", code)  # no attention library call left
        self.assertGreater(st["kernel_config"]["decided"], 0, st)
        self.assertIn("@triton_heuristics.fixed_config(", code)
        self.assertEqual(st["kernel_config"]["errors"], 0, st)
        err = float((out.float() - ref).abs().max() / ref.abs().max())
        self.assertLess(err, 2e-2)

    def test_attention_in_its_library_form_reads_the_kv_cache_as_stored(self):
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE))
        fn, args = decode_step(batch=2, context=512)
        ref = fn(*args).float()
        with forms_turned(decompose=False) as turned:
            out, code = self.compile_code(fn, args)
        answers = turned.answers
        # The shipped package's library times are of this form, and it says so.
        self.assertEqual([a.get("library_over_cache") for a in answers], [True], answers)
        st = torch_diode.get_stats()["decisions"]["small_m_form"]
        self.assertEqual((st["decided"], st["library_over_cache"], st["errors"]), (0, 1, 0), st)
        # FlashAttention over the cache as stored: neither the concatenation nor the grouped heads'
        # copy (2 x 32 heads x 512 tokens x 128) is made.
        self.assertIn("aten._scaled_dot_product_flash_attention", code)
        self.assertNotIn("(2, 32, 512, 128)", code)
        self.assertNotIn("(2, 8, 512, 128)", code)
        err = float((out.float() - ref).abs().max() / ref.abs().max())
        self.assertLess(err, 2e-2)

    def test_grouped_attention_masked_stays_as_written_and_over_an_empty_cache_is_eagers(self):
        """Where the key is not exactly repeat_kv of a cache (a mask), the library form is the attention
        as written, the library is told so, and the result is eager's. Over an empty cache the
        concatenation is the new token alone (the graph drops the empty piece), which the form may
        read as stored: eager's result either way, no infinite log-sum-exp."""
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE))
        for context, masked in ((1, False), (512, True)):
            fn, args = decode_step(batch=2, context=context)
            if masked:
                mask = torch.zeros(1, 1, 1, context, device="cuda", dtype=torch.bool)
                mask[..., : context // 2] = True

                def fn(q, ck, cv, nk, nv):  # the keys before the mask's half attend nowhere: masked out
                    k = torch.cat([ck, nk], 2)[:, :, None].expand(2, 8, 4, context, 128).reshape(2, 32, context, 128)
                    v = torch.cat([cv, nv], 2)[:, :, None].expand(2, 8, 4, context, 128).reshape(2, 32, context, 128)
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~mask)

            torch._dynamo.reset()
            torch_diode.reset_stats()
            ref = fn(*args).float()
            with forms_turned(decompose=False) as turned:
                out, code = self.compile_code(fn, args)
            st = torch_diode.get_stats()["decisions"]["small_m_form"]
            self.assertEqual(st["errors"], 0, (context, st))
            self.assertTrue(bool(torch.isfinite(out).all()), context)
            if masked:
                self.assertEqual(st["library_over_cache"], 0, st)
                self.assertTrue(all(not a.get("library_over_cache") for a in turned.answers), turned.answers)
                self.assertNotIn("aten._scaled_dot_product_flash_attention", code)
            err = float((out.float() - ref).abs().max() / ref.abs().max())
            self.assertLess(err, 2e-2, context)

    def test_a_package_without_decisions_generates_what_plain_inductor_does(self):
        import torch_diode

        with tempfile.TemporaryDirectory() as d:
            bare = os.path.join(d, "bare.diode")
            without_decisions(PACKAGE, bare)
            self.assertTrue(torch_diode.install(bare))
            fn, args = decode_step(batch=2, context=512)
            _, code = self.compile_code(fn, args)
            st = torch_diode.get_stats()["decisions"]
        self.assertEqual(st["small_m_form"]["kept_default"], {"no_model": 1}, st)
        self.assertEqual(st["kernel_config"]["decided"], 0, st)
        self.assertIn("no_model", st["kernel_config"]["kept_default"], st)
        self.assertNotIn("fixed_config(", code)

    def test_an_error_inside_either_hook_keeps_inductor_and_is_logged_once(self):
        import torch_diode
        from torch_diode import _forms, _kernels

        def broken(*a, **k):
            raise RuntimeError("planted")

        self.assertTrue(torch_diode.install(PACKAGE))
        saved = (_kernels.kernel_shape, _forms.find_sites)
        _kernels.kernel_shape, _forms.find_sites = broken, broken
        try:
            fn, args = decode_step(batch=2, context=512)
            ref = fn(*args).float()
            with self.assertLogs("torch_diode", level=logging.WARNING) as logs:
                out, code = self.compile_code(fn, args)
        finally:
            _kernels.kernel_shape, _forms.find_sites = saved
        st = torch_diode.get_stats()["decisions"]
        self.assertGreater(st["kernel_config"]["errors"], 1, st)
        self.assertEqual(st["small_m_form"]["errors"], 1, st)
        self.assertEqual(len([m for m in logs.output if "planted" in m]), 2, logs.output)  # once per kind
        self.assertNotIn("fixed_config(", code)
        self.assertLess(float((out.float() - ref).abs().max() / ref.abs().max()), 2e-2)

    def test_a_config_inductor_refuses_keeps_its_default(self):
        import torch_diode
        from torch_diode import _native

        real = _native.Selector.decide_json

        def bogus(selector, kind, request):
            answer = real(selector, kind, request)
            if kind == "kernel_config":
                return {"fixed": True, "reason": "predicted_faster", "config": {"XBLOCK": 3, "num_warps": 4}}
            return answer

        self.assertTrue(torch_diode.install(PACKAGE))
        _native.Selector.decide_json = bogus
        try:
            fn, args = decode_step(batch=2, context=512)
            out, code = self.compile_code(fn, args)
        finally:
            _native.Selector.decide_json = real
        st = torch_diode.get_stats()["decisions"]["kernel_config"]
        self.assertEqual(st["decided"], 0, st)
        self.assertTrue(any(k.startswith("refused_") for k in st["kept_default"]), st)
        self.assertNotIn("fixed_config(", code)

    def test_the_users_own_pre_pass_still_runs_and_comes_back_on_uninstall(self):
        import torch._inductor.config as cfg
        import torch_diode
        from torch._inductor.custom_graph_pass import CustomGraphPass

        calls = []

        class Mine(CustomGraphPass):
            def __call__(self, graph):
                calls.append(len(graph.nodes))

            def uuid(self):
                return "mine"

        mine = Mine()
        cfg.post_grad_custom_pre_pass = mine
        try:
            self.assertTrue(torch_diode.install(PACKAGE))
            self.assertIsNot(cfg.post_grad_custom_pre_pass, mine)
            fn, args = decode_step(batch=2, context=512)
            self.compile_code(fn, args)
            self.assertEqual(len(calls), 1)
            torch_diode.uninstall()
            self.assertIs(cfg.post_grad_custom_pre_pass, mine)
        finally:
            cfg.post_grad_custom_pre_pass = None

    def test_dynamic_sizes_compile_and_give_eagers_result(self):
        """A reduction whose size is not static may not be made persistent: the grid offers it none, and
        the compile succeeds at every size."""
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE))

        def fn(x):
            return torch.softmax(x.float(), -1).to(x.dtype) * 2

        compiled = torch.compile(fn, dynamic=True)
        for cols in (512, 777, 2048):
            x = torch.randn(64, cols, device="cuda", dtype=torch.bfloat16)
            torch.testing.assert_close(compiled(x).float(), fn(x).float(), atol=2e-2, rtol=2e-2)
        st = torch_diode.get_stats()["decisions"]["kernel_config"]
        self.assertEqual(st["errors"], 0, st)

    def test_values_summed_over_a_split_cache_are_a_reduction_tiled_in_y_given_a_config(self):
        """At batch 1 the decomposed attention's sum of probabilities times values is split over the cache
        and tiled in y along the head dimension, where the values lie contiguous: it is described, the
        shipped package (which measured such a reduction inside a decode step) fixes a configuration
        with a YBLOCK, and the compiled step gives eager's result."""
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE), torch_diode.get_integration_status()["reason"])
        fn, args = decode_step(batch=1, context=512, heads=32, kv_heads=32)
        ref = fn(*args).float()
        with forms_turned(decompose=True), torch_diode.record_decisions() as made:
            out, code = self.compile_code(fn, args)
        tiled = [
            r for r in made if r.get("kind") == "kernel_config" and r["shape"]["reduction"] and r["shape"]["y"] > 1
        ]
        self.assertTrue(tiled, [r.get("shape") for r in made if r.get("kind") == "kernel_config"])
        st = torch_diode.get_stats()["decisions"]["kernel_config"]
        self.assertEqual(st["errors"], 0, st)
        self.assertNotIn("tiling", st.get("not_described", {}), st)
        fixed = [r["decision"]["config"] for r in tiled if r["decision"].get("fixed")]
        self.assertTrue(fixed, [r["decision"] for r in tiled])
        self.assertTrue(all("YBLOCK" in c for c in fixed), fixed)
        # Inductor gives such a kernel several configurations at its default (asked with its tiling
        # scores, without which torch 2.11's heuristics assert).
        self.assertTrue(all(r["shape"]["default_tuned"] for r in tiled), [r["shape"] for r in tiled])
        self.assertIn("YBLOCK : tl.constexpr", code)
        err = float((out.float() - ref).abs().max() / ref.abs().max())
        self.assertLess(err, 2e-2)

    def test_a_kernel_writing_a_cache_in_place_is_described(self):
        """A static KV cache written in place makes Inductor record the mutated buffer as a dependency
        without an index (a StarDep): its kernels are read like any other, without an error, and the
        step gives eager's result."""
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE))
        dev, dt = "cuda", torch.bfloat16
        cache = torch.zeros(4, 8, 1024, 128, device=dev, dtype=dt)
        new = torch.randn(4, 8, 1, 128, device=dev, dtype=dt)
        q = torch.randn(4, 8, 1, 128, device=dev, dtype=dt)

        def fn(cache, new, q):
            cache[:, :, 1023:1024] = new * 2
            return torch.softmax((q @ cache.transpose(-1, -2)).float(), -1).sum(-1)

        expected_cache = cache.clone()
        ref = fn(expected_cache, new, q)
        with torch_diode.record_decisions() as made:
            out, _ = self.compile_code(fn, (cache, new, q))
        st = torch_diode.get_stats()["decisions"]["kernel_config"]
        self.assertEqual(st["errors"], 0, st)
        self.assertGreater(len([r for r in made if r.get("kind") == "kernel_config"]), 0, st)
        torch.testing.assert_close(cache, expected_cache)
        torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)

    def test_the_kernel_sweep_measures_every_candidate_of_a_kernel_and_both_forms_of_a_site(self):
        from torch_diode import _native
        from torch_diode.tools import kernel_sweep

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "lines.jsonl")
            case = r"qwen2-0.5b/(gemv-n896-k896|mm-m1-n896-k896)$"
            self.assertEqual(kernel_sweep.main(["--out", out, "--match", case, "--workers", "1"]), 0)
            lines = {json.loads(t)["kind"]: json.loads(t) for t in open(out)}
        kernel, site = lines["kernel"], lines["site"]
        self.assertNotIn("skipped", kernel)
        self.assertNotIn("skipped", site)
        # Every configuration the decision may give this kernel was measured, or failed and says so;
        # then the descent: each configuration after the portfolio one step from one measured before it.
        candidates = _native.kernel_candidates(kernel["shape"])
        configs = [c["config"] for c in kernel["configs"]]
        self.assertEqual(configs[: len(candidates)], candidates)
        for i, c in enumerate(kernel["configs"][len(candidates) :], len(candidates)):
            near = [n for before in configs[:i] for n in _native.kernel_candidates(kernel["shape"], near=before)]
            self.assertIn(c["config"], near)
        self.assertGreaterEqual(kernel["grid"], len(configs))  # what the GPU's memory stopped is left out
        self.assertTrue(all(("time_ms" in c) != ("error" in c) for c in kernel["configs"]), kernel["configs"])
        self.assertEqual(site["site"]["op"], "mm")
        for key in ("library_ms", "decomposed_default_ms", "decomposed_tuned_ms", "decomposed_ms"):
            self.assertGreater(site[key], 0, key)

    def test_the_step_sweep_times_a_steps_own_kernels_under_each_configuration(self):
        from torch_diode import _native
        from torch_diode.tools import step_kernels

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "steps.jsonl")
            argv = ["--steps", "vit-b1", "--package", PACKAGE, "--out", out, "--workers", "2", "--limit", "4"]
            argv += ["--kinds", "kernel"]
            self.assertEqual(step_kernels.main(argv), 0)
            with open(out) as f:
                lines = [json.loads(t) for t in f]
            # Run again: the step is in --out already, nothing is added.
            self.assertEqual(step_kernels.main(argv), 0)
            with open(out) as f:
                self.assertEqual(len(f.readlines()), len(lines))
            # --match: the kernels whose name it finds, alone, under their own candidates.
            one = lines[0]["name"].split("/", 1)[1]
            out2 = os.path.join(tmp, "matched.jsonl")
            argv = ["--steps", "vit-b1", "--package", PACKAGE, "--out", out2, "--workers", "2", "--limit", "4"]
            argv += ["--kinds", "kernel", "--match", "^" + re.escape(one) + "$"]
            self.assertEqual(step_kernels.main(argv), 0)
            with open(out2) as f:
                matched = [json.loads(t) for t in f]
            self.assertEqual([m["name"] for m in matched], [lines[0]["name"]])
            mine = _native.kernel_candidates(matched[0]["shape"])
            given = sorted(json.dumps(c["config"], sort_keys=True) for c in matched[0]["configs"])
            self.assertEqual(given, sorted(json.dumps(c, sort_keys=True) for c in mine[:4]))
        # A ViT block's kernels beside its GEMMs: norms, softmax statistics, GELU, residual adds (four at
        # batch 1 on an H200, where the first four configurations fit them).
        self.assertGreaterEqual(len(lines), 3)
        for line in lines:
            self.assertRegex(line["name"], r"^step:vit-b1/fused_\w+$")
            self.assertEqual(line["family"], "vit-l16")
            self.assertGreater(line["default_ms"], 0)
            self.assertEqual(line["grid"], len(_native.kernel_candidates(line["shape"])))
            self.assertLessEqual(len(line["configs"]), 4)  # --limit: four configurations of the step at most
            for c in line["configs"]:
                self.assertIn(c["config"], _native.kernel_candidates(line["shape"]))
                self.assertTrue(("time_ms" in c) != ("error" in c), c)
        # The step's first four configurations are all of its first kernel's candidates: each was given to
        # it (and any other kernel holding it) and timed there, or failed and says so.
        given = {json.dumps(c["config"], sort_keys=True) for line in lines for c in line["configs"]}
        self.assertEqual(len(given), 4)
        self.assertTrue(any("time_ms" in c for line in lines for c in line["configs"]))

    def test_the_step_sweep_times_each_group_of_a_steps_sites_in_both_forms_inside_the_step(self):
        from torch_diode.tools import step_kernels

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sites.jsonl")
            argv = ["--steps", "gqa-decode-cat-b1-s512,vit-b1", "--package", PACKAGE, "--out", out, "--kinds", "site"]
            self.assertEqual(step_kernels.main(argv), 0)
            with open(out) as f:
                lines = [json.loads(t) for t in f]
            self.assertEqual(step_kernels.main(argv), 0)  # both steps are in --out: nothing is added
            with open(out) as f:
                self.assertEqual(len(f.readlines()), len(lines))
        # A ViT block has no small-M site: one line says so, and the step is not measured again.
        vit = [line for line in lines if line["name"].startswith("step:vit-b1/")]
        self.assertEqual(len(vit), 1)
        self.assertIn("no small-M site", vit[0]["skipped"])
        # The GQA layer at batch 1: its attention and its projections, alike ones in one group (k and v;
        # q and o), each group turned to its other form and the step timed whole against the package's.
        gqa = [line for line in lines if line["name"].startswith("step:gqa-decode-cat-b1-s512/")]
        self.assertEqual([line for line in gqa if "skipped" in line], [])
        self.assertEqual({line["site"]["op"] for line in gqa}, {"attention", "mm"})
        self.assertEqual(sorted(line["sites"] for line in gqa), [1, 1, 2, 2, 2])
        for line in gqa:
            self.assertEqual(line["family"], "llama3-8b")
            self.assertEqual(line["name"], "step:gqa-decode-cat-b1-s512/" + step_kernels.site_name(line["site"]))
            self.assertEqual(line["site"]["M"], 1)
            # library_ms: the kernels the decomposed form removes, which the flip must have changed.
            for key in ("library_ms", "decomposed_ms", "step_library_ms", "step_decomposed_ms"):
                self.assertGreater(line[key], 0, key)
            self.assertLess(line["library_ms"], line["step_library_ms"])

    def test_layers_of_one_shape_trace_their_form_once_and_keep_their_own_values(self):
        """Two attention layers of one shape: the decomposed form is traced once, each layer's copy of it
        gets fake values of its own operands (no value shared between nodes), and the result is eager's."""
        import torch._inductor.pattern_matcher as pm
        import torch_diode
        from torch._inductor import config
        from torch_diode import _forms

        self.assertTrue(torch_diode.install(PACKAGE))
        first, args1 = decode_step()
        _, args2 = decode_step()

        def two_layers(*args):
            return first(*args[:5]) + first(*args[5:])

        traced, shared = [], []
        real = pm.fwd_only

        def counting(fn, *a, **kw):  # the small-M forms' traces, not a pattern Inductor replaces
            if getattr(fn, "func", fn) in (_forms._attention, _forms._bmm, _forms._mm, _forms._addmm):
                traced.append(1)
            return real(fn, *a, **kw)

        def after(graph):  # Inductor's post-grad post-pass runs after the small-M pass
            vals = [n.meta["val"] for n in graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)]
            shared.append(len(vals) - len({id(v) for v in vals}))

        args = args1 + args2
        pm.fwd_only = counting
        try:
            with config.patch(post_grad_custom_post_pass=after), forms_turned(decompose=True):
                out, _ = self.compile_code(two_layers, args)
        finally:
            pm.fwd_only = real
        st = torch_diode.get_stats()["decisions"]["small_m_form"]
        self.assertEqual(st["decided"], 2, st)
        self.assertEqual(len(traced), 1)
        self.assertEqual(shared, [0])
        ref = two_layers(*args).float()
        self.assertLess(float((out.float() - ref).abs().max() / ref.abs().max()), 2e-2)

    def test_a_decomposed_projection_reads_its_computed_input_written_once(self):
        """A batch-1 SwiGLU MLP at Llama-7B's sizes: the package decomposes its three GEMVs, and the down
        projection's input silu(gate) * up is written out by one kernel instead of being recomputed in
        every program of the down projection's sum (the library's materialise_operand)."""
        import re

        import torch.nn.functional as F
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE), torch_diode.get_integration_status()["reason"])
        dev, dt, d, ff = "cuda", torch.bfloat16, 4096, 11008
        x = torch.randn(1, d, device=dev, dtype=dt)
        wg, wu = (torch.randn(ff, d, device=dev, dtype=dt) * d**-0.5 for _ in range(2))
        wd = torch.randn(d, ff, device=dev, dtype=dt) * ff**-0.5

        def mlp(x, wg, wu, wd):
            return F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)

        # A token as a (1, d) matrix, and as a model's (batch, tokens, d) activations, whose projections
        # Inductor sees through views.
        for x in (x, x.view(1, 1, d)):
            torch._dynamo.reset()
            args = (x, wg, wu, wd)
            with torch_diode.record_decisions() as made:
                out, code = self.compile_code(mlp, args)
            down = [r for r in made if r["kind"] == "small_m_form" and r["site"]["K"] == ff]
            self.assertEqual(len(down), 1, made)
            self.assertTrue(down[0]["decision"]["decompose"], down)
            self.assertTrue(down[0]["decision"]["materialise_operand"], down)
            kernels = code.split("async_compile.triton(")[1:]
            sums_over_ff = [k for k in kernels if re.search(rf"\br0_numel = {ff}\b", k)]
            self.assertEqual(len(sums_over_ff), 1, "the down projection is one multiply-and-sum over ff")
            silu = re.compile(r"\b(exp|sigmoid)\(")  # Inductor's silu: x * sigmoid(x), as exp in Triton
            self.assertTrue(any(silu.search(k) for k in kernels), "silu is computed in some kernel")
            self.assertIsNone(silu.search(sums_over_ff[0]), "the down projection reads silu(gate) * up")
            ref = mlp(*args).float()
            self.assertLess(float((out.float() - ref).abs().max() / ref.abs().max()), 2e-2)

    def test_two_decomposed_gemms_in_a_row_compile_and_give_eagers_result(self):
        """A low-rank adapter at batch 1: x @ A then @ B, both M = 1 sites the package decomposes; the
        second's operand is the first's result, which the first rewrite replaced."""
        import torch.nn.functional as F
        import torch_diode

        self.assertTrue(torch_diode.install(PACKAGE), torch_diode.get_integration_status()["reason"])
        dev, dt, d, rank = "cuda", torch.bfloat16, 4096, 16
        x = torch.randn(1, d, device=dev, dtype=dt)
        a = torch.randn(rank, d, device=dev, dtype=dt) * d**-0.5
        b = torch.randn(d, rank, device=dev, dtype=dt) * rank**-0.5

        def lora(x, a, b):
            return F.linear(F.linear(x, a), b)

        with torch_diode.record_decisions() as made:
            out, _ = self.compile_code(lora, (x, a, b))
        st = torch_diode.get_stats()["decisions"]["small_m_form"]
        forms = [r for r in made if r["kind"] == "small_m_form"]
        self.assertEqual(len(forms), 2, made)
        self.assertEqual(st["errors"], 0, st)
        self.assertEqual(st["decided"], sum(bool(r["decision"]["decompose"]) for r in forms), st)
        ref = lora(x, a, b).float()
        self.assertLess(float((out.float() - ref).abs().max() / ref.abs().max()), 2e-2)

    def test_a_kernel_is_benchmarked_at_its_first_run_only_where_its_shape_says_its_default_is_tuned(self):
        """Plain torch.compile benchmarks several configurations of a pointwise kernel at its first
        run. Installed with a package that decides kernel configurations, a pointwise kernel kept at
        Inductor's default runs Inductor's heuristic configuration; a reduction whose default is
        several configurations (its heuristics' or the block its code generation adds) is
        benchmarked, and its shape says so ("default_tuned"), as get_stats() does of those the
        package keeps. uninstall() gives Inductor's option back."""
        import torch_diode
        from torch._inductor.runtime import triton_heuristics
        from torch_diode import _inductor_compat as compat
        from torch_diode._selector import active

        benchmarked = []
        original = triton_heuristics.CachingAutotuner.benchmark_all_configs

        def counting(autotuner, *args, **kwargs):
            benchmarked.append(autotuner.inductor_meta.get("kernel_name"))
            return original(autotuner, *args, **kwargs)

        def compiled(fn, args, keep_every_default=False, **install):
            torch._dynamo.reset()
            benchmarked.clear()
            self.assertTrue(torch_diode.install(PACKAGE, **install))
            if keep_every_default:
                active().decisions.fixed_by = lambda shape, features: None
            with torch_diode.record_decisions() as made:
                out, _ = self.compile_code(fn, args)
            self.assertTrue(bool(torch.isfinite(out).all()))
            return [r["shape"] for r in made if r["kind"] == "kernel_config"]

        option = compat.get_config(compat.FIRST_RUN_AUTOTUNE)
        triton_heuristics.CachingAutotuner.benchmark_all_configs = counting
        try:
            # The attention as written (its concatenations are pointwise kernels), as plain compiles it.
            fn, args = decode_step(batch=2, context=512)
            self.compile_code(fn, args)
            self.assertTrue(any("_poi_" in k for k in benchmarked), benchmarked)
            shapes = compiled(fn, args, small_m_forms=False)
            self.assertIs(compat.get_config(compat.FIRST_RUN_AUTOTUNE), False)
            self.assertTrue(any(not s["reduction"] for s in shapes), shapes)
            self.assertEqual([k for k in benchmarked if "_poi_" in k], [], benchmarked)
            # Every kernel kept at Inductor's default (as the package keeps some), the library form of
            # grouped-query attention: its merge's scores are a persistent reduction Inductor gives
            # several configurations. Benchmarked are the kernels whose shape says so, no other.
            fn, args = decode_step(batch=4, context=2048)
            shapes = compiled(fn, args, keep_every_default=True)
            st = torch_diode.get_stats()["decisions"]["kernel_config"]
            self.assertEqual(st["not_described"], {}, st)
            self.assertTrue(any(s["default_tuned"] for s in shapes), shapes)
            self.assertEqual(len(benchmarked), sum(s["default_tuned"] for s in shapes), (benchmarked, shapes))
            self.assertEqual(st["tuned_at_first_run"], len(benchmarked), st)
            # With the package's decisions: what get_stats() counts is what Inductor benchmarks.
            compiled(fn, args)
            st = torch_diode.get_stats()["decisions"]["kernel_config"]
            self.assertEqual(st["tuned_at_first_run"], len(benchmarked), (st, benchmarked))
            print(f"\n  package's decisions: {len(benchmarked)} kernel(s) benchmarked, {st}", file=sys.stderr)
            # A residual RMSNorm over one token: a looped reduction whose one default configuration
            # Inductor's code generation joins with one covering the row, and benchmarks the two. Its
            # shape says so, and the package, predicting a configuration near that default, replaces it.
            fn, args = residual_rms_norm()
            shapes = compiled(fn, args, keep_every_default=True)
            looped = [s for s in shapes if s["reduction"] and not s["persistent_default"]]
            self.assertTrue(looped and all(s["default_tuned"] for s in looped), shapes)
            self.assertEqual(len(benchmarked), sum(s["default_tuned"] for s in shapes), (benchmarked, shapes))
            compiled(fn, args)
            self.assertEqual(benchmarked, [], torch_diode.get_stats()["decisions"]["kernel_config"])
            torch_diode.uninstall()
            self.assertEqual(compat.get_config(compat.FIRST_RUN_AUTOTUNE), option)
        finally:
            triton_heuristics.CachingAutotuner.benchmark_all_configs = original

    def test_install_options_turn_each_kind_off(self):
        import torch_diode
        from torch_diode import _inductor_compat as compat

        option = compat.get_config(compat.FIRST_RUN_AUTOTUNE)
        self.assertTrue(torch_diode.install(PACKAGE, small_m_forms=False, kernel_configs=False))
        fn, args = decode_step(batch=2, context=512)
        _, code = self.compile_code(fn, args)
        st = torch_diode.get_stats()["decisions"]
        self.assertEqual(st["small_m_form"]["seen"] + st["kernel_config"]["seen"], 0, st)
        self.assertNotIn("fixed_config(", code)
        # Without kernel configurations decided, Inductor's first-run benchmark stays as it was.
        self.assertEqual(compat.get_config(compat.FIRST_RUN_AUTOTUNE), option)


if __name__ == "__main__":
    if WHY:
        print(f"skipped: {WHY}")
        sys.exit(77)  # CTest's SKIP_RETURN_CODE: a skip is shown as skipped, not passed
    unittest.main(verbosity=2)
