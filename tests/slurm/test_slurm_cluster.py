"""`diode sweep --slurm` on a real one-node Slurm cluster.

Starts munged, slurmctld and slurmd on localhost from a generated slurm.conf in a temporary
directory (as root, as CI runs; no systemd), submits a cpu-backend sweep as an array of 4 tasks,
cancels one task with scancel once it has finished a problem, submits the unfinished shard again
with `diode sweep --slurm --resume`, and checks that the merged store holds exactly the
measurements of one uninterrupted `diode sweep` of the same plan (problem, config, method and
status of each; not times), nothing lost or doubled. Also: sbatch refusing the job (an unknown
partition) is reported naming sbatch's cause and the script. With the GUI built, the Sweep page
then submits the plan to the same cluster, follows its shards and the merge, and opens the merged
store (tst_sweeppage's submitsToSlurmAndFollowsTheMerge, a real Qt window offscreen).

Exits 77 (CTest: skipped) with the reason on stdout only where the daemons cannot start: not
root, slurm-wlm or munge not installed, or the cluster never comes up.
Usage: test_slurm_cluster.py DIODE PLAN
"""
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIP = 77


def skip(why):
    print(f"SKIP: the Slurm test cluster cannot run here: {why}", flush=True)
    sys.exit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return f"({path}: {e.strerror})"


class Cluster:
    """munged, slurmctld and slurmd as this process's children, configured in `root`."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        r = self.root
        key = os.path.join(r, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = os.path.join(r, "munge.sock")
        self.spawn(
            "munged",
            [
                "munged",
                "-F",
                "-f",
                "--num-threads=10",
                f"--key-file={key}",
                f"--socket={sock}",
                f"--pid-file={r}/munged.pid",
                f"--log-file={r}/munged.log",
                f"--seed-file={r}/munged.seed",
            ],
        )
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            skip(f"munged did not create its socket:\n{tail(r + '/munged.log')}{tail(r + '/munged.out')}")
        host = socket.gethostname().split(".")[0]
        os.makedirs(f"{r}/state")
        os.makedirs(f"{r}/spool")
        # linuxproc and task/none: no cgroups or systemd needed. config_overrides: 4 CPUs whatever
        # the machine has, so the 4 tasks run side by side.
        with open(self.conf, "w") as f:
            f.write(
                f"""ClusterName=diodetest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/slurmctld.log
SlurmdLogFile={r}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=5
SlurmdParameters=config_overrides
NodeName={host} NodeAddr=127.0.0.1 CPUs=5 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""
            )
        self.spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self.spawn("slurmd", ["slurmd", "-D"])
        deadline = time.time() + 60
        while time.time() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if out.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        skip(
            f"the node never became idle (sinfo: {out.stdout.strip()} {out.stderr.strip()})\n"
            f"slurmctld.log:\n{tail(r + '/slurmctld.log')}slurmd.log:\n{tail(r + '/slurmd.log')}"
        )

    def spawn(self, name, argv):
        out = open(os.path.join(self.root, name + ".out"), "w")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT))

    def stop(self):
        subprocess.run(["scancel", "--user=root"], env=self.env, capture_output=True)
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def measurement_keys(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT p.op, p.dtype, p.b, p.m, p.n, p.k, p.a_transposed, p.b_transposed, c.config_key, m.method, "
        "m.status FROM measurements m JOIN problems p ON p.id = m.problem_id "
        "JOIN kernel_configs c ON c.id = m.config_id"
    ).fetchall()
    con.close()
    return rows


