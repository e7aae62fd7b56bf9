"""`diode stats --json` on the shipped H200 datasets, checked against what the issues promise.

check_dataset_stats.py DIODE DB                  the autotune-timed dataset: >= 300 problems
check_dataset_stats.py DIODE DB HELDOUT.jsonl    the in-graph dataset (store + held-out lines):
    >= 3,000 problems on "NVIDIA H200" with graph_warm and graph_cold times, >= 3 held-out
    families, and no held-out problem in the training store."""
import json
import subprocess
import sys

diode, db, heldout = sys.argv[1], sys.argv[2], sys.argv[3:]
cmd = [diode, "stats", "--db", db, "--json"] + [a for h in heldout for a in ("--heldout", h)]
stats = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
print(json.dumps({k: v for k, v in stats.items() if k != "heldout"}))
assert "NVIDIA H200" in stats["gpus"], stats["gpus"]
assert {"mm", "addmm", "bmm"} <= set(stats["ops"]), stats["ops"]
assert {"bf16", "fp16", "fp32"} <= set(stats["dtypes"]), stats["dtypes"]
if not heldout:
    assert stats["problems"] >= 300, f"only {stats['problems']} problems"
else:
    held, whole = stats["heldout"], stats["dataset"]
    print(json.dumps(held))
    assert whole["problems_by_gpu"].get("NVIDIA H200", 0) >= 3000, f"only {whole['problems_by_gpu']} problems"
    assert whole["heldout_problems_in_db"] == 0, f"{whole['heldout_problems_in_db']} held-out problems trained on"
    for part in (stats, held):
        for method in ("graph_warm", "graph_cold"):
            assert part["measurements_by_method"].get(method, 0) > 0, f"no {method} times: {part}"
    families = [t for t in held["lines_by_heldout"] if t.startswith("family:")]
    assert len(families) >= 3, f"held-out families: {families}"
print("1 passed, 0 failed")
