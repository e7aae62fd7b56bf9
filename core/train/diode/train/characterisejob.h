#pragma once

#include "diode/analysis/characterise.h"
#include "diode/sweep/kernelsweep.h"
#include "diode/sweep/sweeprunner.h"
#include "diode/sweep/sweepsession.h"
#include "diode/train/trainoptions.h"

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace diode {

class SweepSession;

/// What `diode characterise` (app/cli/characterisecommand.cpp) runs, and what a workbench page
/// would: from a start package (usually one transferred from another GPU), choose the pool
/// problems it is least sure of (characterise.h), measure them with one SweepSession under a
/// deadline (resumable: the same request again continues the run, measuring nothing twice),
/// fine-tune the package on them (or retrain), and compare both packages, plain torch.compile
/// and the best ATen kernel on held-out problems measured on this GPU. The face only turns
/// options into a request and prints or draws the callbacks and the result.
struct CharacteriseRequest {
    std::string package; ///< the start package (the face resolves the default: nearestStartPackage)
    std::string pool;    ///< store, problem lines or cpu plan (loadPool)
    std::string backend; ///< "inductor" or "cpu"
    std::string python;  ///< inductor: the worker's interpreter ("" = $DIODE_PYTHON or python3)
    std::string db;      ///< the store the sweep writes (created if missing; resumed if unfinished)
    std::string out;     ///< where the new package is kept
    std::string chosen;  ///< the chosen problems as problem JSON lines ("": <db>.chosen.jsonl)
    std::string heldout; ///< measured problems of this GPU (lines or store); "": keep some chosen aside
    double heldoutFraction = 0.2; ///< of the chosen problems, when `heldout` is not given
    SelectionOptions selection;
    double deadlineS = 0; ///< the sweep starts no problem after this many seconds (0: never)
    /// The sweep's workers a GPU (SweepSession::Request).
    int workersPerGpu = SweepSession::kAutoWorkers;
    std::vector<std::string> gpus; ///< the sweep's GPUs ("": the one the environment gives)
    bool retrain = false;          ///< train from random weights instead of fine-tuning the start package
    TrainOptions train;            ///< fine-tuning keeps the start package's member count
    /// Kernel and site lines of this GPU (docs/FORMATS.md) that the new package's decision models
    /// beside the GEMM kernel are trained on ("": <db>.kernels.jsonl). With the inductor backend
    /// and `kernelSweep`, the kernel sweep measures into it after the GEMM sweep, continuing a file
    /// already there; otherwise a file there is read as it is. Without lines the new package
    /// keeps the start package's decision models.
    std::string kernelLines;
    bool kernelSweep = true;                          ///< inductor: run the kernel sweep (kernelsweep.h)
    int kernelWorkers = KernelSweepRequest{}.workers; ///< the kernel sweep's cases compiled and timed at once
    /// inductor, with the kernel sweep: model steps (`diode demo --models` names, comma-separated) whose
    /// own kernels the step sweep then measures into `kernelLines`, each inside its step with the start
    /// package's GEMM and form decisions (KernelSweepRequest::steps); "": none
    std::string steps;
    bool force = false;     ///< keep (and install) the new package even when it is not better
    bool install = false;   ///< install a kept package for the plugin (modelinstall.h)
    std::string installDir; ///< "": pluginModelDirectory()

    /// Where the chosen problems are written: `chosen`, else beside the store.
    std::string chosenPath() const { return chosen.empty() ? db + ".chosen.jsonl" : chosen; }
    /// The learning rate unless one is asked for: fine-tuning starts from a trained network, a
    /// smaller step than training from random weights (`retrain`).
    static double defaultLearningRate(bool retrain) { return retrain ? TrainOptions{}.learningRate : 3e-4; }
};

/// The fewest problems a characterisation may choose: with `heldoutFraction` of them kept aside
/// (as the job rounds it; none when a held-out set is given), the rest must leave the trainer its
/// minimum (kMinTrainingProblems). Checked before the sweep, not after it.
size_t minimumCharacteriseCount(double heldoutFraction, bool heldOutGiven);

/// One row of the held-out table: top-1 efficiency (the fastest candidate's time over the
/// chosen kernel's) over the held-out problems where the selector has a time.
struct HeldOutRow {
    std::string selector;
    int64_t problems = 0;
    std::optional<double> mean, p10;
    std::string note; ///< why a row is n/a, or what it counts
};

struct CharacteriseResult {
    Pool pool;
    std::vector<Choice> chosen;
    std::set<std::string> heldOutLabels; ///< chosen problems kept out of training
    std::string startWhy;                ///< which start package, and that it fits the backend
    std::string sweepStatus;             ///< "finished", "deadline", "cancelled", "measured before"
    int64_t runId = 0;
    bool resumed = false;
    bool cancelled = false; ///< stopped by cancel(): nothing trained or kept; run again to continue
    /// "finished", "stopped (exit code N): ...", "not run: ..."; "" when not asked for.
    std::string kernelSweepStatus;
    std::string stepSweepStatus; ///< the same for the step sweep; "" when no steps were asked for
    /// Where the new package's decision models beside the GEMM kernel come from, with their
    /// figures held out by family when trained here.
    std::string decisions;
    int trainingProblems = 0;
    std::string heldOutSource;
    std::vector<HeldOutRow> table; ///< transferred, new, plain torch.compile, best ATen
    bool compared = false;         ///< both packages have held-out metrics
    bool better = false;
    double deltaMeanPoints = 0, deltaP10Points = 0; ///< new - transferred, in points of efficiency
    std::string verdict;                            ///< the one line
    std::string kept;                               ///< the package written, "" when dropped
    std::string installed;                          ///< its installed path, "" when not installed
};

class CharacteriseJob {
public:
    explicit CharacteriseJob(CharacteriseRequest request);
    ~CharacteriseJob();

    std::function<void(const std::string &)> status;
    /// After the selection, before anything is measured (the face prints --explain from it).
    std::function<void(const CharacteriseResult &)> selected;
    /// Once the sweep's run exists: whether it continues an earlier one, and the run's first line
    /// (SweepSession::runLine: its id, problems, database and worker layout).
    std::function<void(bool resumed, const std::string &runLine)> sweepStarted;
    std::function<void(const SweepProgress &)> sweepProgress;
    std::function<void(const EpochReport &)> epoch;

    /// Throws InvalidInput (bad input, named), PackageError, StoreError, BackendUnavailable,
    /// DataMixRefused, InstallError.
    CharacteriseResult run();
    /// From any thread, or a signal handler: the sweep stops within one configuration, training
    /// after its epoch; nothing is kept, and the same request again continues the sweep.
    void cancel();

private:
    CharacteriseRequest m_request;
    std::atomic<bool> m_cancel{false};
    std::atomic<SweepSession *> m_session{nullptr};
};

} // namespace diode
