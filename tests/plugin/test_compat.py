"""CPU tests of torch_diode's Inductor compatibility module against fakes shaped like torch
2.11's private objects (CTest label unit). A real torch is never imported: fake `torch._inductor`
modules are installed in sys.modules for each test, so these run on any Python. The GPU tests
(test_gpu_timing.py, test_gpu_selector.py) run the same functions against the real Inductor."""

import contextlib
import os
import sys
import tempfile
import threading
import time
import types
import unittest
import unittest.mock

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
sys.path.insert(0, os.path.join(ROOT, "plugin", "python"))

# E402: imported after sys.path names the checkout's package above, not an installed one.
from torch_diode import _inductor_compat as compat  # noqa: E402
from torch_diode import _native, _selector  # noqa: E402
from torch_diode.tools import _timings, worker  # noqa: E402


class Obj(types.SimpleNamespace):
    pass


class FakeInductor:
    """Installs fake torch, torch._inductor.{choices, virtualized, select_algorithm, config, utils}."""

    def __init__(self, with_hook=True):
        self.handler_log = []
        torch = types.ModuleType("torch")
        inductor = types.ModuleType("torch._inductor")
        choices = types.ModuleType("torch._inductor.choices")
        virtualized = types.ModuleType("torch._inductor.virtualized")
        sa = types.ModuleType("torch._inductor.select_algorithm")
        cfg = types.ModuleType("torch._inductor.config")
        utils = types.ModuleType("torch._inductor.utils")

        class InductorChoices:
            pass

        if with_hook:
            InductorChoices._finalize_template_configs = lambda self, *a, **k: []
        choices.InductorChoices = InductorChoices

        fake = self

        class V:
            choices = None

            @staticmethod
            def set_choices_handler(h):
                fake.handler_log.append(h)
                V.choices = h
                setattr(virtualized.threadlocal, virtualized._choices._key, h)  # as Inductor keeps it

        V.graph = Obj(sizevars=Obj(size_hints=lambda xs: [int(x) for x in xs]))
        virtualized.V = V
        virtualized._choices = Obj(_key="__torchinductor_choices")
        virtualized.threadlocal = threading.local()

        class ExternKernelCaller:
            pass

        class AlgorithmSelectorCache:
            calls = []

            @classmethod
            def benchmark_in_current_process(cls, *args):
                cls.calls.append(args)
                return {"timed": True}

            @classmethod
            def get_inputs(cls, choices, input_nodes, layout, input_gen_fns):
                extern = Obj(unpack=lambda: (["a_view", "b_view"], "out_extern"))
                triton = Obj(unpack=lambda: (["a", "b"], "out"))
                return Obj(get_benchmark_tensors=lambda is_extern: extern if is_extern else triton)

        sa.ExternKernelCaller = ExternKernelCaller
        sa.AlgorithmSelectorCache = AlgorithmSelectorCache
        sa._ALGORITHM_SELECTOR_CACHE = Obj(feedback_saver_fns=[])
        sa.add_feedback_saver = lambda fn: sa._ALGORITHM_SELECTOR_CACHE.feedback_saver_fns.append(fn)
        cfg.max_autotune_gemm_search_space = "DEFAULT"
        cfg.inductor_choices_class = None
        cfg.max_autotune_gemm_backends = "ATEN"
        cfg.max_autotune = False
        cfg.max_autotune_gemm = False
        cfg.coordinate_descent_tuning = False
        cfg.max_autotune_pointwise = False
        cfg.triton = Obj(autotune_pointwise=True)
        utils.fresh_inductor_cache = contextlib.nullcontext
        torch._inductor = inductor
        for name, mod in (
            ("torch", torch),
            ("torch._inductor", inductor),
            ("torch._inductor.choices", choices),
            ("torch._inductor.virtualized", virtualized),
            ("torch._inductor.select_algorithm", sa),
            ("torch._inductor.config", cfg),
            ("torch._inductor.utils", utils),
        ):
            setattr(self, name.rsplit(".", 1)[-1], mod)
        self.modules = {
            "torch": torch,
            "torch._inductor": inductor,
            "torch._inductor.choices": choices,
            "torch._inductor.virtualized": virtualized,
            "torch._inductor.select_algorithm": sa,
            "torch._inductor.config": cfg,
            "torch._inductor.utils": utils,
        }
        self.V, self.sa_cls, self.extern_cls = V, AlgorithmSelectorCache, ExternKernelCaller

    def __enter__(self):
        self.saved = {k: sys.modules.get(k) for k in self.modules}
        sys.modules.update(self.modules)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def ktc(uid, params=None, extra=None):
    return Obj(template=Obj(uid=uid), params=Obj(to_kwargs=lambda: dict(params or {})), extra_kwargs=extra or {})