def query(db, sql):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def main():
    diode, plan = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    gui_test = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None  # tst_sweeppage, GUI builds only
    missing = [
        t for t in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo") if not shutil.which(t)
    ]
    if missing:
        skip(f"{', '.join(missing)} not found (Debian 12: apt-get install slurm-wlm munge; .ci/bootstrap does)")
    if os.geteuid() != 0:
        skip("slurmd and munged are started as root (CI runs as root); this user is not")
    t0 = time.time()
    root = tempfile.mkdtemp(prefix="diode-slurm-")
    cluster = Cluster(root)
    env = cluster.env
    ok = False
    try:
        cluster.start()
        print(f"cluster up in {time.time() - t0:.1f} s ({root})", flush=True)

        def diode_run(*args, expect=0):
            r = subprocess.run([diode, *args], env=env, capture_output=True, text=True, cwd=root, timeout=120)
            print(f"$ diode {' '.join(args)}  -> {r.returncode}\n{r.stdout}{r.stderr}", flush=True)
            assert r.returncode == expect, f"diode {args[0]} exited {r.returncode}, expected {expect}"
            return r.stdout + r.stderr

        def queued(job):
            r = subprocess.run(
                ["squeue", "-h", "-r", "-j", job, "-o", "%i %T"], env=env, capture_output=True, text=True
            )
            return r.stdout.split("\n") if r.stdout.strip() else []

        def wait_for(what, cond, timeout=150):
            end = time.time() + timeout
            while time.time() < end:
                if cond():
                    return
                time.sleep(0.2)
            raise AssertionError(f"timed out waiting for {what}")

        # The reference: one uninterrupted run, beside the cluster's.
        whole = os.path.join(root, "whole.db")
        reference = subprocess.Popen(
            [diode, "sweep", "--backend", "cpu", "--plan", plan, "--db", whole],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        # sbatch refusing the job: its own words, and where the script is.
        bad = diode_run(
            "sweep",
            "--slurm",
            "--shards",
            "4",
            "--backend",
            "cpu",
            "--plan",
            plan,
            "--db",
            os.path.join(root, "refused.db"),
            "--partition",
            "nosuch",
            expect=1,
        )
        assert "sbatch refused the array job" in bad and "partition" in bad and "sweep.sbatch" in bad, bad

        # A task that never starts (held until tomorrow by an option from a --slurm-config file):
        # its shard has no store; once its job is gone it is submitted again, said so.
        cfg = os.path.join(root, "later.json")
        with open(cfg, "w") as f:
            f.write('{"sbatch_args": ["--begin=now+1day"], "setup": ["echo setup line ran"]}')
        later = os.path.join(root, "later.db")
        out = diode_run(
            "sweep",
            "--slurm",
            "--shards",
            "2",
            "--backend",
            "cpu",
            "--plan",
            plan,
            "--db",
            later,
            "--slurm-config",
            cfg,
        )
        later_array = out.split("submitted array job ")[1].split(":")[0]
        status = diode_run("sweep", "--status", "--db", later)
        shard_lines = [line for line in status.splitlines() if line.startswith("shard ")]
        assert len(shard_lines) == 2 and all(
            "no store yet" in line and "PENDING" in line for line in shard_lines
        ), status
        subprocess.run(["scancel", later_array], env=env, check=True)
        wait_for("the held array to leave the queue", lambda: not queued(later_array), timeout=30)
        out = diode_run("sweep", "--slurm", "--resume", "--db", later)
        assert "shard 0/2: no store yet (its task never started); submitted again" in out, out
        assert "echo setup line ran" in open(later + ".shards/sweep.sbatch").read()

        db = os.path.join(root, "cluster.db")
        # Two workers a task (they take turns on the CPU as a GPU's take turns timing): the merged
        # store must still be one uninterrupted run's.
        out = diode_run(
            "sweep",
            "--slurm",
            "--shards",
            "4",
            "--workers-per-gpu",
            "2",
            "--backend",
            "cpu",
            "--plan",
            plan,
            "--db",
            db,
        )
        array = out.split("submitted array job ")[1].split(":")[0]
        shards = db + ".shards"
        script = open(os.path.join(shards, "sweep.sbatch")).read()
        assert "#SBATCH --array=0-3" in script and '--shard "$SLURM_ARRAY_TASK_ID/4"' in script, script
        assert "--workers-per-gpu 2" in script, script

        # Cancel task 1 once it has finished a problem and is measuring the next.
        s1 = os.path.join(shards, "shard-1.db")

        def mid_run():
            try:
                done = query(s1, "SELECT count(*) FROM run_problems")[0][0]
                status = query(s1, "SELECT status FROM runs")
            except sqlite3.Error:
                return False
            return done >= 1 and status == [("running",)]

        wait_for("shard 1 to finish its first problem", mid_run)
        subprocess.run(["scancel", f"{array}_1"], env=env, check=True)
        wait_for("the array's tasks to end", lambda: not queued(array))
        status = diode_run("sweep", "--status", "--db", db)
        line1 = next(line for line in status.splitlines() if line.startswith("shard 1/4"))
        assert "cancelled" in line1, status
        assert "not merged yet" in status and "PENDING" in status, status
        done_before = query(s1, "SELECT count(*) FROM run_problems")[0][0]
        planned = query(s1, "SELECT problems_planned FROM runs")[0][0]
        assert 1 <= done_before < planned, (done_before, planned)

        # Only the cancelled shard goes again; the merge follows it.
        out = diode_run("sweep", "--slurm", "--resume", "--db", db)
        assert "shard 1/4: cancelled" in out and "submitted again" in out, out
        for other in ("shard 0/4", "shard 2/4", "shard 3/4"):
            assert other not in out, out
        merge_job = out.split("submitted merge job ")[1].split()[0]
        wait_for("the merge job", lambda: os.path.exists(db) and not queued(merge_job), timeout=150)
        reference.wait(timeout=150)
        assert reference.returncode == 0

        merged, expected = measurement_keys(db), measurement_keys(whole)
        assert len(merged) == len(set(merged)), "a measurement is in the merged store twice"
        assert sorted(merged) == sorted(expected), (
            f"merged store differs from one uninterrupted run: " f"{len(merged)} against {len(expected)} measurements"
        )
        assert query(db, "SELECT count(*) FROM runs WHERE status = 'finished'")[0][0] == 4
        assert query(s1, "SELECT count(*) FROM runs")[0][0] == 1, "the resubmitted task started a new run"
        assert (
            query(db, "SELECT count(*) FROM run_problems")[0][0]
            == query(whole, "SELECT count(*) FROM run_problems")[0][0]
        )
        # Each task's output where the script says, the resumed task's appended to its first try's.
        for i in range(4):
            log = open(os.path.join(shards, f"shard-{i}.out")).read()
            assert f"shard {i}/4" in log, log
        assert open(os.path.join(shards, "shard-1.out")).read().count("run 1") >= 2
        assert "4 runs" in open(os.path.join(shards, "merge.out")).read()
        out = diode_run("sweep", "--slurm", "--resume", "--db", db)
        assert "nothing to submit again" in out, out

        # A hostile plan name: once it added a shell line to sweep.sbatch (run by the task) and pushed
        # #SBATCH --array below a command, where sbatch ignored it. The array has its two tasks, the
        # merge its two shards, and nothing ran but diode.
        pwned = os.path.join(root, "PWNED")
        hostile_plan = os.path.join(root, "hostile-plan.json")
        with open(plan) as f:
            doc = json.load(f)
        doc["name"] = f"x\ntouch {pwned}\n#"
        with open(hostile_plan, "w") as f:
            json.dump(doc, f)
        hostile = os.path.join(root, "hostile.db")
        refused = diode_run(
            "sweep",
            "--slurm",
            "--shards",
            "2",
            "--backend",
            "cpu",
            "--plan",
            hostile_plan,
            "--db",
            hostile,
            "--partition",
            f"debug\ntouch {pwned}",
            expect=2,
        )
        assert "--partition" in refused and "#SBATCH" in refused and not os.path.exists(hostile + ".shards"), refused
        out = diode_run(
            "sweep", "--slurm", "--shards", "2", "--backend", "cpu", "--plan", hostile_plan, "--db", hostile
        )
        merge_job = out.split("submitted merge job ")[1].split(":")[0]
        wait_for("the hostile plan's merge", lambda: os.path.exists(hostile) and not queued(merge_job), timeout=150)
        assert not os.path.exists(pwned), "the plan's name ran as a command"
        assert query(hostile, "SELECT count(*) FROM runs WHERE status = 'finished'")[0][0] == 2
        assert sorted(measurement_keys(hostile)) == sorted(expected), "the hostile plan's sweep is not the plan's"
        print(
            f"ok: {len(merged)} measurements merged from 4 shards (shard 1 cancelled after {done_before} of "
            f"{planned} problems and resumed), identical to one run; {time.time() - t0:.1f} s",
            flush=True,
        )
        if gui_test:
            # The Sweep page submits the same plan to this cluster and follows it to the merge.
            t1 = time.time()
            r = subprocess.run(
                [gui_test, "submitsToSlurmAndFollowsTheMerge"],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=root,
                env={**env, "DIODE_SLURM_LIVE": "1", "DIODE_SLURM_PLAN": plan, "QT_QPA_PLATFORM": "offscreen"},
            )
            print(r.stdout[-3000:] + r.stderr[-2000:], flush=True)
            assert (
                r.returncode == 0 and "PASS   : TestSweepPage::submitsToSlurmAndFollowsTheMerge()" in r.stdout
            ), "the Sweep page's Slurm sweep failed"
            print(f"ok: the Sweep page submitted, followed and merged a sweep ({time.time() - t1:.1f} s)", flush=True)
        ok = True
    finally:
        cluster.stop()
        if ok:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for log in ("slurmctld.log", "slurmd.log"):
                print(f"--- {log}\n{tail(os.path.join(root, log))}")
            print(f"kept {root}")


if __name__ == "__main__":
    main()
