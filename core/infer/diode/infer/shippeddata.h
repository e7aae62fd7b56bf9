#pragma once

#include <string>
#include <string_view>

/// The files shipped with the workbench, named once. Paths are relative to the source tree or
/// the installed data directory (the workbench finds them with shippedFile()).
namespace diode::shipped {

/// The data the workbench opens by default: every candidate timed in CUDA graphs (the truth the
/// plugin's packages learn from). Its model is not named here: it is the plugin's own default for
/// the data's GPU (packagechoice.h), among the packages under kModelDirectory.
inline constexpr std::string_view kDataset = "trained_models/h200/h200-ingraph.db";
inline constexpr std::string_view kModelDirectory = "trained_models";
/// The data of two turns ago, kept to compare with: Inductor's own autotune timings, and the v2
/// model trained on them.
inline constexpr std::string_view kEarlierDataset = "trained_models/h200/h200-dataset.db";
inline constexpr std::string_view kEarlierDatasetAbout =
    "Earlier data: 624 H200 problems timed by Inductor's own autotune benchmark (not in CUDA graphs), "
    "which the v2 model (h200-gemm-mlp-v2) learnt from";
inline constexpr std::string_view kDemoResult = "trained_models/h200/h200-demo.json";
/// The model steps (`diode demo --models` cases) measured beside the shipped demo result; the Demo
/// page shows them with it.
inline constexpr std::string_view kDemoModelCases = "trained_models/h200/h200-models-cases.jsonl";
inline constexpr std::string_view kDemoProblems = "resources/demo/h200-ingraph-heldout-gemms.jsonl";
inline constexpr std::string_view kCpuPlan = "resources/plans/cpu-smoke.json";

/// A shipped database and the file of held-out problems kept beside it (file names).
struct HeldOutFile {
    std::string_view database, heldOut;
};
inline constexpr HeldOutFile kHeldOutFiles[] = {
    {"h200-dataset.db", "h200-heldout.jsonl"},
    {"h200-ingraph.db", "h200-ingraph-heldout.jsonl"},
};

/// The name of the held-out problem file that belongs beside a database file: the shipped
/// pairing, else "<stem>-heldout.jsonl".
inline std::string heldOutFileName(std::string_view databaseFileName) {
    for (const auto &f : kHeldOutFiles)
        if (f.database == databaseFileName)
            return std::string(f.heldOut);
    const auto dot = databaseFileName.rfind('.');
    return std::string(databaseFileName.substr(0, dot)) + "-heldout.jsonl";
}

/// Shipped data is only read, however it is opened: a file (or a file to be made) inside the
/// `trained_models/` folder of the source tree this build came from or of the installed data
/// directory. The one definition of "shipped"; Store refuses to write such a database and the
/// package writer such a package. Copies elsewhere are the user's own and may be written.
bool isShippedPath(const std::string &path);
/// The shipped folder `path` lies in ("" when it is not shipped), for messages.
std::string shippedFolderOf(const std::string &path);
/// Throws InvalidInput when `path` is shipped, naming the folder and what to do instead; `what`
/// says what was to be written there ("database", "package").
void refuseWritingShipped(const std::string &path, std::string_view what);

} // namespace diode::shipped
