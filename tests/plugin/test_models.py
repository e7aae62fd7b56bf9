"""The model-step scenarios' names (torch_diode.tools.models, without torch; CTest label unit): every
name of the grammar is a scenario, the default set among them, and a name outside it is refused with
the grammar, by `diode demo --models` too."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plugin", "python"))

# E402: imported after sys.path names the checkout's package above, not an installed one.
from torch_diode.tools import demo, models  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
