#include "modelpackage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace diode {

namespace {

constexpr char kMagic[8] = {'D', 'I', 'O', 'D', 'E', 'P', 'K', 'G'};
constexpr size_t kHeader = 8 + 4 + 4; // magic, format version, manifest length

uint32_t crc(const void *data, size_t n)
{
    return uint32_t(crc32(0L, static_cast<const Bytef *>(data), uInt(n)));
}

void putU32(std::string &out, uint32_t v)
{
    for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint32_t getU32(const std::string &in, size_t at)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(in[at + size_t(i)])) << (8 * i);
    return v;
}

struct TensorSpec {
    std::string name;
    std::vector<int64_t> shape;
};

std::vector<TensorSpec> expectedTensors(const std::vector<int> &sizes)
{
    std::vector<TensorSpec> t{{"input_mean", {sizes.front()}}, {"input_std", {sizes.front()}}};
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
        t.push_back({fmt::format("layer{}.weight", i), {sizes[i + 1], sizes[i]}});
        t.push_back({fmt::format("layer{}.bias", i), {sizes[i + 1]}});
    }
    return t;
}

} // namespace

std::string ModelPackage::toBytes(nlohmann::json manifest, const MlpWeights &w)
{
    manifest["format"] = "diode-package";
    manifest["format_version"] = kFormatVersion;
    manifest["feature_schema_version"] = FeatureSchema::kVersion;
    manifest["feature_names"] = FeatureSchema::names();
    manifest["architecture"] = {{"type", "mlp"}, {"layers", w.layerSizes}, {"activation", "relu"}};
    manifest["target"] = {{"transform", "log_ms"}, {"description", "network output is ln(milliseconds)"}};
    std::vector<const std::vector<float> *> data{&w.inputMean, &w.inputStd};
    for (size_t i = 0; i < w.weights.size(); ++i) {
        data.push_back(&w.weights[i]);
        data.push_back(&w.biases[i]);
    }
    const auto specs = expectedTensors(w.layerSizes);
    std::string blob;
    auto table = nlohmann::json::array();
    for (size_t i = 0; i < specs.size(); ++i) {
        const auto &v = *data[i];
        const size_t nbytes = v.size() * sizeof(float);
        table.push_back({{"name", specs[i].name}, {"shape", specs[i].shape}, {"dtype", "float32"},
                         {"offset", blob.size()}, {"nbytes", nbytes}, {"crc32", crc(v.data(), nbytes)}});
        blob.append(reinterpret_cast<const char *>(v.data()), nbytes); // little-endian hosts only (x86-64, aarch64)
    }
    manifest["tensors"] = table;
    manifest["data_bytes"] = blob.size();
    const std::string text = manifest.dump(2);
    std::string out(kMagic, 8);
    putU32(out, kFormatVersion);
    putU32(out, uint32_t(text.size()));
    out += text;
    putU32(out, crc(text.data(), text.size()));
    out += blob;
    return out;
}

void ModelPackage::save(const std::string &path, const nlohmann::json &manifest, const MlpWeights &weights)
{
    const std::string bytes = toBytes(manifest, weights);
    const std::string tmp = path + ".partial";
    {
        std::ofstream f(tmp, std::ios::binary);
        f.write(bytes.data(), std::streamsize(bytes.size()));
        if (!f) throw PackageError(fmt::format("cannot write '{}'", tmp));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw PackageError(fmt::format("cannot rename to '{}'", path));
}

ModelPackage ModelPackage::load(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) throw PackageError(fmt::format("cannot read package '{}'", path));
    std::ostringstream ss;
    ss << f.rdbuf();
    try {
        return fromBytes(ss.str());
    } catch (const PackageError &e) {
        throw PackageError(fmt::format("{}: {}", path, e.what()));
    }
}