TRITON = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_stages": 4, "num_warps": 8, "EVEN_K": True}


class KernelTemplateChoiceTest(unittest.TestCase):
    def test_aten_and_triton_keys(self):
        self.assertEqual(
            compat.ktc_key(ktc("aten::bias_addmm")), ("aten", "extern_kernels.bias_addmm", 0, 0, 0, 0, 0, 0, -1, -1)
        )
        self.assertEqual(
            compat.ktc_key(ktc("triton::mm", TRITON, {"ALLOW_TF32": False})),
            ("triton", "mm", 64, 128, 32, 8, 4, 8, 1, 0),
        )

    def test_validate_timing_matches_a_measured_candidate_to_its_choice(self):
        # validate_timing finds the measured candidate among Inductor's choices by the selector's
        # key (it had its own, with GROUP_M -1 where a line leaves it out, and missed those).
        from torch_diode.tools import validate_timing

        measured = {"kind": "triton", "template": "mm", **{k: v for k, v in TRITON.items() if k != "GROUP_M"}}
        self.assertEqual(
            validate_timing.candidate_key(measured), validate_timing.ktc_candidate_key(ktc("triton::mm", TRITON))
        )
        aten = {"kind": "aten", "name": "extern_kernels.bias_addmm"}
        self.assertEqual(
            validate_timing.candidate_key(aten), validate_timing.ktc_candidate_key(ktc("aten::bias_addmm"))
        )
        other = dict(measured, num_warps=4)
        self.assertNotEqual(
            validate_timing.candidate_key(other), validate_timing.ktc_candidate_key(ktc("triton::mm", TRITON))
        )

    def test_other_templates_and_missing_parameters_are_named_for_the_library(self):
        # Which templates a model describes is the library's to say (FeatureSchema::describes): the
        # translator passes every Triton template on, and what it cannot read as "other".
        self.assertEqual(
            compat.ktc_key(ktc("triton::mm_persistent_tma", TRITON)),
            ("triton", "mm_persistent_tma", 64, 128, 32, 8, 4, 8, 1, -1),
        )
        partial = {k: v for k, v in TRITON.items() if k != "num_warps"}
        self.assertEqual(compat.ktc_key(ktc("triton::mm", partial)), ("other", "triton::mm", 0, 0, 0, 0, 0, 0, -1, -1))
        self.assertEqual(compat.ktc_key(ktc("decompose_k")), ("other", "decompose_k", 0, 0, 0, 0, 0, 0, -1, -1))
        self.assertEqual(compat.ktc_key(Obj())[0], "other")  # no template at all

    def test_keys_of_a_list_match_one_at_a_time(self):
        # 2.11's DictKernelTemplateParams keeps its dict in .kwargs: read in place, not copied;
        # a parameter given only in extra kwargs is found there; params win over extra kwargs.
        in_place = Obj(
            template=Obj(uid="triton::mm"),
            params=Obj(kwargs=dict(TRITON, num_warps=4)),
            extra_kwargs={"ALLOW_TF32": True, "num_warps": 2},
        )
        from_extra = ktc("triton::bmm", {k: v for k, v in TRITON.items() if k != "BLOCK_K"}, {"BLOCK_K": 64})
        choices = [
            ktc("aten::mm"),
            ktc("triton::mm", TRITON),
            in_place,
            from_extra,
            ktc("triton::mm_persistent_tma", TRITON),
            ktc("triton::mm", {"BLOCK_M": 64}),
        ]
        keys = compat.ktc_keys(choices)
        self.assertEqual(keys, [compat.ktc_key(c) for c in choices])
        self.assertEqual(keys[2], ("triton", "mm", 64, 128, 32, 8, 4, 4, 1, 1))
        self.assertEqual(keys[3], ("triton", "bmm", 64, 128, 64, 8, 4, 8, 1, -1))
        self.assertEqual([k[0] for k in keys], ["aten", "triton", "triton", "triton", "triton", "other"])


