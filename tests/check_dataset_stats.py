"""`diode stats --json` on the shipped H200 dataset: >= 300 problems, GPU "NVIDIA H200", ops mm/addmm/bmm."""
import json
import subprocess
import sys

diode, db = sys.argv[1], sys.argv[2]
out = subprocess.run([diode, "stats", "--db", db, "--json"], check=True, capture_output=True, text=True).stdout
stats = json.loads(out)
print(json.dumps(stats))
assert stats["problems"] >= 300, f"only {stats['problems']} problems"
assert "NVIDIA H200" in stats["gpus"], stats["gpus"]
assert {"mm", "addmm", "bmm"} <= set(stats["ops"]), stats["ops"]
assert {"bf16", "fp16", "fp32"} <= set(stats["dtypes"]), stats["dtypes"]
print("1 passed, 0 failed")
