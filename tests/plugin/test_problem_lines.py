"""The tools' problem JSON lines (core's reader through the library, `torch_diode._native.read_problems`:
what `python3 -m torch_diode.tools.validate_timing --problems F` and `python3 -m torch_diode.tools.demo
--problems F` read) on hostile input files (CTest label unit): each is one line on stderr naming the
file and line, and exit code 2, never a traceback. Every case fails before torch is imported, so
these run on any Python, with or without torch; the tool runs as a real child process. (Sweeps are
driven by `diode sweep` alone; its plan and input checks are tst_sweepplan's and the plan fuzz
corpus's.)"""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "plugin", "python"))
os.environ["TORCH_DIODE_AUTOREGISTER"] = "0"  # the readers imported here need no selector installed
GOOD = '{"op":"mm","dtype":"bf16","B":1,"M":64,"N":64,"K":64,' '"a_transposed":false,"b_transposed":false}\n'


class ProblemLinesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.good = self.file("good.jsonl", GOOD)
        self.out = os.path.join(self.dir, "out.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        return path

    def run_tool(self, tool, *args, env=None):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugin", "python"), **(env or {}))
        return subprocess.run(
            [sys.executable, "-m", f"torch_diode.tools.{tool}", *args],
            env=env,
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=240,
        )

    def refused(self, *args, expect, tool="validate_timing"):
        r = self.run_tool(tool, *args)
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertIn(expect, lines[0])
        self.assertFalse(os.path.exists(self.out), "nothing is written for refused input")
        return lines[0]

    def test_bad_json_line_names_file_and_line(self):
        bad = self.file("bad.jsonl", GOOD + '{"op": "mm",\n')
        self.refused("--problems", bad, "--out", self.out, expect=f"{bad}: line 2: ")

    def test_plan_instead_of_problems(self):
        plan = self.file("plan.json", '{"name": "p", "entries": [{"ops": ["mm"]}]}\n')
        self.refused("--problems", plan, "--out", self.out, expect=f"{plan}: line 1: ")
        pretty = self.file("pretty.json", '{\n  "name": "p"\n}\n')
        self.refused("--problems", pretty, "--out", self.out, expect=f"{pretty}: line 1: ")

    def test_deep_json_is_one_line_not_a_recursion_error(self):
        deep = self.file("deep.jsonl", "[" * 100000 + "]" * 100000 + "\n")
        self.refused("--problems", deep, "--out", self.out, expect=f"{deep}: line 1: ")

    def test_field_out_of_range(self):
        big = self.file("big.jsonl", GOOD.replace('"M":64', '"M":2147483648'))
        self.refused("--problems", big, "--out", self.out, expect=f"{big}: line 1: field 'M'")

    def test_missing_file_and_directory(self):
        self.refused(
            "--problems",
            os.path.join(self.dir, "nope.jsonl"),
            "--out",
            self.out,
            expect="cannot read",
        )
        self.refused("--problems", self.dir, "--out", self.out, expect="is a directory")

    def test_binary_file(self):
        binary = self.file("bin.jsonl", b"\xff\xfe\x00{}\n")
        self.refused("--problems", binary, "--out", self.out, expect=f"{binary}: line 1: ")

    def test_endless_line_is_bounded(self):
        # /dev/zero never ends a line: the worker once read it whole.
        self.refused("--problems", "/dev/zero", "--out", self.out, expect="/dev/zero: line 1: longer than 16777216")

    def test_demo_refuses_bad_lines_before_looking_for_a_gpu(self):
        bad = self.file("bad.jsonl", GOOD + '{"op": "mm", "dtype": "bf16", "N": 8, "K": 8}\n')
        self.refused("--problems", bad, "--json", self.out, tool="demo", expect=f"{bad}: line 2: ")

    def test_layout_and_batch_are_optional_as_core_reads_them(self):
        # problemjson.cpp: B is 1 and a layout not given is row-major.
        from torch_diode._native import read_problems

        path = self.file("short.jsonl", '{"op":"bmm","dtype":"fp16","M":2,"N":3,"K":4}\n')
        (p,) = read_problems(path)
        self.assertEqual((p["B"], p["a_transposed"], p["b_transposed"]), (1, False, False))

    def test_demo_takes_recorded_decisions_each_gemm_once(self):
        # What `demo --decisions-out` and torch_diode.record_decisions write: a problem with its
        # candidates, the selector's settings, the case and mode; a model step repeats each GEMM.
        from torch_diode._native import read_problems
        from torch_diode.tools.demo import distinct_problems

        decision = GOOD.strip()[:-1] + (
            ',"selector":{"top_k":1,"margin":0.05},"candidates":[{"kind":"aten","name":"extern_kernels.mm",'
            '"predicted_ms":0.01,"kept":true}],"mode":"plugin","case":"llama-decode-b1-s512 bf16"}\n'
        )
        other = GOOD.replace('"M":64', '"M":32')
        path = self.file("decisions.jsonl", decision * 3 + other + decision)
        got = distinct_problems(read_problems(path))
        self.assertEqual([p["M"] for p in got], [64, 32])
        self.assertEqual(set(got[0]), {"op", "dtype", "B", "M", "N", "K", "a_transposed", "b_transposed"})
        # The demo itself reads them and goes on to look for a GPU (hidden here: no compile in a unit test).
        r = self.run_tool("demo", "--problems", path, "--json", self.out, env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("diode demo needs a GPU", r.stderr)


if __name__ == "__main__":
    unittest.main()
