-- A database as schema version 2 wrote it (times without their timing method; no baselines),
-- with a little data: the migration test opens it with the current build and checks that every
-- time is kept under the method it was taken with.
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
CREATE TABLE telemetry(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  t REAL NOT NULL, sm_clock_mhz REAL, mem_clock_mhz REAL, power_w REAL,
  temperature_c REAL, utilization_pct REAL);
CREATE INDEX telemetry_by_run ON telemetry(run_id, t);
CREATE TABLE models(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT, created_at TEXT NOT NULL,
  manifest_json TEXT NOT NULL);
CREATE TABLE predictions(
  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  predicted_ms REAL NOT NULL,
  PRIMARY KEY(model_id, problem_id, config_id));
CREATE INDEX predictions_by_problem ON predictions(problem_id);
-- An inductor sweep (Inductor's autotune times), a cpu sweep (the cpu backend's own times) and
-- an import; the migration must file each time under its method.
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name, problems_planned)
  VALUES(1, '2026-11-01T10:00:00Z', 'finished', 'inductor', 'gpu-plan', 'NVIDIA H200', 1);
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name, problems_planned)
  VALUES(2, '2026-11-02T10:00:00Z', 'finished', 'cpu', 'cpu-plan', 'CPU: Xeon', 1);
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name, source, problems_planned)
  VALUES(3, '2026-11-03T10:00:00Z', 'finished', 'import', 'problem-jsonl', 'NVIDIA H100', 'old.jsonl', 1);
INSERT INTO problems(id, op, dtype, b, m, n, k, a_transposed, b_transposed) VALUES(1, 'mm', 'bf16', 1, 64, 4096, 4096, 0, 1);
INSERT INTO problems(id, op, dtype, b, m, n, k, a_transposed, b_transposed) VALUES(2, 'mm', 'fp32', 1, 128, 256, 256, 0, 0);
INSERT INTO kernel_configs(id, config_key, kind, name, extra_json)
  VALUES(1, '{"kind":"aten","name":"extern_kernels.mm"}', 'aten', 'extern_kernels.mm', '{}');
INSERT INTO kernel_configs(id, config_key, kind, name, block_m, block_n, block_k, group_m, num_stages, num_warps, extra_json)
  VALUES(2, '{"BLOCK_K":64,"BLOCK_M":64,"BLOCK_N":128,"GROUP_M":8,"kind":"triton","num_stages":3,"num_warps":4,"template":"mm"}',
         'triton', 'mm', 64, 128, 64, 8, 3, 4, '{}');
INSERT INTO kernel_configs(id, config_key, kind, name, block_m, block_n, block_k, threads, extra_json)
  VALUES(3, '{"BLOCK_K":64,"BLOCK_M":16,"BLOCK_N":64,"kind":"cpu","name":"tiled","threads":2}', 'cpu', 'tiled', 16, 64, 64, 2, '{}');
INSERT INTO kernel_configs(id, config_key, kind, name, block_m, block_n, block_k, threads, extra_json)
  VALUES(4, '{"BLOCK_K":64,"BLOCK_M":64,"BLOCK_N":64,"kind":"cpu","name":"tiled","threads":1}', 'cpu', 'tiled', 64, 64, 64, 1, '{}');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status) VALUES(1, 1, 1, 0.0123, 'ok');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status, error)
  VALUES(1, 1, 2, NULL, 'failed', 'out of resource: shared memory');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status) VALUES(2, 2, 3, 0.75, 'ok');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status, error)
  VALUES(2, 2, 4, NULL, 'timeout', 'per-problem timeout of 60 s reached before this config ran');
INSERT INTO measurements(run_id, problem_id, config_id, time_ms, status) VALUES(3, 1, 2, 0.0210, 'ok');
INSERT INTO run_problems(run_id, problem_id, status, seconds) VALUES(1, 1, 'ok', 4.5);
INSERT INTO run_problems(run_id, problem_id, status, seconds) VALUES(2, 2, 'ok', 0.8);
INSERT INTO run_problems(run_id, problem_id, status, seconds) VALUES(3, 1, 'ok', 0);
INSERT INTO telemetry(run_id, t, sm_clock_mhz, mem_clock_mhz, power_w, temperature_c, utilization_pct)
  VALUES(1, 0.5, 1980, 3201, 450, 51, 97);
INSERT INTO models(id, name, path, created_at, manifest_json)
  VALUES(1, 'old-model', '/tmp/old-model.diode', '2026-11-04T10:00:00Z', '{"name":"old-model","created_at":"2026-11-04T10:00:00Z"}');
INSERT INTO predictions(model_id, problem_id, config_id, predicted_ms) VALUES(1, 1, 1, 0.0125);
PRAGMA user_version=2;
