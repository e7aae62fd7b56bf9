"""`diode sweep`, the one sweep driver, with the real inductor worker on the local GPUs (CTest label
gpu): two workers a GPU on every GPU (`--gpus all`), a run cut by its deadline and resumed, and
the store checked as one uninterrupted run's. Qt-free, so it runs on a GPU server that has only the
CLI (`cmake --preset cli`): DIODE_CLI names the binary. Without torch, Triton or a GPU the suite
is skipped with the reason and exits 77, which CTest shows as skipped (never as passed)."""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIODE = os.environ.get("DIODE_CLI", os.path.join(ROOT, "build", "app", "diode"))
PLAN = os.path.join(ROOT, "resources", "plans", "worker-check.json")
os.environ["TORCH_DIODE_AUTOREGISTER"] = "0"

try:
    from torch_diode.tools import worker

    WHY = worker.environment_problem()
except Exception as e:  # whatever stops the import skips the suite, with its reason
    WHY = f"torch_diode.tools.worker cannot be imported: {e}"
if not WHY and not os.access(DIODE, os.X_OK):
    WHY = f"no diode binary at {DIODE} (set DIODE_CLI)"


def diode(*args, timeout=900):
    r = subprocess.run([DIODE, *args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def scalar(db, sql):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute(sql).fetchone()[0]


class SweepTest(unittest.TestCase):
    def test_workers_on_every_gpu_measure_the_plan_once(self):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "gpu.db")
            rc, out = diode(
                "sweep",
                "--backend",
                "inductor",
                "--plan",
                PLAN,
                "--db",
                db,
                "--python",
                sys.executable,
                "--workers-per-gpu",
                "2",
                "--gpus",
                "all",
            )
            self.assertEqual(rc, 0, out)
            self.assertEqual(scalar(db, "SELECT count(*) FROM run_problems WHERE status='ok'"), 4, out)
            self.assertGreaterEqual(scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='triton'"), 10)
            self.assertGreaterEqual(scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='aten'"), 2)
            self.assertGreaterEqual(scalar(db, "SELECT count(*) FROM telemetry"), 1)
            for method in ("graph_warm", "graph_cold"):
                self.assertGreaterEqual(
                    scalar(db, f"SELECT count(*) FROM measurements WHERE method='{method}' " "AND status='ok'"), 10
                )
            # The plan runs Inductor's own benchmark on every problem (inductor_every 1): its times and
            # both baselines for all four.
            self.assertGreaterEqual(
                scalar(db, "SELECT count(*) FROM measurements WHERE method='inductor_autotune'"), 10
            )
            for baseline in ("default", "max_autotune"):
                self.assertEqual(
                    scalar(
                        db,
                        "SELECT count(DISTINCT problem_id) FROM problem_baselines WHERE "
                        f"baseline='{baseline}' AND method='graph_warm'",
                    ),
                    4,
                )
            rc, stats = diode("stats", "--db", db)
            self.assertIn("default method graph_warm times (default: the data has in-graph times)", stats)
            # Every worker wrote its own log, and the cache folders are gone.
            logs = [f for f in os.listdir(d) if f.startswith("gpu.db.worker-")]
            self.assertGreaterEqual(len(logs), 2, os.listdir(d))

    def test_inductor_every_and_a_resumed_deadline(self):
        with tempfile.TemporaryDirectory() as d:
            with open(PLAN) as f:
                plan = json.load(f)
            plan["inductor_every"] = 0  # in-graph times only: no Inductor benchmark, no max-autotune baseline
            path = os.path.join(d, "plan.json")
            with open(path, "w") as f:  # closed, so written out, before the sweep reads it
                json.dump(plan, f)
            db = os.path.join(d, "cut.db")
            rc, out = diode(
                "sweep",
                "--backend",
                "inductor",
                "--plan",
                path,
                "--db",
                db,
                "--python",
                sys.executable,
                "--deadline",
                "0.001",
                "--workers-per-gpu",  # one worker takes one problem before the deadline; auto's six would take all
                "1",
            )
            self.assertEqual(rc, 1, out)  # stopped by the deadline, resumable
            self.assertIn("deadline", out)
            rc, out = diode("sweep", "--resume", "--db", db, "--python", sys.executable, "--workers-per-gpu", "3")
            self.assertEqual(rc, 0, out)
            self.assertEqual(scalar(db, "SELECT count(*) FROM run_problems WHERE status='ok'"), 4, out)
            self.assertEqual(scalar(db, "SELECT count(*) FROM measurements WHERE method='inductor_autotune'"), 0)
            self.assertEqual(scalar(db, "SELECT count(*) FROM problem_baselines WHERE baseline='max_autotune'"), 0)
            # Nothing measured twice across the two sessions.
            self.assertEqual(
                scalar(db, "SELECT count(*) FROM measurements"),
                scalar(db, "SELECT count(*) FROM (SELECT DISTINCT problem_id, config_id, method " "FROM measurements)"),
            )


if __name__ == "__main__":
    if WHY:
        print(f"skipped: {WHY}")
        sys.exit(77)
    unittest.main()
