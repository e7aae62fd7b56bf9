"""The standalone worker (`python3 -m torch_diode.worker --problems F --out D --shard i/n`) on
bad arguments and hostile input files (CTest label unit): each is one line on stderr naming the
file, line or argument, and exit code 2, never a traceback. Every case fails before the worker
imports torch, so these run on any Python, with or without torch; the worker runs as a real
child process."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOOD = ('{"op":"mm","dtype":"bf16","B":1,"M":64,"N":64,"K":64,'
        '"a_transposed":false,"b_transposed":false}\n')


class WorkerInputTest(unittest.TestCase):
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

    def refused(self, *args, expect):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugin", "python"))
        r = subprocess.run([sys.executable, "-m", "torch_diode.worker", *args], env=env, cwd=self.dir,
                           capture_output=True, text=True, timeout=120)
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertIn(expect, lines[0])
        self.assertFalse(os.path.exists(self.out), "nothing is written for refused input")
        return lines[0]

    def test_shard_out_of_range(self):
        self.refused("--problems", self.good, "--out", self.out, "--shard", "1/0", expect="--shard '1/0'")
        self.refused("--problems", self.good, "--out", self.out, "--shard", "2/2", expect="0 <= i < n")

    def test_negative_counts(self):
        self.refused("--problems", self.good, "--out", self.out, "--inductor-every", "-1", expect="--inductor-every")
        self.refused("--problems", self.good, "--out", self.out, "--exhaustive-configs", "-5",
                     expect="--exhaustive-configs")

    def test_shard_not_a_fraction(self):
        self.refused("--problems", self.good, "--out", self.out, "--shard", "abc", expect="--shard 'abc'")

    def test_bad_json_line_names_file_and_line(self):
        bad = self.file("bad.jsonl", GOOD + '{"op": "mm",\n')
        self.refused("--problems", bad, "--out", self.out, expect=f"{bad}:2: not a JSON object")

    def test_plan_instead_of_problems(self):
        plan = self.file("plan.json", '{"name": "p", "entries": [{"ops": ["mm"]}]}\n')
        self.refused("--problems", plan, "--out", self.out, expect=f"{plan}:1: field 'op' is missing")
        pretty = self.file("pretty.json", '{\n  "name": "p"\n}\n')
        self.refused("--problems", pretty, "--out", self.out, expect=f"{pretty}:1:")

    def test_deep_json_is_one_line_not_a_recursion_error(self):
        deep = self.file("deep.jsonl", "[" * 100000 + "]" * 100000 + "\n")
        self.refused("--problems", deep, "--out", self.out, expect=f"{deep}:1: not a JSON object")

    def test_field_out_of_range(self):
        big = self.file("big.jsonl", GOOD.replace('"M":64', '"M":2147483648'))
        self.refused("--problems", big, "--out", self.out, expect=f"{big}:1: field 'M' must be an integer")

    def test_missing_file_and_directory(self):
        self.refused("--problems", os.path.join(self.dir, "nope.jsonl"), "--out", self.out,
                     expect="nope.jsonl: No such file or directory")
        self.refused("--problems", self.dir, "--out", self.out, expect="Is a directory")

    def test_out_or_done_is_a_directory(self):
        sub = os.path.join(self.dir, "sub")
        os.mkdir(sub)
        self.refused("--problems", self.good, "--out", sub, expect=f"{sub}: is a directory")
        self.refused("--problems", self.good, "--out", self.out, "--done", sub, expect=f"{sub}: is a directory")

    def test_binary_file(self):
        binary = self.file("bin.jsonl", b"\xff\xfe\x00{}\n")
        self.refused("--problems", binary, "--out", self.out, expect=f"{binary}:1: not UTF-8 text")

    def test_endless_line_is_bounded(self):
        # /dev/zero never ends a line: the worker once read it whole.
        self.refused("--problems", "/dev/zero", "--out", self.out, expect="/dev/zero:1: longer than 16777216")

    def test_done_files_are_bounded_and_checked_like_problems(self):
        binary = self.file("done.jsonl", b"\xff\xfe\x00{}\n")
        self.refused("--problems", self.good, "--out", self.out, "--done", binary,
                     expect=f"{binary}:1: not UTF-8 text")
        self.refused("--problems", self.good, "--out", self.out, "--done", "/dev/zero",
                     expect="/dev/zero:1: longer than 16777216")

    def test_problems_without_out(self):
        self.refused("--problems", self.good, expect="--problems needs --out")



class InductorSamplingTest(unittest.TestCase):
    """Which problems also run Inductor's own benchmark (`--inductor-every N`)."""

    def setUp(self):
        sys.path.insert(0, os.path.join(ROOT, "plugin", "python"))
        from torch_diode import worker
        self.worker = worker

    def problems(self, n, space="DEFAULT"):
        return [{"op": "mm", "dtype": "bf16", "B": 1, "M": m, "N": 4096, "K": 4096, "a_transposed": False,
                 "b_transposed": True, "search_space": space} for m in range(1, n + 1)]

    def test_every_nth_by_problem_not_by_position(self):
        chosen = [p["M"] for p in self.problems(2000) if self.worker.inductor_benchmark_for(p, 5)]
        self.assertGreater(len(chosen), 300)
        self.assertLess(len(chosen), 500)
        # The same problems whatever order or shard they come in.
        again = [p["M"] for p in reversed(self.problems(2000)) if self.worker.inductor_benchmark_for(p, 5)]
        self.assertEqual(sorted(again), chosen)

    def test_one_means_all_zero_means_none_exhaustive_never(self):
        ps = self.problems(50)
        self.assertTrue(all(self.worker.inductor_benchmark_for(p, 1) for p in ps))
        self.assertFalse(any(self.worker.inductor_benchmark_for(p, 0) for p in ps))
        self.assertFalse(any(self.worker.inductor_benchmark_for(p, 1) for p in self.problems(50, "EXHAUSTIVE")))


class SweepReportTest(unittest.TestCase):
    def test_counts_the_times_the_worker_writes(self):
        # plugin/scripts/sweep-report.py on a shard as the worker writes it (problem JSON v2:
        # times by method): a candidate with a time is timed, one without is not.
        line = ('{"op":"mm","dtype":"bf16","B":1,"M":64,"N":64,"K":64,"compile_s":2.0,"candidates":['
                '{"kind":"aten","times":{"graph_warm":0.01,"graph_cold":0.02}},'
                '{"kind":"triton","times":{"graph_warm":0.02,"graph_cold":0.03}},'
                '{"kind":"triton","times":{},"error":"out of resource"}]}\n')
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "shard0.jsonl"), "w") as f:
                f.write(line)
            r = subprocess.run([sys.executable, os.path.join(ROOT, "plugin", "scripts", "sweep-report.py"), d],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("problems 1, timed choices 2 (1 choices without a timing)", r.stdout)


if __name__ == "__main__":
    unittest.main()