class ChoiceCallerTest(unittest.TestCase):
    def triton_choice(self):
        return Obj(
            name="triton_mm_17",
            description="ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32, "
            "BLOCK_M=64, BLOCK_N=128, EVEN_K=True, GROUP_M=8, USE_FAST_ACCUM=False, num_stages=4, num_warps=8",
            info_dict=lambda: {
                "tile_shape": "(64, 32, 128)",
                "num_stages": 4,
                "num_warps": 8,
                "backend": "Triton",
                "not_primitive": [1, 2],
            },
            annotations={"ktc": "the-ktc"},
        )

    def test_candidate_from_triton_choice(self):
        cand = _timings.candidate_from_choice(self.triton_choice(), _native.vocabulary())
        self.assertEqual(cand["kind"], "triton")
        self.assertEqual(cand["template"], "mm")
        self.assertEqual((cand["BLOCK_M"], cand["BLOCK_N"], cand["BLOCK_K"]), (64, 128, 32))
        self.assertEqual((cand["num_stages"], cand["num_warps"], cand["GROUP_M"]), (4, 8, 8))
        self.assertIs(cand["EVEN_K"], True)
        self.assertIs(cand["ALLOW_TF32"], False)

    def test_candidate_from_aten_choice(self):
        choice = Obj(info_dict=lambda: {"kernel_call_name": "extern_kernels.bias_addmm"})
        self.assertEqual(
            _timings.candidate_from_choice(choice, _native.vocabulary()),
            {"kind": "aten", "name": "extern_kernels.bias_addmm"},
        )

    def test_info_is_plain_values_and_survives_a_raising_info_dict(self):
        self.assertNotIn("not_primitive", compat.choice_info(self.triton_choice()))

        def boom():
            raise RuntimeError("no info")

        self.assertEqual(compat.choice_info(Obj(info_dict=boom)), {})

    def test_run_fn_goes_through_the_benchmark_request(self):
        seen = []
        choice = Obj(bmreq=Obj(make_run_fn=lambda *inputs, out: seen.append((inputs, out)) or "launch"))
        self.assertEqual(compat.choice_run_fn(choice, ["a", "b"], "out"), "launch")
        self.assertEqual(seen, [(("a", "b"), "out")])

    def test_precompile_goes_through_the_benchmark_request(self):
        built = []
        compat.precompile_choice(Obj(bmreq=Obj(precompile=lambda: built.append("triton"))))
        self.assertEqual(built, ["triton"])
        compat.precompile_choice(Obj(bmreq=None))  # ATen: nothing to build, no error
        compat.precompile_choice(Obj(bmreq=Obj()))

        def fail():
            raise RuntimeError("No valid triton configs. OutOfMemoryError: out of resource")

        with self.assertRaisesRegex(RuntimeError, "out of resource"):
            compat.precompile_choice(Obj(bmreq=Obj(precompile=fail)))
        # The worker builds every candidate before taking the GPU lock; failures become reasons.
        entries = [
            (Obj(bmreq=Obj(precompile=fail)), None, [], None),
            (Obj(bmreq=None), 0.1, [], None),
            (Obj(bmreq=Obj(precompile=lambda: built.append("second"))), None, [], None),
        ]
        errors = worker.precompile_all(entries)
        self.assertEqual(list(errors), [0])
        self.assertTrue(errors[0].startswith("failed to compile: RuntimeError: No valid triton configs"), errors[0])
        self.assertEqual(built, ["triton", "second"])

    def test_missing_benchmark_request_is_named(self):
        class TritonTemplateCaller:
            pass

        with self.assertRaisesRegex(compat.InductorIncompatible, "TritonTemplateCaller has no 'bmreq'"):
            compat.choice_run_fn(TritonTemplateCaller(), [], None)

    def test_benchmark_tensors_as_inductor_makes_them(self):
        with FakeInductor() as fake:
            extern = fake.extern_cls()
            triton = Obj(layout="layout")
            for_choice = compat.benchmark_tensors([triton, extern], ["n1", "n2"])
            self.assertEqual(for_choice(triton), (["a", "b"], "out"))
            self.assertEqual(for_choice(extern), (["a_view", "b_view"], "out_extern"))


