"""The selector's policy and package choice without torch (CTest label unit). The rule itself
(the ATen guard, top_k, threshold, the fallback ATen beside templates) is the library's
(core/infer/diode/selectionpolicy.h, tested in tst_selectionpolicy): here the Python side's part, that
the selector's call reaches it with the options given, the margin defaults come from the library,
and the regime decides which package is loaded."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plugin", "python"))

# E402: imported after sys.path names the checkout's package above, not an installed one.
from torch_diode import _models, _native  # noqa: E402
from torch_diode._selector import Options, Runtime, candidate_key, plain_index  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
WARM = os.path.join(ROOT, "trained_models", "h200", "h200-ingraph-warm.diode")
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


def kept(predicted, top_k=1, margin=0.0, threshold=float("inf"), keys=KEYS):
    """What the library keeps of `keys` given their predictions (the selector's call, repeat path)."""
    model = _native.Model(WARM)
    return model.select_keys(PROBLEM, keys, _native.Policy(top_k, margin, threshold), predicted)[1]


class PolicyThroughTheLibraryTest(unittest.TestCase):
    def test_aten_kept_alone_when_the_predicted_win_is_within_the_margin(self):
        self.assertEqual(kept([10.0, 11.0, 9.5, 12.0, 13.0], top_k=3, margin=0.08), [0])

    def test_a_win_beyond_the_margin_replaces_aten_and_plain_stays_as_fallback(self):
        self.assertEqual(kept([10.0, 11.0, 8.0, 12.0, 13.0], margin=0.08), [2])
        self.assertEqual(kept([10.0, 11.0, 8.0, 8.5, 13.0], top_k=2, margin=0.08), [2, 3, 0])

    def test_bias_addmm_is_plain_where_offered(self):
        keys = [
            candidate_key({"kind": "aten", "name": n}) for n in ("extern_kernels.addmm", "extern_kernels.bias_addmm")
        ]
        keys.append(KEYS[2])
        self.assertEqual(kept([9.6, 10.0, 11.0], margin=0.08, keys=keys), [1])
        self.assertEqual(kept([8.0, 10.0, 11.0], margin=0.08, keys=keys), [0])

    def test_threshold_and_top_k(self):
        self.assertEqual(kept([20.0, 21.0, 8.0, 8.5, 9.5], top_k=3, margin=0.08, threshold=1.1), [2, 3, 0])
        self.assertEqual(kept([9.0, 11.0, 9.5, 12.0, 13.0], top_k=2), [0, 2])

    def test_scored_and_selected_in_one_call(self):
        model = _native.Model(WARM)
        predicted, picks = model.select_keys(PROBLEM, KEYS, _native.Policy(1, 0.0, float("inf")))
        self.assertEqual(predicted, model.score_keys(PROBLEM, KEYS))
        self.assertEqual(picks, [min(range(len(KEYS)), key=predicted.__getitem__)])  # margin 0: the arg-min

    def test_bad_policies_are_refused_by_the_library_by_name(self):
        with self.assertRaisesRegex(_native.NativeError, "top_k"):
            kept([1.0] * 5, top_k=0)
        with self.assertRaisesRegex(_native.NativeError, "threshold"):
            kept([1.0] * 5, threshold=0.5)
        with self.assertRaisesRegex(_native.NativeError, r"candidates\[1\]"):
            kept([1.0, float("nan"), 1.0, 1.0, 1.0])


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
        self.assertEqual(Options(regime="cold", margin=0).margin, 0.0)  # an explicit one wins, 0 included

    def test_the_margin_is_the_packages_for_the_regime(self):
        # A package with no calibrated margin (the schema-2 one kept under tests/data): the
        # library's defaults, 0.10 warm and 0.08 cold (docs/MODELS.md, "Policy"), reach Python only
        # through the ABI.
        self.assertEqual((_native.default_margin("warm"), _native.default_margin("cold")), (0.10, 0.08))
        model = _native.Model(UNCALIBRATED)
        self.assertEqual(Runtime(model, Options()).options.margin, 0.10)
        self.assertEqual(Runtime(model, Options(regime="cold")).options.margin, 0.08)
        self.assertEqual(Runtime(model, Options(margin=0.3)).options.margin, 0.3)
        # The shipped warm package carries the margin `diode calibrate` chose for its regime; the
        # other regime keeps the default.
        shipped = _native.Model(WARM)
        calibrated = shipped.manifest["selection_policy"]
        self.assertEqual(calibrated["regime"], "warm")
        self.assertEqual(Runtime(shipped, Options()).options.margin, calibrated["margin"])
        self.assertEqual(Runtime(shipped, Options(regime="cold")).options.margin, 0.08)
        with self.assertRaisesRegex(_native.NativeError, "regime 'lukewarm'"):
            model.margin("lukewarm")


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
