-- A database as schema version 3 wrote it (problems whose CHECK allows mm, addmm and bmm only),
-- made from schema-v2.sql by the 2 -> 3 migration plus a bmm problem with in-graph times and a
-- baseline: the migration test opens it with the current build and checks that every row of
-- every table is kept, ids included, and that a read-only open reads it unchanged.
BEGIN TRANSACTION;
CREATE TABLE kernel_configs(
  id INTEGER PRIMARY KEY,
  config_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL, name TEXT NOT NULL,
  block_m INTEGER, block_n INTEGER, block_k INTEGER, group_m INTEGER,
  num_stages INTEGER, num_warps INTEGER, threads INTEGER, extra_json TEXT);
INSERT INTO "kernel_configs" VALUES(1,'{"kind":"aten","name":"extern_kernels.mm"}','aten','extern_kernels.mm',NULL,NULL,NULL,NULL,NULL,NULL,NULL,'{}');
INSERT INTO "kernel_configs" VALUES(2,'{"BLOCK_K":64,"BLOCK_M":64,"BLOCK_N":128,"GROUP_M":8,"kind":"triton","num_stages":3,"num_warps":4,"template":"mm"}','triton','mm',64,128,64,8,3,4,NULL,'{}');
INSERT INTO "kernel_configs" VALUES(3,'{"BLOCK_K":64,"BLOCK_M":16,"BLOCK_N":64,"kind":"cpu","name":"tiled","threads":2}','cpu','tiled',16,64,64,NULL,NULL,NULL,2,'{}');
INSERT INTO "kernel_configs" VALUES(4,'{"BLOCK_K":64,"BLOCK_M":64,"BLOCK_N":64,"kind":"cpu","name":"tiled","threads":1}','cpu','tiled',64,64,64,NULL,NULL,NULL,1,'{}');
CREATE TABLE "measurements"(
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  method TEXT NOT NULL CHECK(method IN ('graph_warm','graph_cold','inductor_autotune','cpu')),
  time_ms REAL,
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT,
  PRIMARY KEY(problem_id, config_id, run_id, method)) WITHOUT ROWID;
INSERT INTO "measurements" VALUES(1,1,1,'inductor_autotune',0.0123,'ok',NULL);
INSERT INTO "measurements" VALUES(1,2,1,'inductor_autotune',NULL,'failed','out of resource: shared memory');
INSERT INTO "measurements" VALUES(1,2,3,'inductor_autotune',0.021,'ok',NULL);
INSERT INTO "measurements" VALUES(2,3,2,'cpu',0.75,'ok',NULL);
INSERT INTO "measurements" VALUES(2,4,2,'cpu',NULL,'timeout','per-problem timeout of 60 s reached before this config ran');
INSERT INTO "measurements" VALUES(7,1,1,'graph_cold',0.0102,'ok',NULL);
INSERT INTO "measurements" VALUES(7,1,1,'graph_warm',0.0081,'ok',NULL);
CREATE TABLE models(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT, created_at TEXT NOT NULL,
  manifest_json TEXT NOT NULL);
INSERT INTO "models" VALUES(1,'old-model','/tmp/old-model.diode','2026-11-04T10:00:00Z','{"name":"old-model","created_at":"2026-11-04T10:00:00Z"}');
CREATE TABLE predictions(
  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  predicted_ms REAL NOT NULL,
  PRIMARY KEY(model_id, problem_id, config_id));
INSERT INTO "predictions" VALUES(1,1,1,0.0125);
CREATE TABLE problem_baselines(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  baseline TEXT NOT NULL,
  method TEXT NOT NULL CHECK(method IN ('graph_warm','graph_cold','inductor_autotune','cpu')),
  time_ms REAL NOT NULL,
  compile_s REAL,
  pick_config_id INTEGER REFERENCES kernel_configs(id),
  PRIMARY KEY(run_id, problem_id, baseline, method)) WITHOUT ROWID;
INSERT INTO "problem_baselines" VALUES(1,7,'plain','graph_warm',0.0081,1.5,1);
CREATE TABLE problems(
  id INTEGER PRIMARY KEY,
  op TEXT NOT NULL CHECK(op IN ('mm','addmm','bmm')),
  dtype TEXT NOT NULL CHECK(dtype IN ('bf16','fp16','fp32')),
  b INTEGER NOT NULL CHECK(b >= 1), m INTEGER NOT NULL CHECK(m >= 1),
  n INTEGER NOT NULL CHECK(n >= 1), k INTEGER NOT NULL CHECK(k >= 1),
  a_transposed INTEGER NOT NULL, b_transposed INTEGER NOT NULL,
  UNIQUE(op, dtype, b, m, n, k, a_transposed, b_transposed));
INSERT INTO "problems" VALUES(1,'mm','bf16',1,64,4096,4096,0,1);
INSERT INTO "problems" VALUES(2,'mm','fp32',1,128,256,256,0,0);
INSERT INTO "problems" VALUES(7,'bmm','bf16',32,1,1024,128,0,1);
CREATE TABLE run_problems(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT, seconds REAL,
  PRIMARY KEY(run_id, problem_id));
INSERT INTO "run_problems" VALUES(1,1,'ok',NULL,4.5);
INSERT INTO "run_problems" VALUES(2,2,'ok',NULL,0.8);
INSERT INTO "run_problems" VALUES(3,1,'ok',NULL,0.0);
INSERT INTO "run_problems" VALUES(1,7,'ok',NULL,12.5);
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
INSERT INTO "runs" VALUES(1,'2026-11-01T10:00:00Z',NULL,'finished','inductor','gpu-plan',NULL,NULL,NULL,'NVIDIA H200',NULL,NULL,NULL,NULL,NULL,NULL,1);
INSERT INTO "runs" VALUES(2,'2026-11-02T10:00:00Z',NULL,'finished','cpu','cpu-plan',NULL,NULL,NULL,'CPU: Xeon',NULL,NULL,NULL,NULL,NULL,NULL,1);
INSERT INTO "runs" VALUES(3,'2026-11-03T10:00:00Z',NULL,'finished','import','problem-jsonl',NULL,NULL,NULL,'NVIDIA H100',NULL,NULL,NULL,NULL,NULL,'old.jsonl',1);
CREATE TABLE telemetry(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  t REAL NOT NULL, sm_clock_mhz REAL, mem_clock_mhz REAL, power_w REAL,
  temperature_c REAL, utilization_pct REAL);
INSERT INTO "telemetry" VALUES(1,0.5,1980.0,3201.0,450.0,51.0,97.0);
CREATE INDEX run_problems_by_problem ON run_problems(problem_id);
CREATE INDEX telemetry_by_run ON telemetry(run_id, t);
CREATE INDEX predictions_by_problem ON predictions(problem_id);
CREATE INDEX measurements_by_config ON measurements(config_id);
COMMIT;
PRAGMA user_version=3;