class HookTest(unittest.TestCase):
    def test_hook_problem_names_the_missing_hook(self):
        with FakeInductor(with_hook=False):
            self.assertIn("_finalize_template_configs", compat.hook_problem())
            with self.assertRaisesRegex(compat.InductorIncompatible, "_finalize_template_configs"):
                compat.choices_base_class()
        with FakeInductor():
            self.assertIsNone(compat.hook_problem())

    def test_choices_handler_restores_the_previous_one(self):
        with FakeInductor():
            compat.set_choices_handler("previous")
            with compat.choices_handler("mine"):
                self.assertEqual(compat.current_choices_handler(), "mine")
            self.assertEqual(compat.current_choices_handler(), "previous")

    def test_uninstall_leaves_no_handler_pinned_where_none_was_set(self):
        # After uninstall() the installing thread makes its next handler from
        # config.inductor_choices_class like every other thread (a lookup-table deployment sets
        # it); a handler the user had set in it comes back.
        import torch_diode

        for previous in (None, "users-own"):
            with FakeInductor():
                if previous:
                    compat.set_choices_handler(previous)
                _selector._choices_class = None
                runtime = _selector.Runtime(model=_native.Model(PACKAGE), options=_selector.Options())
                with unittest.mock.patch.object(torch_diode, "_runtime", None):
                    torch_diode._runtime = runtime
                    torch_diode._previous_handler = compat.current_choices_handler()
                    torch_diode._previous_factory = None
                    torch_diode.uninstall()
                self.assertEqual(compat.current_choices_handler(), previous)
                _selector._choices_class = None

    def test_a_handler_made_in_any_thread_is_the_selector_while_one_is_active(self):
        # Inductor makes a thread's first handler from config.inductor_choices_class; the handler
        # consults the active runtime at each call, so one made before uninstall() turns inert.
        with FakeInductor() as fake:
            _selector._choices_class = None  # defined against this fake's InductorChoices
            compat.set_process_choices_factory(_selector.choices_factory)
            self.assertIs(fake.config.inductor_choices_class, _selector.choices_factory)
            made = []
            import threading

            t = threading.Thread(target=lambda: made.append(fake.config.inductor_choices_class()))
            t.start()
            t.join()
            handler = made[0]
            self.assertIsInstance(handler, fake.choices.InductorChoices)

            class FakeRuntime:
                calls = []

                def lowering(self, by_template, kernel_inputs, op_name):
                    self.calls.append(op_name)
                    return ["kept"]

                stats = Obj(add=lambda **kw: None)

            rt = FakeRuntime()
            try:
                _selector.activate(rt)
                self.assertEqual(handler._finalize_template_configs({"aten::mm": iter([1])}, None, [], "mm"), ["kept"])
                # AutoHeuristic's extra call within the same lowering is not a lowering
                self.assertEqual(handler._finalize_template_configs({}, None, [], "mm-ah"), [])
                _selector.activate(None)
                self.assertEqual(handler._finalize_template_configs({"aten::mm": iter([1])}, None, [], "mm"), [])
            finally:
                _selector.activate(None)
                _selector._choices_class = None
            self.assertEqual(rt.calls, ["mm"])
            # Threads that made a handler before install make a new one: the key they are found under changes.
            before = fake.virtualized._choices._key
            compat.forget_thread_choices_handlers()
            after = fake.virtualized._choices._key
            self.assertNotEqual(before, after)
            compat.forget_thread_choices_handlers()
            self.assertNotEqual(after, fake.virtualized._choices._key)
            self.assertTrue(fake.virtualized._choices._key.startswith("__torchinductor_choices#diode"))

    def test_problem_of_reads_sizes_and_layouts(self):
        mat1 = Obj(get_size=lambda: [16, 4096], get_stride=lambda: [4096, 1], get_dtype=lambda: "torch.bfloat16")
        mat2 = Obj(get_size=lambda: [4096, 1024], get_stride=lambda: [1, 4096])  # column-major weight
        inputs = Obj(mat1mat2=lambda: (mat1, mat2))
        with FakeInductor():
            self.assertEqual(_selector.problem_of(inputs, "mm"), ("mm", "bf16", 1, 16, 1024, 4096, 0, 1))

    def test_symbolic_sizes_are_read_through_their_hints(self):
        class Sym:
            def __int__(self):
                raise TypeError("cannot convert symbols to int")

        mat1 = Obj(get_size=lambda: [Sym(), 4096], get_stride=lambda: [4096, 1], get_dtype=lambda: "torch.float16")
        mat2 = Obj(get_size=lambda: [4096, 1024], get_stride=lambda: [1024, 1])
        with FakeInductor():
            sys.modules["torch._inductor.virtualized"].V.graph = Obj(
                sizevars=Obj(size_hints=lambda xs: [32 if isinstance(x, Sym) else x for x in xs])
            )
            self.assertEqual(
                _selector.problem_of(Obj(mat1mat2=lambda: (mat1, mat2)), "mm"), ("mm", "fp16", 1, 32, 1024, 4096, 0, 0)
            )

    def test_kernel_inputs_without_mat1mat2_is_named(self):
        with FakeInductor():
            with self.assertRaisesRegex(compat.InductorIncompatible, "MMKernelInputs has no 'mat1mat2'"):
                compat.kernel_inputs_problem(Obj())


