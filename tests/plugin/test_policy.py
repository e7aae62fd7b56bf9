"""The selector's options and package choice without torch (CTest label unit). The rule itself
(the gates, the exclusions, the ATen guard, top_k, threshold, the fallback ATen beside templates)
is the library's (core/infer/diode/infer/selector.h and selectionpolicy.h, tested in tst_selector and
tst_selectionpolicy): here the Python side's part, that the options reach the library's decision
as given, the margin and regime in use come from the library, and the regime decides which
package is loaded."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plugin", "python"))

# E402: imported after sys.path names the checkout's package above, not an installed one.
from torch_diode import _models, _native  # noqa: E402
from torch_diode._selector import Options, Runtime, candidate_key, plain_index  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
WARM = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
COLD = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-cold.diode")
# The warm package shipped before baddbmm (feature schema 2, no calibrated margin), kept for the
# tests of what such a package does.
UNCALIBRATED = os.path.join(ROOT, "tests", "data", "packages", "h200-ingraph-warm-schema2.diode")
PROBLEM = ("addmm", "bf16", 1, 64, 1024, 1024, 0, 1)
# Two ATen kernels, then three Triton configs (as Inductor offers an addmm's).
KEYS = [
    candidate_key(c)
    for c in (
        {"kind": "aten", "name": "extern_kernels.addmm"},
        {"kind": "aten", "name": "extern_kernels.mm"},
        *(
            {
                "kind": "triton",
                "template": "mm",
                "BLOCK_M": m,
                "BLOCK_N": 64,
                "BLOCK_K": 32,
                "num_stages": 3,
                "num_warps": 4,
            }
            for m in (16, 32, 64)
        ),
    )
]


def decide(**options):
    """The library's decision on PROBLEM with `options` (the selector's call)."""
    selector = _native.Selector(_native.Model(WARM), options)
    decision, kept, predicted, _excluded = selector.decide_gemm(PROBLEM, KEYS)
    return decision, kept, predicted


class OptionsReachTheLibraryTest(unittest.TestCase):
    def test_decision_stats_count_each_kernel_once_and_decided_only_what_inductor_took(self):
        from torch_diode._decisions import DecisionStats

        st = DecisionStats()
        st.add("kernel_config", 0.001, applied=True)  # fixed by the library, taken by Inductor
        st.add("kernel_config", 0.001, error="refused_ValueError")  # fixed by the library, refused after
        st.add("kernel_config", 0.001, tuned=True)  # the library kept a default Inductor tunes
        st.add("kernel_config", 0.001, undescribed="tiling")  # never asked
        st.add("kernel_config", 0.001, error="read_KeyError")  # the translator failed: never asked
        st.add("kernel_config", 0.001, error="ask_NativeError")  # the library refused the request
        library = {"kernel_config": {"decisions": 3, "selected": 2, "not_selected": {"default_predicted_best": 1}}}
        m = st.merged(library)["kernel_config"]
        self.assertEqual(m["seen"], 6)
        self.assertEqual(m["decided"], 1)
        self.assertEqual(
            m["kept_default"],
            {"default_predicted_best": 1, "refused_ValueError": 1, "read_KeyError": 1, "ask_NativeError": 1},
        )
        self.assertEqual(m["not_described"], {"tiling": 1})
        self.assertEqual(m["errors"], 3)
        self.assertEqual(m["tuned_at_first_run"], 1)
        # Every kernel met is decided, kept at the default or not described: once.
        self.assertEqual(m["seen"], m["decided"] + sum(m["kept_default"].values()) + sum(m["not_described"].values()))
        self.assertAlmostEqual(m["time_s"], 0.006)

    def test_an_error_at_any_step_of_a_kernel_config_keeps_inductors_kwargs_and_is_counted_once(self):
        # Without torch: the translator, the library and the last step (which needs Inductor's
        # FixedTritonConfig) each fail in turn; the kwargs come back as given, each error is counted under
        # its step and said once per step and type.
        import json as _json

        from torch_diode import _kernels
        from torch_diode._decisions import Decisions

        h100 = os.path.join(ROOT, "trained_models", "h100")
        with open(os.path.join(h100, "h100-kernels.jsonl")) as f:
            shapes = [_json.loads(t)["shape"] for t in f if '"shape"' in t]
        decisions = Decisions(_native.Selector(_native.Model(os.path.join(h100, "h100-ingraph-warm.diode")), {}))
        fixed_shape = next(
            sh for sh in shapes if decisions.selector.decide_json("kernel_config", {"shape": sh})["fixed"]
        )
        real = _kernels.kernel_shape
        kwargs = {"mutated_args": set()}

        def broken(*a):
            raise RuntimeError("planted")

        try:
            with self.assertLogs("torch_diode", level="WARNING") as logs:
                for answer in (broken, lambda *a: {"reduction": "yes"}, lambda *a: fixed_shape):
                    _kernels.kernel_shape = answer
                    for _ in range(2):
                        self.assertIs(decisions.kernel_kwargs(object, None, (), kwargs), kwargs)
        finally:
            _kernels.kernel_shape = real
        errors = decisions.stats.errors["kernel_config"]
        self.assertEqual(errors["read_RuntimeError"], 2)
        self.assertEqual(sum(n for why, n in errors.items() if why.startswith("ask_")), 2)
        self.assertEqual(sum(n for why, n in errors.items() if why.startswith("refused_")), 2)
        self.assertEqual(decisions.stats.applied["kernel_config"], 0)
        # Once per step; and once per kind of error for what this torch-less test cannot ask about the
        # kernels' defaults: code generation's view (the malformed shape's missing size, the other's
        # missing features), then Inductor's heuristics without it (no torch). The kernels are still
        # decided, as if their default were one config.
        asked = [line for line in logs.output if "cannot ask Inductor's heuristics" in line]
        self.assertEqual(len(logs.output), 3 + len(asked), logs.output)
        for error in ("KeyError", "AttributeError", "ModuleNotFoundError"):
            self.assertEqual(sum(error in line for line in asked), 1, logs.output)
        self.assertEqual(decisions.stats.tuned["kernel_config"], 0)

    def test_a_kept_default_inductor_tunes_is_counted_and_one_predicted_near_it_replaces_it(self):
        # The shipped H100 package over its own kernel lines: a kernel it keeps at the default is fixed
        # once the shape says Inductor would benchmark that default, where a configuration is predicted
        # within the margin; one still kept is counted as tuned at first run.
        import json as _json

        from torch_diode import _kernels
        from torch_diode._decisions import Decisions

        h100 = os.path.join(ROOT, "trained_models", "h100")
        with open(os.path.join(h100, "h100-kernels.jsonl")) as f:
            shapes = [_json.loads(t)["shape"] for t in f if '"shape"' in t]
        model = _native.Model(os.path.join(h100, "h100-ingraph-warm.diode"))
        margin = model.manifest["decisions"]["kernel_config"]["margin"]
        selector = _native.Selector(model, {})
        kept = [sh for sh in shapes if not selector.decide_json("kernel_config", {"shape": sh})["fixed"]]
        answers = [selector.decide_json("kernel_config", {"shape": dict(sh, default_tuned=True)}) for sh in kept]
        replaced = [a for a in answers if a["fixed"]]
        self.assertTrue(replaced and len(replaced) < len(answers), (len(replaced), len(answers)))
        self.assertEqual({a["reason"] for a in replaced}, {"replaces_first_run_tuning"})
        # Each replaced default was kept for a predicted time no better than the margin's: the
        # replacement is predicted near the default's, not faster by the margin.
        self.assertTrue(all(1 / (1 + margin) <= a["predicted_ratio"] < 1 + margin for a in replaced), replaced)
        still = next(sh for sh, a in zip(kept, answers) if not a["fixed"])
        decisions = Decisions(selector)
        real, real_tuned = _kernels.kernel_shape, _kernels.default_tuned_or_one
        try:
            _kernels.kernel_shape = lambda *a: dict(still)
            _kernels.default_tuned_or_one = lambda *a: True  # Inductor's answer, without torch here
            kwargs = {}
            self.assertIs(decisions.kernel_kwargs(object, None, (), kwargs), kwargs)
        finally:
            _kernels.kernel_shape, _kernels.default_tuned_or_one = real, real_tuned
        self.assertEqual(decisions.stats.merged({})["kernel_config"]["tuned_at_first_run"], 1)

    def test_top_k_and_threshold(self):
        _d, kept, predicted = decide(top_k=1, margin=0)
        self.assertEqual(kept, [min(range(len(KEYS)), key=predicted.__getitem__)])  # margin 0: the arg-min
        _d, kept, predicted = decide(top_k=len(KEYS), margin=0, performance_threshold=None)
        self.assertEqual(kept, sorted(range(len(KEYS)), key=predicted.__getitem__))  # every one, best first
        _d, kept, predicted = decide(top_k=len(KEYS), margin=0, performance_threshold=1.0)
        self.assertEqual([predicted[i] for i in kept], [min(predicted)] * len(kept))

    def test_a_large_margin_keeps_plain(self):
        d, kept, predicted = decide(margin=100)
        self.assertTrue(d.selected)
        self.assertEqual(kept, [d.plain])
        self.assertEqual(KEYS[d.plain][0], "aten")
        self.assertEqual(d.margin, 100)

    def test_bad_options_are_refused_by_the_library_by_name(self):
        with self.assertRaisesRegex(_native.NativeError, "top_k"):
            decide(top_k=0)
        with self.assertRaisesRegex(_native.NativeError, "performance_threshold"):
            decide(performance_threshold=0.5)
        with self.assertRaisesRegex(_native.NativeError, "regime 'lukewarm'"):
            decide(regime="lukewarm")


class OptionsTest(unittest.TestCase):
    def test_plain_index_without_a_model(self):
        self.assertEqual(
            plain_index(["aten", "aten", "triton"], ["extern_kernels.addmm", "extern_kernels.bias_addmm", "mm"]), 1
        )
        self.assertEqual(plain_index(["triton", "aten"], ["mm", "extern_kernels.mm"]), 1)
        self.assertIsNone(plain_index(["triton"], ["mm"]))

    def test_options_refuse_bad_values_with_their_name(self):
        with self.assertRaisesRegex(ValueError, "margin"):
            Options(margin=-0.1)
        with self.assertRaisesRegex(ValueError, "regime"):
            Options(regime="lukewarm")
        with self.assertRaisesRegex(ValueError, "search_space must be DEFAULT or EXHAUSTIVE"):
            Options(search_space="wide")
        self.assertEqual(Options(regime="cold", margin=0).margin, 0.0)  # an explicit one wins, 0 included

    def test_the_margin_is_the_packages_for_the_regime(self):
        # A package with no calibrated margin (the schema-2 one kept under tests/data): the
        # library's defaults, 0.10 warm and 0.08 cold (docs/MODELS.md, "Policy"), reach Python only
        # through the library.
        model = _native.Model(UNCALIBRATED)
        self.assertEqual(Runtime(model, Options()).margin, 0.10)
        self.assertEqual(Runtime(model, Options(regime="cold")).margin, 0.08)
        self.assertEqual(Runtime(model, Options(margin=0.3)).margin, 0.3)
        # The shipped warm package carries the margin `diode calibrate` chose for its regime; the
        # other regime keeps the default.
        shipped = _native.Model(WARM)
        calibrated = shipped.manifest["selection_policy"]
        self.assertEqual(calibrated["regime"], "warm")
        self.assertEqual(Runtime(shipped, Options()).margin, calibrated["margin"])
        self.assertEqual(Runtime(shipped, Options(regime="cold")).margin, 0.08)

    def test_a_package_named_alone_decides_in_its_own_regime(self):
        # As `diode eval` scores it: a cold package with no regime asked for is cold, with the margin
        # calibrated into it (the plugin once gave it the warm default, 0.10).
        cold = _native.Model(COLD)
        rt = Runtime(cold, Options())
        self.assertEqual(rt.regime, "cold")
        self.assertEqual(rt.margin, cold.manifest["selection_policy"]["margin"])
        self.assertEqual(Runtime(cold, Options(regime="warm")).margin, 0.10)


class RegimeChoiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # How each kind of truth fits each regime, as core ranks it, read from the shipped packages
        # (one of each: graph_warm, graph_cold and inductor_autotune).
        cls.ranks = {}
        for name in ("h200-ingraph-warm", "h200-ingraph-cold", "h200-gemm-mlp-v2"):
            model = _native.Model(os.path.join(ROOT, "trained_models", "h200", name + ".diode"))
            facts = model.facts()
            model.close()
            cls.ranks[facts["timing_method"]] = facts["regime_rank"]

    def test_core_ranks_each_truth_for_each_regime(self):
        self.assertEqual(
            self.ranks,
            {
                "graph_warm": {"warm": 0, "cold": 1},
                "graph_cold": {"warm": 1, "cold": 0},
                "inductor_autotune": {"warm": 2, "cold": 2},
            },
        )

    def pkg(self, name, method, created, source="shipped"):
        return {
            "path": f"/x/{name}.diode",
            "name": name,
            "source": source,
            "gpu": "NVIDIA H200",
            "timing_method": method,
            "created_at": created,
        }

    def test_the_package_of_the_asked_regime_wins_over_a_newer_one(self):
        models = [
            self.pkg("warm", "graph_warm", "2026-11-22"),
            self.pkg("cold", "graph_cold", "2026-11-21"),
            self.pkg("v2", "inductor_autotune", "2026-11-23"),
        ]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "warm")[0]["name"], "warm")
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "cold")[0]["name"], "cold")

    def test_in_graph_truth_before_inductor_benchmark_then_newest(self):
        models = [self.pkg("v2", "inductor_autotune", "2026-11-23"), self.pkg("warm", "graph_warm", "2026-11-22")]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "cold")[0]["name"], "warm")
        models = [
            self.pkg("old", "inductor_autotune", "2026-01-01"),
            self.pkg("new", "inductor_autotune", "2026-02-01"),
        ]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "warm")[0]["name"], "new")


if __name__ == "__main__":
    unittest.main()
