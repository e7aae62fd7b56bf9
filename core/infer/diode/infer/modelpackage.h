#pragma once

#include "diode/infer/features.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/measurement.h"

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace diode {

/// A package that cannot be used: truncated, corrupted, of a newer schema, inconsistent. The
/// message names the fault.
class PackageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The trained MLP as plain arrays: what the trainer hands to the writer and the reader checks.
struct MlpWeights {
    std::vector<int> layerSizes;             ///< input width, hidden widths..., 1
    std::vector<std::vector<float>> weights; ///< per layer, row-major [out, in]
    std::vector<std::vector<float>> biases;  ///< per layer, [out]
    std::vector<float> inputMean, inputStd;  ///< feature normalisation, [input width]
};

/// A `.diode` model package (docs/PACKAGE.md): a JSON manifest and raw float32 tensors with
/// CRC-32 checksums, in one file. Reading it never executes code. Inference runs on Eigen, so
/// the plugin needs neither LibTorch nor Qt.
class ModelPackage {
public:
    /// 1: one network; 2: an ensemble (architecture.members > 1, tensors prefixed memberN.).
    /// Single networks are still written as format 1, so older readers keep reading them.
    static constexpr int kFormatVersion = 2;
    /// A package file larger than this is refused before it is read (docs/PACKAGE.md, Limits):
    /// the shipped model is 0.25 MB; /dev/zero or a stray multi-gigabyte file is not a package.
    static constexpr uint64_t kMaxFileBytes = 256ull << 20;
    /// What a manifest may hold (docs/PACKAGE.md): its length is checked against maxBytes from the
    /// header, before the file is read on; its values are counted while it is parsed. The largest
    /// package diode writes (64 members of 16 layer sizes: 2,048 tensors) has a manifest of about
    /// 0.4 MB and 18,000 values; the shipped ones 23 kB and 865. The decision tables
    /// (decisionmodel.h: a few hundred measured kernels, each with its measured configurations)
    /// add up to some 150,000 values.
    static constexpr JsonLimits kManifestLimits{64, 4ull << 20, false, 400'000};

    /// Throws PackageError naming the fault.
    static ModelPackage load(const std::string &path);
    static ModelPackage fromBytes(const std::string &bytes);
    /// `manifest` holds everything but the architecture, normalisation and tensor table, which
    /// are written from `members` (one network, or an ensemble whose ln-time outputs are averaged;
    /// every member has the same layer sizes).
    static std::string toBytes(nlohmann::json manifest, const std::vector<MlpWeights> &members);
    static std::string toBytes(const nlohmann::json &manifest, const MlpWeights &weights) {
        return toBytes(manifest, std::vector<MlpWeights>{weights});
    }
    static void save(const std::string &path, const nlohmann::json &manifest,
                     const std::vector<MlpWeights> &members);
    /// The package `bytes` (a readable one) with `manifest` in place of its manifest, the tensor
    /// data byte for byte as it was: for fields written after training (`diode calibrate`'s
    /// selection_policy). The tensor table and data_bytes must be the old ones; throws PackageError
    /// if the result does not read back.
    static std::string withManifest(const std::string &bytes, const nlohmann::json &manifest);
    /// Writes `bytes` to `path` through a temporary file; refuses shipped paths.
    static void writeFile(const std::string &path, const std::string &bytes);

    const nlohmann::json &manifest() const { return m_manifest; }
    HardwareFeatures hardware() const;
    /// The feature schema the package was trained with (manifest `feature_schema_version`); its
    /// features are the ones computed for it.
    int featureSchema() const { return m_schema; }
    /// Whether the package's feature schema has an input for `op` (a package older than schema 3
    /// cannot score baddbmm; predictMs throws InvalidInput for it).
    bool scoresOp(GemmOp op) const { return FeatureSchema::knowsOp(op, m_schema); }
    /// The timing method of the times the model was trained on (manifest `timing_method`).
    TimingMethod timingMethod() const { return m_timingMethod; }

    /// Predicted milliseconds for each candidate of `problem`, in order. Throws InvalidInput
    /// for a candidate the feature schema cannot describe. Thread-safe; scratch memory is per thread.
    std::vector<double> predictMs(const GemmProblem &problem,
                                  const std::vector<KernelConfig> &candidates) const;
    /// The same into `out` (resized to the candidates), so a caller ranking many problems
    /// allocates nothing per call.
    void predictMs(const GemmProblem &problem, const std::vector<KernelConfig> &candidates,
                   std::vector<double> &out) const;
    /// The problem flag (FeatureSchema::problemFlags) that `problem` sets to a value no training
    /// problem had, as "a_transposed = 1", or "" when the training data covered every flag of it.
    /// Read from the normalisation: a feature that never varied in training has standard
    /// deviation exactly 1 (trainer.cpp) and its one value as mean, which a 0/1 flag that did
    /// vary (deviation at most 0.5) never has. A prediction past such a flag extrapolates along
    /// an input the network never saw; the plugin keeps plain torch.compile's kernel there.
    std::string unseenProblemFeature(const GemmProblem &problem) const;
    int members() const { return int(m_members.size()); }
    /// A package of network `m` alone (0 <= m < members()), for reading how far the ensemble's
    /// networks disagree (active selection, characterise.h); the ensemble's own predictions never
    /// go through it.
    ModelPackage member(int m) const;
    /// The raw network output (log milliseconds; the ensemble's mean) for already computed features, [rows x
    /// width]. Throws InvalidInput when the width is not the feature schema's.
    Eigen::VectorXf
    forward(const Eigen::Ref<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> &x)
        const;
    /// The same from raw rows: `rows` rows of `FeatureSchema::size(featureSchema())` floats `stride` apart,
    /// into `y`.
    void forward(const float *x, long rows, long stride, float *y) const;

private:
    /// One dense layer prepared for the kernel in modelpackage.cpp: weights transposed to
    /// [in, outPadded] (outputs contiguous, zero-padded to a multiple of 64), the input
    /// normalisation folded into layer 0 at load time.
    struct Layer {
        int in = 0, out = 0, outPadded = 0;
        std::vector<float> weightsT; ///< [in, outPadded]; for the output layer (out = 1) just [in]
        std::vector<float> bias;     ///< [outPadded]
    };
    /// Layer `w` [out, in], `b` [out] in the kernel's layout; with `mean`/`sd`, the input
    /// normalisation folded in (layer 0). Throws PackageError if the folding overflows.
    static Layer foldLayer(size_t index, int in, int out, const std::vector<float> &w,
                           const std::vector<float> &b, const std::vector<float> *mean,
                           const std::vector<float> *sd);

    nlohmann::json m_manifest;
    std::vector<std::vector<Layer>> m_members; ///< the layers of each network
    /// (feature index, the one value training saw) of every problem flag some member never varied.
    std::vector<std::pair<int, float>> m_constantFlags;
    int m_maxWidth = 0; ///< widest padded hidden layer: the scratch row length
    HardwareFeatures m_hw;
    int m_schema = kFeatureSchemaVersion;
    TimingMethod m_timingMethod = TimingMethod::InductorAutotune;
};

/// The manifest's `timing_method`; packages written before timing methods were recorded were
/// trained on Inductor's autotune times. Throws PackageError for a method this build does not know.
TimingMethod packageTimingMethod(const nlohmann::json &manifest);

/// A manifest field at `at` as one line of text to show: "n/a" where it is missing or null; a string
/// escaped (printable.h: a package is a file from anywhere); a list joined, numbers by "-" (layer
/// sizes), else by ", "; any other value as compact JSON. What `diode inspect` and the summaries of a
/// package's models show.
std::string manifestText(const nlohmann::json &manifest, const nlohmann::json::json_pointer &at);

} // namespace diode