class SaverAndConfigTest(unittest.TestCase):
    def test_remove_feedback_saver_removes_only_ours(self):
        with FakeInductor() as fake:
            theirs, ours = (lambda *a: None), (lambda *a: None)
            compat.add_feedback_saver(theirs)
            compat.add_feedback_saver(ours)
            self.assertTrue(compat.remove_feedback_saver(ours))
            self.assertEqual(fake.select_algorithm._ALGORITHM_SELECTOR_CACHE.feedback_saver_fns, [theirs])
            self.assertFalse(compat.remove_feedback_saver(ours))

    def test_saver_problem(self):
        with FakeInductor() as fake:
            self.assertIsNone(compat.saver_problem())
            del fake.select_algorithm.add_feedback_saver
            self.assertIn("add_feedback_saver", compat.saver_problem())

    def test_options_of_a_sub_config_are_read_and_set_by_their_dotted_name(self):
        with FakeInductor() as fake:
            self.assertIs(compat.get_config(compat.FIRST_RUN_AUTOTUNE), True)
            compat.set_config(compat.FIRST_RUN_AUTOTUNE, False)
            self.assertIs(fake.config.triton.autotune_pointwise, False)
            with self.assertRaisesRegex(compat.InductorIncompatible, r"torch._inductor.config.triton has no 'gone'"):
                compat.get_config("triton.gone")
            with self.assertRaisesRegex(compat.InductorIncompatible, r"torch._inductor.config has no 'cuda'"):
                compat.set_config("cuda.arch", "90")
            self.assertTrue(compat.has_config(compat.FIRST_RUN_AUTOTUNE))
            del fake.config.triton  # a torch without it: the plugin leaves the option alone
            self.assertFalse(compat.has_config(compat.FIRST_RUN_AUTOTUNE))

    def test_fresh_cache_uses_whichever_name_exists(self):
        with FakeInductor() as fake:
            with compat.fresh_cache():
                pass
            del fake.utils.fresh_inductor_cache
            with self.assertRaisesRegex(compat.InductorIncompatible, "fresh_cache"):
                compat.fresh_cache()

    def test_worker_cache_mode_keeps_one_directory_and_turns_graph_caches_off(self):
        patched = []
        with FakeInductor() as fake:
            fake.config.patch = lambda **kw: patched.append(kw) or contextlib.nullcontext()
            del fake.utils.fresh_inductor_cache  # must not be asked for in this mode
            os.environ["TORCH_DIODE_WORKER_CACHE"] = "1"
            try:
                with compat.fresh_cache():
                    pass
            finally:
                del os.environ["TORCH_DIODE_WORKER_CACHE"]
            self.assertEqual(
                patched,
                [
                    {
                        "fx_graph_cache": False,
                        "autotune_local_cache": False,
                        "autotune_remote_cache": False,
                        "fx_graph_remote_cache": False,
                    }
                ],
            )

    def test_gpu_lock_counts_wait_and_hold(self):
        from torch_diode.tools import ingraph

        with tempfile.NamedTemporaryFile(suffix=".lock") as f:
            before = dict(ingraph.LOCK_SECONDS)
            with ingraph.gpu_lock(f.name):
                time.sleep(0.05)
            self.assertGreaterEqual(ingraph.LOCK_SECONDS["hold"] - before["hold"], 0.05)
            self.assertGreaterEqual(ingraph.LOCK_SECONDS["wait"], before["wait"])
            held = ingraph.LOCK_SECONDS["hold"]
            with ingraph.gpu_lock(None if "TORCH_DIODE_GPU_LOCK" not in os.environ else f.name):
                pass  # no lock file: nothing held, nothing counted
            if "TORCH_DIODE_GPU_LOCK" not in os.environ:
                self.assertEqual(ingraph.LOCK_SECONDS["hold"], held)

    def test_cold_graph_size_aims_at_target_of_flush_and_launch(self):
        from torch_diode.tools import ingraph

        timer = ingraph.GraphTimer.__new__(ingraph.GraphTimer)  # no GPU: only the arithmetic
        timer._flush_ms = 0.025
        saved = ingraph.COLD_TARGET_MS
        try:
            ingraph.COLD_TARGET_MS = 0.5
            # A 5 us launch: 64 launches warm, but 0.5 ms / (25 + 5) us = 16 in each cold graph.
            self.assertEqual(timer.cold_calls(64, 0.005), 16)
            # Never more than the warm graph, never fewer than MIN_CALLS.
            self.assertEqual(timer.cold_calls(3, 0.005), 3)
            self.assertEqual(timer.cold_calls(3, 2.0), ingraph.MIN_CALLS)
            ingraph.COLD_TARGET_MS = None  # as many launches as the warm graph
            self.assertEqual(timer.cold_calls(64, 0.005), 64)
        finally:
            ingraph.COLD_TARGET_MS = saved

    def test_config_names_are_checked(self):
        with FakeInductor() as fake:
            self.assertEqual(compat.current_search_space(), "DEFAULT")
            compat.set_config("max_autotune_gemm_backends", "ATEN,TRITON")
            self.assertEqual(fake.config.max_autotune_gemm_backends, "ATEN,TRITON")
            with self.assertRaisesRegex(compat.InductorIncompatible, "no 'fast_autotune'"):
                compat.set_config("fast_autotune", True)

    def test_autotune_benchmark_runs_under_the_gpu_lock(self):
        held = []

        @contextlib.contextmanager
        def lock():
            held.append("in")
            yield
            held.append("out")

        with FakeInductor() as fake:
            original = fake.sa_cls.__dict__["benchmark_in_current_process"]
            os.environ["TORCH_DIODE_GPU_LOCK"] = "/tmp/unused.lock"
            try:
                with compat.autotune_benchmark(lock=lock):
                    built = []
                    choice = Obj(bmreq=Obj(precompile=lambda: built.append(list(held))))
                    self.assertEqual(fake.sa_cls.benchmark_in_current_process([choice], 2), {"timed": True})
                    self.assertEqual(held, ["in", "out"])
                    self.assertEqual(built, [[]], "the kernel was not built before the lock was taken")
            finally:
                del os.environ["TORCH_DIODE_GPU_LOCK"]
            self.assertIs(fake.sa_cls.__dict__["benchmark_in_current_process"], original)
            with compat.autotune_benchmark(lock=lock):  # no lock file: nothing patched
                self.assertIs(fake.sa_cls.__dict__["benchmark_in_current_process"], original)

    def test_skipped_benchmark_gives_placeholders_that_keep_aten(self):
        with FakeInductor() as fake:
            original = fake.sa_cls.__dict__["benchmark_in_current_process"]
            aten, triton = fake.extern_cls(), type("TritonTemplateCaller", (), {})()
            with compat.autotune_benchmark(skip=True):
                got = fake.sa_cls.benchmark_in_current_process([triton, aten], ["nodes"], "layout", None)
            self.assertEqual(fake.sa_cls.calls, [], "Inductor's benchmark ran although skipped")
            self.assertEqual(set(got), {aten, triton})
            self.assertLess(got[aten], got[triton], "Inductor would not keep ATen after a skipped benchmark")
            self.assertIs(fake.sa_cls.__dict__["benchmark_in_current_process"], original)
            # A failure inside the block still restores Inductor's benchmark.
            with self.assertRaises(KeyError), compat.autotune_benchmark(skip=True):
                raise KeyError("compile failed")
            self.assertIs(fake.sa_cls.__dict__["benchmark_in_current_process"], original)

    def test_benchmark_that_is_no_classmethod_is_named(self):
        with FakeInductor() as fake:
            fake.sa_cls.benchmark_in_current_process = staticmethod(lambda *a: {})
            with self.assertRaisesRegex(compat.InductorIncompatible, "benchmark_in_current_process"):
                with compat.autotune_benchmark(skip=True):
                    pass

    def test_sampling_handler_keeps_aten_and_draws_triton_configs(self):
        with FakeInductor() as fake:
            seen = []
            fake.choices.InductorChoices._finalize_template_configs = (
                lambda self, tc, ki, templates, op, kw=None: seen.append(op) or [k for g in tc.values() for k in g]
            )
            mm = [ktc("triton::mm", dict(TRITON, BLOCK_M=16 * i)) for i in range(1, 301)]
            aten = [ktc("aten::mm")]
            few = [ktc("triton::bmm", TRITON) for _ in range(3)]

            def finalize(seed):
                handler = compat.sampling_choices_handler(100, seed)
                return handler._finalize_template_configs(
                    {"aten::mm": iter(aten), "triton::mm": iter(mm), "triton::bmm": iter(few)}, "inputs", [], "mm"
                )

            got = finalize(7)
            self.assertEqual(seen, ["mm"], "Inductor's own finalize was not called with the sample")
            self.assertEqual(got.count(aten[0]), 1)
            self.assertEqual(sum(1 for k in got if k in few), 3, "a template under the limit lost configs")
            drawn = [k for k in got if k in mm]
            self.assertEqual(len(drawn), 100)
            self.assertEqual(len({id(k) for k in drawn}), 100)
            self.assertEqual(drawn, [k for k in mm if k in drawn], "the sample is not in Inductor's order")
            self.assertEqual([id(k) for k in finalize(7) if k in mm], [id(k) for k in drawn], "same seed, other sample")
            self.assertNotEqual([id(k) for k in finalize(8) if k in mm], [id(k) for k in drawn])


