#pragma once

#include "diode/sweep/sweepplan.h"
#include "diode/sweep/sweepsession.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace diode {

/// Slurm refused or failed a request (sbatch's own words, the script's path); the CLI exits 1.
class SlurmError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Where and how the jobs run (docs/FORMATS.md, "Slurm sweeps"): from a small JSON file
/// (`--slurm-config`), then the command line's options, which win.
struct SlurmOptions {
    std::string partition;
    std::string account;
    std::string timeLimit;          ///< sbatch --time, e.g. "02:00:00"
    std::string gres;               ///< per task; default "gpu:1" for the inductor backend, none for cpu
    int cpusPerTask = 0;            ///< 0: Slurm's default
    std::vector<std::string> setup; ///< shell lines before diode runs (module load ..., a venv)
    std::string launcher; ///< before the diode command (srun --container-image=..., apptainer exec IMG)
    std::vector<std::string> sbatchArgs; ///< more #SBATCH options, e.g. "--qos=high"
    std::string diode;                   ///< the diode the jobs run (default: this executable)

    /// Reads the JSON file; InvalidInput naming the file and field (unknown keys are refused).
    static SlurmOptions load(const std::string &path);
    /// Takes every field `o` sets.
    void overrideWith(const SlurmOptions &o);
};

/// A sweep as a Slurm array job: one task a shard (`diode sweep --shard i/n --resume` into
/// DB.shards/shard-i.db) and a merge job (`diode merge DB DB.shards/shard-*.db`) that runs after
/// the array succeeded. Everything it writes stays in DB.shards/: the frozen plan, the two
/// scripts, the tasks' output and `slurm.json` (the submissions).
class SlurmSweep {
public:
    struct Request {
        std::string db;
        std::string backend;
        SweepPlan plan;
        int64_t shards = 4;
        std::string python; ///< inductor: passed to each task's diode sweep
        /// Each task's workers on its GPU (diode sweep --workers-per-gpu); auto: chosen on the node.
        int workersPerGpu = SweepSession::kAutoWorkers;
        SlurmOptions slurm;
    };
    /// One line a shard (or the merge), for `diode sweep --status`.
    struct ShardState {
        std::string name;  ///< "shard 2/4" or "merge"
        std::string store; ///< "finished, 3/3 problems", "cancelled, 1/3 problems", "no store yet"
        std::string job;   ///< "job 12_2 RUNNING", "job 14 PENDING (Dependency)", "job 12_2 ended: TIMEOUT"
        bool finished = false; ///< a shard: its store's run finished; the merge: the merged store is complete
    };

    static std::string dirOf(const std::string &db) { return db + ".shards"; }

    /// The array's script and the merge's (SlurmScript: every value checked, quoted or escaped);
    /// InvalidInput naming the field of a value no script can carry. Writes nothing.
    struct Scripts {
        std::string sweep, merge;
    };
    static Scripts scripts(const Request &r);
    /// Writes the plan, the scripts and slurm.json into dirOf(db), submits the array, then the
    /// merge with --dependency=afterok on it. Returns what was submitted, one line each.
    /// InvalidInput for a bad request (shards out of 1..problems, a directory of another sweep);
    /// SlurmError when sbatch cannot run or refuses, with its message and the script's path.
    static std::vector<std::string> submit(const Request &r);
    /// Submits again the shards whose store holds no finished run (failed, timed out, cancelled,
    /// never started) and that are not queued or running, then a new merge job after them (the
    /// earlier merge, waiting on a failed array forever, is cancelled).
    static std::vector<std::string> resubmit(const std::string &db);
    /// Reads DB.shards/slurm.json as status() and resubmit() do: InvalidInput naming the field of a
    /// record that is not one (a shard count out of range, a job id that is not digits, a task that
    /// is no shard). Returns the number of shards.
    static int64_t checkRecord(const std::string &db);
    /// Each shard's store and queue state (squeue; sacct where accounting is on), then the merge.
    static std::vector<ShardState> status(const std::string &db, std::vector<std::string> *notes = nullptr);
};

} // namespace diode