ModelPackage ModelPackage::fromBytes(const std::string &in)
{
    if (in.size() < kHeader) throw PackageError(fmt::format("truncated: {} bytes is shorter than the header", in.size()));
    if (std::memcmp(in.data(), kMagic, 8) != 0) throw PackageError("not a diode model package (bad magic bytes)");
    const uint32_t version = getU32(in, 8);
    if (version > uint32_t(kFormatVersion))
        throw PackageError(fmt::format("package was written by package format {}; this build reads up to {}", version,
                                       kFormatVersion));
    const size_t mlen = getU32(in, 12);
    if (in.size() < kHeader + mlen + 4)
        throw PackageError(fmt::format("truncated: manifest needs {} bytes, file has {}", kHeader + mlen + 4, in.size()));
    const std::string text = in.substr(kHeader, mlen);
    if (crc(text.data(), text.size()) != getU32(in, kHeader + mlen)) throw PackageError("manifest checksum mismatch (corrupted file)");
    ModelPackage pkg;
    pkg.m_manifest = nlohmann::json::parse(text, nullptr, false);
    const auto &m = pkg.m_manifest;
    if (m.is_discarded() || !m.is_object()) throw PackageError("manifest is not a JSON object");
    try {
        if (m.value("feature_schema_version", 0) != FeatureSchema::kVersion)
            throw PackageError(fmt::format("package uses feature schema {}; this build computes schema {}",
                                           m.value("feature_schema_version", nlohmann::json()).dump(), FeatureSchema::kVersion));
        const auto &arch = m.at("architecture");
        if (arch.value("type", "") != "mlp" || arch.value("activation", "") != "relu")
            throw PackageError(fmt::format("unsupported architecture {}", arch.dump()));
        const auto sizes = arch.at("layers").get<std::vector<int>>();
        if (sizes.size() < 2 || sizes.front() != FeatureSchema::size() || sizes.back() != 1 ||
            std::any_of(sizes.begin(), sizes.end(), [](int s) { return s < 1 || s > 4096; }))
            throw PackageError(fmt::format("architecture layers [{}] do not fit {} features in and 1 output", fmt::join(sizes, ", "),
                                           FeatureSchema::size()));
        const size_t dataStart = kHeader + mlen + 4;
        const size_t dataBytes = m.at("data_bytes").get<size_t>();
        if (in.size() != dataStart + dataBytes)
            throw PackageError(fmt::format("truncated or padded: tensor data should be {} bytes, file has {}", dataBytes,
                                           in.size() - dataStart));
        const auto specs = expectedTensors(sizes);
        const auto &table = m.at("tensors");
        if (!table.is_array() || table.size() != specs.size())
            throw PackageError(fmt::format("manifest lists {} tensors; the architecture needs {}", table.size(), specs.size()));
        std::vector<std::vector<float>> tensors;
        for (size_t i = 0; i < specs.size(); ++i) {
            const auto &t = table[i];
            const auto name = t.at("name").get<std::string>();
            const auto shape = t.at("shape").get<std::vector<int64_t>>();
            if (name != specs[i].name || shape != specs[i].shape)
                throw PackageError(fmt::format("tensor '{}' has shape [{}]; the architecture needs '{}' [{}]", name,
                                               fmt::join(shape, ","), specs[i].name, fmt::join(specs[i].shape, ",")));
            int64_t count = 1;
            for (auto d : shape) count *= d;
            const size_t off = t.at("offset").get<size_t>(), nbytes = t.at("nbytes").get<size_t>();
            if (nbytes != size_t(count) * sizeof(float) || off > dataBytes || nbytes > dataBytes - off)
                throw PackageError(fmt::format("tensor '{}' lies outside the data or disagrees with its shape", name));
            const char *p = in.data() + dataStart + off;
            if (crc(p, nbytes) != t.at("crc32").get<uint32_t>())
                throw PackageError(fmt::format("checksum mismatch in tensor '{}' (corrupted file)", name));
            std::vector<float> v(static_cast<size_t>(count));
            std::memcpy(v.data(), p, nbytes);
            if (!std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); }))
                throw PackageError(fmt::format("tensor '{}' holds NaN or infinite values", name));
            tensors.push_back(std::move(v));
        }
        const int f = sizes.front();
        pkg.m_mean = Eigen::Map<const Eigen::RowVectorXf>(tensors[0].data(), f);
        Eigen::RowVectorXf sd = Eigen::Map<const Eigen::RowVectorXf>(tensors[1].data(), f);
        if ((sd.array() <= 0).any()) throw PackageError("tensor 'input_std' has values <= 0");
        pkg.m_invStd = sd.cwiseInverse();
        for (size_t l = 0; l + 1 < sizes.size(); ++l) {
            pkg.m_weights.push_back(Eigen::Map<const Matrix>(tensors[2 + 2 * l].data(), sizes[l + 1], sizes[l]).transpose());
            pkg.m_biases.push_back(Eigen::Map<const Eigen::RowVectorXf>(tensors[3 + 2 * l].data(), sizes[l + 1]));
        }
        const auto hw = m.value("hardware", nlohmann::json::object());
        pkg.m_hw = HardwareFeatures::forGpu(hw.value("gpu", ""), hw.value("sm_count", 0));
    } catch (const nlohmann::json::exception &e) {
        throw PackageError(fmt::format("manifest field missing or of the wrong type: {}", e.what()));
    }
    return pkg;
}

HardwareFeatures ModelPackage::hardware() const { return m_hw; }

Eigen::VectorXf ModelPackage::forward(const Eigen::Ref<const Matrix> &x) const
{
    Matrix h = (x.rowwise() - m_mean).array().rowwise() * m_invStd.array();
    for (size_t l = 0; l < m_weights.size(); ++l) {
        Matrix next = h * m_weights[l]; // stored transposed: [in, out]
        next.rowwise() += m_biases[l];
        if (l + 1 < m_weights.size()) next = next.cwiseMax(0.f);
        h = std::move(next);
    }
    return h.col(0);
}

std::vector<double> ModelPackage::predictMs(const GemmProblem &problem, const std::vector<KernelConfig> &candidates) const
{
    std::vector<float> feats;
    feats.reserve(candidates.size() * size_t(FeatureSchema::size()));
    for (size_t i = 0; i < candidates.size(); ++i) {
        FeatureSchema::check(candidates[i], fmt::format("candidates[{}]", i));
        FeatureSchema::compute(problem, candidates[i], m_hw, feats);
    }
    Eigen::Map<const Matrix> x(feats.data(), Eigen::Index(candidates.size()), FeatureSchema::size());
    const Eigen::VectorXf y = forward(x);
    std::vector<double> out(candidates.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = std::exp(double(y[Eigen::Index(i)]));
    return out;
}

} // namespace diode