class ProblemLinesReaderTest(unittest.TestCase):
    """The tools read problem JSON lines with core's reader (validate_timing's and demo's input): an
    error names the file, the line and the field."""

    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_bad_problem_lines_name_line_and_field(self):
        good = (
            '{"op": "mm", "dtype": "bf16", "B": 1, "M": 8, "N": 8, "K": 8, "a_transposed": false, "b_transposed": true}'
        )
        cases = {
            "{not json\n": ": line 1: ",
            good + "\n" + good.replace('"M": 8', '"M": 0') + "\n": ": line 2: field 'M'",
            good.replace(', "K": 8', "") + "\n": ": line 1: field 'K'",
            good.replace('"bf16"', '"int8"') + "\n": ": line 1: field 'dtype'",
            good.replace("}", ', "search_space": "WIDE"}') + "\n": ": line 1: field 'search_space'",
            "[" * 100000 + "\n": ": line 1: ",
        }
        for text, message in cases.items():
            path = self.write(text)
            with self.assertRaises(_native.NativeError) as ctx:
                _native.read_problems(path)
            self.assertIn(path + message, str(ctx.exception))
        problems = _native.read_problems(self.write(good.replace("}", ', "search_space": "EXHAUSTIVE"}') + "\n"))
        self.assertEqual(problems[0]["search_space"], "EXHAUSTIVE")


if __name__ == "__main__":
    unittest.main()
