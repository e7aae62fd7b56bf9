-- A database as schema version 1 wrote it (before telemetry, models and predictions), with a
-- little data: the migration test opens it with the current build and checks nothing is lost.
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK(status IN ('running','finished','cancelled','failed')),
  backend TEXT NOT NULL,
  plan_name TEXT, plan_json TEXT, search_space TEXT,
  host TEXT, gpu_name TEXT, sm_count INTEGER, gpu_memory_mb INTEGER, driver TEXT,
  torch_version TEXT, triton_version TEXT, source TEXT,
  problems_planned INTEGER NOT NULL DEFAULT 0);
CREATE TABLE problems(
  id INTEGER PRIMARY KEY,
  op TEXT NOT NULL CHECK(op IN ('mm','addmm','bmm')),
  dtype TEXT NOT NULL CHECK(dtype IN ('bf16','fp16','fp32')),
  b INTEGER NOT NULL CHECK(b >= 1), m INTEGER NOT NULL CHECK(m >= 1),
  n INTEGER NOT NULL CHECK(n >= 1), k INTEGER NOT NULL CHECK(k >= 1),
  a_transposed INTEGER NOT NULL, b_transposed INTEGER NOT NULL,
  UNIQUE(op, dtype, b, m, n, k, a_transposed, b_transposed));
CREATE TABLE kernel_configs(
  id INTEGER PRIMARY KEY,
  config_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL, name TEXT NOT NULL,
  block_m INTEGER, block_n INTEGER, block_k INTEGER, group_m INTEGER,
  num_stages INTEGER, num_warps INTEGER, threads INTEGER, extra_json TEXT);
CREATE TABLE measurements(
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  time_ms REAL,
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT,
  PRIMARY KEY(problem_id, config_id, run_id)) WITHOUT ROWID;
-- By problem: the primary key. By config: the index below. By run: run_problems' key, then the
-- primary key. No more indexes: each one costs ingest rate (docs/BENCHMARKS.md).
CREATE INDEX measurements_by_config ON measurements(config_id);
CREATE TABLE run_problems(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT, seconds REAL,
  PRIMARY KEY(run_id, problem_id));
CREATE INDEX run_problems_by_problem ON run_problems(problem_id);
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name, problems_planned)
  VALUES(1, '2026-11-01T10:00:00Z', 'finished', 'inductor', 'old-plan', 'NVIDIA H200', 1);
INSERT INTO problems(id, op, dtype, b, m, n, k, a_transposed, b_transposed) VALUES(1, 'mm', 'bf16', 1, 64, 4096, 4096, 0, 1);
INSERT INTO kernel_configs(id, config_key, kind, name, extra_json)
  VALUES(1, '{"kind":"aten","name":"extern_kernels.mm"}', 'aten', 'extern_kernels.mm', '{}');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status) VALUES(1, 1, 1, 0.0123, 'ok');
INSERT INTO run_problems(run_id, problem_id, status, seconds) VALUES(1, 1, 'ok', 4.5);
PRAGMA user_version=1;
