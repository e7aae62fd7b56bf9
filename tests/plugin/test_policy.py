"""The selector's policy and package choice without torch (CTest label unit): the ATen guard
(ATen, what plain torch.compile runs, is replaced only by a predicted win larger than the
margin), top_k and threshold, the fallback ATen kept beside templates, and the regime deciding
which package is loaded."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plugin", "python"))

from torch_diode import _models  # noqa: E402
from torch_diode._selector import DEFAULT_MARGINS, Options, pick_policy, plain_candidate  # noqa: E402

KINDS = ["aten", "aten", "triton", "triton", "triton"]


class PolicyTest(unittest.TestCase):
    def test_aten_kept_alone_when_the_predicted_win_is_within_the_margin(self):
        # best Triton 9.5 against ATen 10.0: a 5 % predicted win, under an 8 % margin
        self.assertEqual(pick_policy(KINDS, [10.0, 11.0, 9.5, 12.0, 13.0], top_k=3, margin=0.08), [0])

    def test_a_win_beyond_the_margin_replaces_aten(self):
        self.assertEqual(pick_policy(KINDS, [10.0, 11.0, 8.0, 12.0, 13.0], top_k=1, margin=0.08), [2])
        self.assertEqual(pick_policy(KINDS, [10.0, 11.0, 8.0, 8.5, 13.0], top_k=2, margin=0.08), [2, 3])

    def test_the_best_aten_is_the_one_kept(self):
        self.assertEqual(pick_policy(KINDS, [10.0, 9.0, 9.5, 12.0, 13.0], top_k=1, margin=0.08), [1])

    def test_bias_addmm_is_the_default_of_an_addmm_with_a_broadcast_bias(self):
        # Plain torch.compile hands cuBLAS the 1-D bias (bias_addmm's path); extern addmm gets it
        # expanded and measured 1.27x slower: it replaces the default only by a win beyond the margin.
        kinds = ["aten", "aten", "triton"]
        names = ["extern_kernels.addmm", "extern_kernels.bias_addmm", "mm"]
        self.assertEqual(pick_policy(kinds, [9.6, 10.0, 11.0], top_k=1, margin=0.08, names=names), [1])
        self.assertEqual(pick_policy(kinds, [8.0, 10.0, 11.0], top_k=1, margin=0.08, names=names), [0])
        # without names (or without bias_addmm) the best-predicted ATen kernel is the default
        self.assertEqual(pick_policy(kinds, [9.6, 10.0, 11.0], top_k=1, margin=0.08), [0])
        self.assertEqual(plain_candidate(["triton", "aten"], [1.0, 2.0], ["mm", "extern_kernels.mm"]), 1)
        self.assertIsNone(plain_candidate(["triton"], [1.0], ["mm"]))

    def test_margin_zero_is_plain_top_k(self):
        self.assertEqual(pick_policy(KINDS, [10.0, 11.0, 9.5, 12.0, 13.0], top_k=1, margin=0.0), [2])
        self.assertEqual(pick_policy(KINDS, [9.0, 11.0, 9.5, 12.0, 13.0], top_k=2, margin=0.0), [0, 2])

    def test_threshold_bounds_top_k(self):
        self.assertEqual(pick_policy(KINDS, [20.0, 21.0, 8.0, 8.5, 9.5], top_k=3, margin=0.08, threshold=1.1),
                         [2, 3])

    def test_no_aten_candidate_means_no_guard(self):
        self.assertEqual(pick_policy(["triton"] * 3, [3.0, 1.0, 2.0], top_k=1, margin=0.5), [1])
        self.assertEqual(pick_policy([], [], top_k=1, margin=0.08), [])

    def test_options_refuse_bad_values_with_their_name(self):
        with self.assertRaisesRegex(ValueError, "margin"):
            Options(margin=-0.1)
        with self.assertRaisesRegex(ValueError, "regime"):
            Options(regime="lukewarm")
        o = Options()
        self.assertEqual((o.top_k, o.margin, o.regime), (1, DEFAULT_MARGINS["warm"], "warm"))
        # Each regime's package has its own calibrated margin; an explicit one wins, 0 included.
        self.assertEqual(Options(regime="cold").margin, DEFAULT_MARGINS["cold"])
        self.assertEqual(Options(regime="cold", margin=0).margin, 0.0)
        with self.assertRaisesRegex(ValueError, "regime must be"):
            Options(regime="lukewarm", margin=None)


class RegimeChoiceTest(unittest.TestCase):
    def pkg(self, name, method, created, source="shipped"):
        return {"path": f"/x/{name}.diode", "name": name, "source": source, "matches_hardware": True,
                "timing_method": method, "created_at": created}

    def test_the_package_of_the_asked_regime_wins_over_a_newer_one(self):
        models = [self.pkg("warm", "graph_warm", "2026-11-22"), self.pkg("cold", "graph_cold", "2026-11-21"),
                  self.pkg("v2", "inductor_autotune", "2026-11-23")]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "warm")[0]["name"], "warm")
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "cold")[0]["name"], "cold")

    def test_in_graph_truth_before_inductor_benchmark_then_newest(self):
        models = [self.pkg("v2", "inductor_autotune", "2026-11-23"), self.pkg("warm", "graph_warm", "2026-11-22")]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "cold")[0]["name"], "warm")
        models = [self.pkg("old", "inductor_autotune", "2026-01-01"), self.pkg("new", "inductor_autotune", "2026-02-01")]
        self.assertEqual(_models.best_for({"gpu": "NVIDIA H200"}, models, "warm")[0]["name"], "new")


if __name__ == "__main__":
    unittest.main()
