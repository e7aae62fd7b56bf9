#include "modelpackage.h"

#include "diode/infer/atomicfile.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/printable.h"
#include "diode/infer/shippeddata.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace diode {

namespace {

constexpr char kMagic[8] = {'D', 'I', 'O', 'D', 'E', 'P', 'K', 'G'};
constexpr size_t kHeader = 8 + 4 + 4; // magic, format version, manifest length

// A manifest as a package holds it: compact JSON, since the decision tables (decisionmodel.h) are
// thousands of numbers that indentation would quadruple.
std::string manifestText(const nlohmann::json &manifest) {
    return manifest.dump();
}

uint32_t crc(const void *data, size_t n) {
    return uint32_t(crc32(0L, static_cast<const Bytef *>(data), uInt(n)));
}

void putU32(std::string &out, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(char((v >> (8 * i)) & 0xff));
}

uint32_t getU32(std::string_view in, size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= uint32_t(uint8_t(in[at + size_t(i)])) << (8 * i);
    return v;
}

// The header's manifest length, refused when over the limit: checked on the first 16 bytes, so a
// hostile package is refused before the rest of it is read or parsed.
size_t manifestLength(std::string_view header) {
    const size_t mlen = getU32(header, 12);
    if (mlen > ModelPackage::kManifestLimits.maxBytes)
        throw PackageError(fmt::format("manifest is {} bytes; a package's manifest may be at most {} bytes",
                                       mlen, ModelPackage::kManifestLimits.maxBytes));
    return mlen;
}

struct TensorSpec {
    std::string name;
    std::vector<int64_t> shape;
};

// Tensor names and shapes for `members` networks of `sizes`: one network has the format-1
// names (input_mean, input_std, layer{i}.weight, layer{i}.bias), an ensemble prefixes each
// member's with member{m}.
// Limits on what a package may declare (docs/FORMATS.md, Limits).
constexpr int kMaxLayerSizes = 16; // input, hidden layers, output
constexpr int64_t kMaxLayerWidth = 4096;
constexpr float kMaxWeight = 1e4f; // trained weights are O(1); 3e38 would overflow every sum
constexpr float kMaxInputMean = 1e9f;
constexpr float kMaxInputStd = 1e9f;
constexpr float kMinInputStd = 1e-6f;

/// An integer manifest field in lo..hi; anything else (a float, 2^32+6) is refused naming it.
int64_t manifestInt(const nlohmann::json &v, const std::string &field, int64_t lo, int64_t hi) {
    const bool ok = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) &&
                    v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!ok)
        throw PackageError(
            fmt::format("manifest field '{}' is {}; expected an integer in {}..{}", field, v.dump(), lo, hi));
    return v.get<int64_t>();
}

std::vector<TensorSpec> expectedTensors(const std::vector<int> &sizes, int members) {
    std::vector<TensorSpec> t;
    for (int m = 0; m < members; ++m) {
        const std::string pre = members > 1 ? fmt::format("member{}.", m) : std::string();
        t.push_back({pre + "input_mean", {sizes.front()}});
        t.push_back({pre + "input_std", {sizes.front()}});
        for (size_t i = 0; i + 1 < sizes.size(); ++i) {
            t.push_back({fmt::format("{}layer{}.weight", pre, i), {sizes[i + 1], sizes[i]}});
            t.push_back({fmt::format("{}layer{}.bias", pre, i), {sizes[i + 1]}});
        }
    }
    return t;
}

// The dense layers, compiled for SSE2 (any x86-64), AVX2+FMA and AVX-512, picked at run time:
// a portable build must still rank fast on the machine it lands on. See mlpkernel.inc.
constexpr int kPad = 64; // hidden widths are padded to this: a multiple of every kernel's output tile

using DenseFn = void (*)(const float *, long, long, int, const float *, int, const float *, float *, long,
                         bool);
using DotFn = void (*)(const float *, long, long, int, const float *, float, float *);
struct Kernels {
    DenseFn dense;
    DotFn dot;
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DIODE_X86_DISPATCH 1
#else
#define DIODE_X86_DISPATCH 0
#endif

namespace generic {
#if DIODE_X86_DISPATCH
using V = __m128;
#else
typedef float V __attribute__((vector_size(16)));
#endif
constexpr int kLanes = 4, kCols = 4, kRows = 2;
inline __attribute__((always_inline)) V madd(V a, V b, V c) {
    return a * b + c;
}
#if DIODE_X86_DISPATCH
inline __attribute__((always_inline)) V splat(float x) {
    return _mm_set1_ps(x);
}
#else
inline __attribute__((always_inline)) V splat(float x) {
    return V{} + x;
}
#endif
#include "mlpkernel.inc"
} // namespace generic

#if DIODE_X86_DISPATCH
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
using V = __m256;
constexpr int kLanes = 8, kCols = 2, kRows = 6;
inline __attribute__((always_inline)) V madd(V a, V b, V c) {
    return _mm256_fmadd_ps(a, b, c);
}
inline __attribute__((always_inline)) V splat(float x) {
    return _mm256_set1_ps(x);
}
#include "mlpkernel.inc"
} // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx512f,fma"))), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
#endif
namespace avx512 {
using V = __m512;
constexpr int kLanes = 16, kCols = 4, kRows = 6;
inline __attribute__((always_inline)) V madd(V a, V b, V c) {
    return _mm512_fmadd_ps(a, b, c);
}
inline __attribute__((always_inline)) V splat(float x) {
    return _mm512_set1_ps(x);
}
#include "mlpkernel.inc"
} // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

// DIODE_KERNEL=generic|avx2 caps the choice (to compare kernels, or to rule one out).
const Kernels &kernels() {
    static const Kernels k = [] {
        const char *cap = std::getenv("DIODE_KERNEL");
        const std::string_view want = cap ? cap : "";
#if DIODE_X86_DISPATCH
        __builtin_cpu_init();
        const bool avx2 =
            want != "generic" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        if (avx2 && want != "avx2" && __builtin_cpu_supports("avx512f"))
            return Kernels{avx512::dense, avx512::dot};
        if (avx2)
            return Kernels{avx2::dense, avx2::dot};
#endif
        return Kernels{generic::dense, generic::dot};
    }();
    return k;
}

} // namespace

std::string ModelPackage::toBytes(nlohmann::json manifest, const std::vector<MlpWeights> &members) {
    if (members.empty())
        throw PackageError("a package needs at least one network");
    for (const auto &w : members)
        if (w.layerSizes != members.front().layerSizes)
            throw PackageError("ensemble members must have the same layer sizes");
    const int n = int(members.size());
    const uint32_t version = n > 1 ? 2u : 1u;
    manifest["format"] = "diode-package";
    manifest["format_version"] = version;
    manifest["feature_schema_version"] = FeatureSchema::kVersion;
    manifest["feature_names"] = FeatureSchema::names();
    manifest["architecture"] = {
        {"type", "mlp"}, {"layers", members.front().layerSizes}, {"activation", "relu"}};
    if (n > 1) {
        manifest["architecture"]["members"] = n;
        manifest["architecture"]["combine"] = "mean of ln(ms)";
    }
    manifest["target"] = {{"transform", "log_ms"}, {"description", "network output is ln(milliseconds)"}};
    std::vector<const std::vector<float> *> data;
    for (const auto &w : members) {
        data.push_back(&w.inputMean);
        data.push_back(&w.inputStd);
        for (size_t i = 0; i < w.weights.size(); ++i) {
            data.push_back(&w.weights[i]);
            data.push_back(&w.biases[i]);
        }
    }
    const auto specs = expectedTensors(members.front().layerSizes, n);
    if (data.size() != specs.size())
        throw PackageError("network weights do not match their layer sizes");
    std::string blob;
    auto table = nlohmann::json::array();
    for (size_t i = 0; i < specs.size(); ++i) {
        const auto &v = *data[i];
        const size_t nbytes = v.size() * sizeof(float);
        table.push_back({{"name", specs[i].name},
                         {"shape", specs[i].shape},
                         {"dtype", "float32"},
                         {"offset", blob.size()},
                         {"nbytes", nbytes},
                         {"crc32", crc(v.data(), nbytes)}});
        blob.append(reinterpret_cast<const char *>(v.data()),
                    nbytes); // little-endian hosts only (x86-64, aarch64)
    }
    manifest["tensors"] = table;
    manifest["data_bytes"] = blob.size();
    const std::string text = manifestText(manifest);
    if (text.size() > kManifestLimits.maxBytes) // never write what no reader would read
        throw PackageError(
            fmt::format("manifest would be {} bytes; a package's manifest may be at most {} bytes",
                        text.size(), kManifestLimits.maxBytes));
    std::string out(kMagic, 8);
    putU32(out, version);
    putU32(out, uint32_t(text.size()));
    out += text;
    putU32(out, crc(text.data(), text.size()));
    out += blob;
    return out;
}

void ModelPackage::save(const std::string &path, const nlohmann::json &manifest,
                        const std::vector<MlpWeights> &members) {
    writeFile(path, toBytes(manifest, members));
}

std::string ModelPackage::withManifest(const std::string &bytes, const nlohmann::json &manifest) {
    const ModelPackage old = fromBytes(bytes); // refuses what is not a readable package
    for (const char *key : {"tensors", "data_bytes", "format_version", "architecture"})
        if (manifest.value(key, nlohmann::json()) != old.manifest().value(key, nlohmann::json()))
            throw PackageError(fmt::format("a new manifest must keep '{}' as the package has it", key));
    const size_t mlen = manifestLength(bytes);
    const std::string text = manifestText(manifest);
    if (text.size() > kManifestLimits.maxBytes)
        throw PackageError(
            fmt::format("manifest would be {} bytes; a package's manifest may be at most {} bytes",
                        text.size(), kManifestLimits.maxBytes));
    std::string out = bytes.substr(0, 12);
    putU32(out, uint32_t(text.size()));
    out += text;
    putU32(out, crc(text.data(), text.size()));
    out += bytes.substr(kHeader + mlen + 4);
    fromBytes(out); // reads back, checksums and all
    return out;
}

void ModelPackage::writeFile(const std::string &path, const std::string &bytes) {
    shipped::refuseWritingShipped(path, "package");
    writeFileAtomically<PackageError>(
        path, [&](std::ostream &os) { os.write(bytes.data(), std::streamsize(bytes.size())); }, true);
}

ModelPackage ModelPackage::load(const std::string &path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (!ec && fs::is_directory(st))
        throw PackageError(fmt::format("{}: is a directory, not a package", path));
    if (!ec && fs::exists(st) && !fs::is_regular_file(st))
        throw PackageError(fmt::format("{}: not a regular file; a package is a file", path));
    if (const auto size = fs::file_size(path, ec); !ec && size > kMaxFileBytes)
        throw PackageError(
            fmt::format("{}: {} bytes; a package may be at most {} bytes", path, size, kMaxFileBytes));
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw PackageError(fmt::format("cannot read package '{}'", path));
    try {
        // The header first: a manifest over its limit is refused before the rest is read.
        std::string header(kHeader, '\0');
        f.read(header.data(), std::streamsize(kHeader));
        header.resize(size_t(f.gcount()));
        if (header.size() == kHeader && std::memcmp(header.data(), kMagic, 8) == 0)
            manifestLength(header);
        std::ostringstream ss;
        ss << header << f.rdbuf();
        return fromBytes(ss.str());
    } catch (const PackageError &e) {
        throw PackageError(fmt::format("{}: {}", path, e.what()));
    }
}

ModelPackage ModelPackage::fromBytes(const std::string &in) {
    if (in.size() < kHeader)
        throw PackageError(fmt::format("truncated: {} bytes is shorter than the header", in.size()));
    if (std::memcmp(in.data(), kMagic, 8) != 0)
        throw PackageError("not a diode model package (bad magic bytes)");
    const uint32_t version = getU32(in, 8);
    if (version < 1)
        throw PackageError(
            fmt::format("package format {} is not one diode writes; this build reads formats 1..{}", version,
                        kFormatVersion));
    if (version > uint32_t(kFormatVersion))
        throw PackageError(fmt::format("package was written by package format {}; this build reads up to {}",
                                       version, kFormatVersion));
    const size_t mlen = manifestLength(in);
    if (in.size() < kHeader + mlen + 4)
        throw PackageError(
            fmt::format("truncated: manifest needs {} bytes, file has {}", kHeader + mlen + 4, in.size()));
    const std::string text = in.substr(kHeader, mlen);
    if (crc(text.data(), text.size()) != getU32(in, kHeader + mlen))
        throw PackageError("manifest checksum mismatch (corrupted file)");
    ModelPackage pkg;
    try {
        pkg.m_manifest = parseJsonBounded(text, "manifest", kManifestLimits);
    } catch (const InvalidInput &e) {
        throw PackageError(e.what());
    }
    const auto &m = pkg.m_manifest;
    if (!m.is_object())
        throw PackageError("manifest is not a JSON object");
    try {
        const auto schema = m.value("feature_schema_version", nlohmann::json());
        if (!schema.is_number_integer() || schema.get<int64_t>() < kOldestFeatureSchemaVersion ||
            schema.get<int64_t>() > kFeatureSchemaVersion)
            throw PackageError(
                fmt::format("package uses feature schema {}; this build reads schemas {} to {}",
                            schema.dump(), kOldestFeatureSchemaVersion, kFeatureSchemaVersion));
        pkg.m_schema = schema.get<int>();
        const auto &arch = m.at("architecture");
        if (arch.value("type", "") != "mlp" || arch.value("activation", "") != "relu")
            throw PackageError(fmt::format("unsupported architecture {}", arch.dump()));
        // Counts and sizes from the manifest are checked against the limits
        // (docs/PACKAGE.md, "What the reader checks, and says") before anything is allocated from
        // them, each tensor against the bytes the file holds;
        // an integer beyond int range is refused, never truncated (2^32+64 is not 64).
        const auto &layersJ = arch.at("layers");
        if (!layersJ.is_array() || layersJ.size() < 2 || layersJ.size() > size_t(kMaxLayerSizes))
            throw PackageError(
                fmt::format("manifest field 'architecture.layers' lists {} sizes; a package may list 2..{}",
                            layersJ.is_array() ? layersJ.size() : 0, kMaxLayerSizes));
        std::vector<int> sizes;
        for (size_t i = 0; i < layersJ.size(); ++i)
            sizes.push_back(
                int(manifestInt(layersJ[i], fmt::format("architecture.layers[{}]", i), 1, kMaxLayerWidth)));
        if (sizes.front() != FeatureSchema::size(pkg.m_schema) || sizes.back() != 1)
            throw PackageError(fmt::format(
                "architecture layers [{}] do not fit {} features in (feature schema {}) and 1 output",
                fmt::join(sizes, ", "), FeatureSchema::size(pkg.m_schema), pkg.m_schema));
        const auto membersJ = arch.value("members", nlohmann::json(1));
        if (!membersJ.is_number_integer() ||
            (membersJ.is_number_unsigned() && membersJ.get<uint64_t>() > 64) || membersJ.get<int64_t>() < 1 ||
            membersJ.get<int64_t>() > 64)
            throw PackageError(
                fmt::format("architecture members {} is out of range (1..64)", membersJ.dump()));
        const int members = membersJ.get<int>();
        if ((members > 1) != (version >= 2))
            throw PackageError(
                fmt::format("package format {} cannot hold {} member networks", version, members));
        const size_t dataStart = kHeader + mlen + 4;
        const size_t dataBytes = m.at("data_bytes").get<size_t>();
        if (in.size() != dataStart + dataBytes)
            throw PackageError(fmt::format("truncated or padded: tensor data should be {} bytes, file has {}",
                                           dataBytes, in.size() - dataStart));
        const auto specs = expectedTensors(sizes, members);
        const auto &table = m.at("tensors");
        if (!table.is_array() || table.size() != specs.size())
            throw PackageError(fmt::format("manifest lists {} tensors; the architecture needs {}",
                                           table.size(), specs.size()));
        std::vector<std::vector<float>> tensors;
        for (size_t i = 0; i < specs.size(); ++i) {
            const auto &t = table[i];
            const auto name = t.at("name").get<std::string>();
            const auto shape = t.at("shape").get<std::vector<int64_t>>();
            if (name != specs[i].name || shape != specs[i].shape)
                throw PackageError(fmt::format("tensor '{}' has shape [{}]; the architecture needs '{}' [{}]",
                                               name, fmt::join(shape, ","), specs[i].name,
                                               fmt::join(specs[i].shape, ",")));
            int64_t count = 1;
            for (auto d : shape)
                count *= d;
            const size_t off = t.at("offset").get<size_t>(), nbytes = t.at("nbytes").get<size_t>();
            if (nbytes != size_t(count) * sizeof(float) || off > dataBytes || nbytes > dataBytes - off)
                throw PackageError(
                    fmt::format("tensor '{}' lies outside the data or disagrees with its shape", name));
            const char *p = in.data() + dataStart + off;
            if (crc(p, nbytes) != t.at("crc32").get<uint32_t>())
                throw PackageError(fmt::format("checksum mismatch in tensor '{}' (corrupted file)", name));
            std::vector<float> v(static_cast<size_t>(count));
            std::memcpy(v.data(), p, nbytes);
            // Finite is not enough: 3e38 overflows the first sum and every prediction is NaN.
            const size_t inMember = i % (2 + 2 * (sizes.size() - 1));
            const float bound = inMember == 0 ? kMaxInputMean : inMember == 1 ? kMaxInputStd : kMaxWeight;
            if (!std::all_of(v.begin(), v.end(),
                             [&](float x) { return std::isfinite(x) && std::abs(x) <= bound; })) {
                if (inMember < 2)
                    throw PackageError(fmt::format(
                        "tensor '{}' holds NaN or infinite values, or values beyond ±{:g}", name, bound));
                throw PackageError(fmt::format(
                    "non-finite or out-of-range weight in layer {}: tensor '{}' holds NaN or infinite "
                    "values, or values beyond ±{:g}",
                    (inMember - 2) / 2, name, bound));
            }
            tensors.push_back(std::move(v));
        }
        const size_t perMember = 2 + 2 * (sizes.size() - 1);
        for (int mi = 0; mi < members; ++mi) {
            const size_t base = size_t(mi) * perMember;
            const auto &mean = tensors[base], &sd = tensors[base + 1];
            if (std::any_of(sd.begin(), sd.end(), [](float v) { return v < kMinInputStd; }))
                throw PackageError(
                    fmt::format("tensor '{}' has values below {:g}", specs[base + 1].name, kMinInputStd));
            for (int f : FeatureSchema::problemFlags(pkg.m_schema))
                if (size_t(f) < sd.size() && sd[f] == 1.0f &&
                    std::none_of(pkg.m_constantFlags.begin(), pkg.m_constantFlags.end(),
                                 [f](const auto &c) { return c.first == f; }))
                    pkg.m_constantFlags.emplace_back(f, mean[f]);
            std::vector<Layer> layers;
            for (size_t l = 0; l + 1 < sizes.size(); ++l) {
                layers.push_back(foldLayer(l, sizes[l], sizes[l + 1], tensors[base + 2 + 2 * l],
                                           tensors[base + 3 + 2 * l], l == 0 ? &mean : nullptr,
                                           l == 0 ? &sd : nullptr));
                if (l + 2 < sizes.size())
                    pkg.m_maxWidth = std::max(pkg.m_maxWidth, layers.back().outPadded);
            }
            pkg.m_members.push_back(std::move(layers));
        }
        const auto hw = m.value("hardware", nlohmann::json::object());
        // The features of the schema the package was trained with (features.h).
        pkg.m_hw = HardwareFeatures::forGpu(hw.value("gpu", ""), hw.value("sm_count", 0), pkg.m_schema);
        pkg.m_timingMethod = packageTimingMethod(m);
    } catch (const nlohmann::json::exception &e) {
        throw PackageError(fmt::format("manifest field missing or of the wrong type: {}", e.what()));
    }
    return pkg;
}

TimingMethod packageTimingMethod(const nlohmann::json &manifest) {
    auto it = manifest.find("timing_method");
    if (it == manifest.end() || it->is_null())
        return TimingMethod::InductorAutotune; // packages before methods
    auto m = it->is_string() ? parseTimingMethod(it->get<std::string>()) : std::nullopt;
    if (!m)
        throw PackageError(fmt::format("manifest field 'timing_method' is {}; this build knows {}",
                                       it->dump(), timingMethodNames()));
    return *m;
}

ModelPackage::Layer ModelPackage::foldLayer(size_t index, int in, int out, const std::vector<float> &w,
                                            const std::vector<float> &b, const std::vector<float> *mean,
                                            const std::vector<float> *sd) {
    Layer layer; // w: [out, in] row-major
    layer.in = in;
    layer.out = out;
    layer.outPadded = out == 1 ? 1 : (out + kPad - 1) / kPad * kPad;
    layer.weightsT.assign(size_t(in) * size_t(layer.outPadded), 0.f);
    layer.bias.assign(size_t(layer.outPadded), 0.f);
    for (int o = 0; o < out; ++o) {
        // Layer 0 sees raw features: W (x - mean) / sd = (W / sd) x - (W / sd) mean.
        double shift = 0;
        for (int i = 0; i < in; ++i) {
            const float wi =
                sd ? float(double(w[size_t(o * in + i)]) / double((*sd)[size_t(i)])) : w[size_t(o * in + i)];
            layer.weightsT[size_t(i) * size_t(layer.outPadded) + size_t(o)] = wi;
            if (mean)
                shift += double(wi) * double((*mean)[size_t(i)]);
        }
        layer.bias[size_t(o)] = float(double(b[size_t(o)]) - shift);
    }
    auto finite = [](const std::vector<float> &v) {
        return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
    };
    if (!finite(layer.weightsT) || !finite(layer.bias))
        throw PackageError(
            fmt::format("layer {} overflows once the input normalisation is folded in", index));
    return layer;
}

ModelPackage ModelPackage::member(int m) const {
    if (m < 0 || m >= members())
        throw InvalidInput(fmt::format("member {}: the package has {} network(s)", m, members()));
    ModelPackage one;
    one.m_manifest = m_manifest;
    one.m_members = {m_members[size_t(m)]};
    one.m_constantFlags = m_constantFlags;
    one.m_maxWidth = m_maxWidth;
    one.m_hw = m_hw;
    one.m_timingMethod = m_timingMethod;
    return one;
}

HardwareFeatures ModelPackage::hardware() const {
    return m_hw;
}

void ModelPackage::forward(const float *x, long rows, long stride, float *y) const {
    if (rows <= 0)
        return;
    const Kernels &k = kernels();
    thread_local std::vector<float> bufA, bufB, member;
    const long ld = m_maxWidth;
    const size_t need = size_t(rows) * size_t(ld);
    if (bufA.size() < need)
        bufA.resize(need), bufB.resize(need);
    if (m_members.size() > 1 && member.size() < size_t(rows))
        member.resize(size_t(rows));
    for (size_t mi = 0; mi < m_members.size(); ++mi) {
        const auto &layers = m_members[mi];
        const float *in = x;
        long ldIn = stride;
        float *out = bufA.data(), *spare = bufB.data();
        for (size_t l = 0; l + 1 < layers.size(); ++l) {
            const Layer &L = layers[l];
            k.dense(in, ldIn, rows, L.in, L.weightsT.data(), L.outPadded, L.bias.data(), out, ld, true);
            in = out;
            ldIn = ld;
            std::swap(out, spare);
        }
        const Layer &last = layers.back();
        float *dst = mi == 0 ? y : member.data();
        k.dot(in, ldIn, rows, last.in, last.weightsT.data(), last.bias[0], dst);
        if (mi > 0)
            for (long r = 0; r < rows; ++r)
                y[r] += member[size_t(r)];
    }
    if (m_members.size() > 1) {
        const float scale = 1.f / float(m_members.size());
        for (long r = 0; r < rows; ++r)
            y[r] *= scale;
    }
}

Eigen::VectorXf ModelPackage::forward(
    const Eigen::Ref<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> &x) const {
    if (x.cols() != FeatureSchema::size(m_schema))
        throw InvalidInput(fmt::format("forward: {} columns; feature schema {} has {}", x.cols(), m_schema,
                                       FeatureSchema::size(m_schema)));
    Eigen::VectorXf y(x.rows());
    forward(x.data(), long(x.rows()), long(x.outerStride()), y.data());
    return y;
}

void ModelPackage::predictMs(const GemmProblem &problem, const std::vector<KernelConfig> &candidates,
                             std::vector<double> &out) const {
    thread_local std::vector<float> feats, y;
    feats.clear();
    const int width = FeatureSchema::size(m_schema);
    feats.reserve(candidates.size() * size_t(width));
    for (size_t i = 0; i < candidates.size(); ++i) {
        try {
            FeatureSchema::check(candidates[i], {});
        } catch (const InvalidInput &) {
            FeatureSchema::check(candidates[i],
                                 fmt::format("candidates[{}]", i)); // the message with its index
            throw;
        }
        FeatureSchema::compute(problem, candidates[i], m_hw, feats, m_schema);
    }
    y.resize(candidates.size());
    forward(feats.data(), long(candidates.size()), width, y.data());
    out.resize(candidates.size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = std::exp(double(y[i]));
}

std::string ModelPackage::unseenProblemFeature(const GemmProblem &problem) const {
    if (m_constantFlags.empty())
        return {};
    thread_local std::vector<float> feats;
    feats.clear();
    KernelConfig aten;
    aten.kind = "aten";
    aten.name = "extern_kernels.mm";
    // The problem's flags do not depend on the candidate.
    FeatureSchema::compute(problem, aten, m_hw, feats, m_schema);
    for (const auto &[f, seen] : m_constantFlags)
        if (feats[size_t(f)] != seen)
            return fmt::format("{} = {:g}", FeatureSchema::names(m_schema)[size_t(f)], feats[size_t(f)]);
    return {};
}

std::vector<double> ModelPackage::predictMs(const GemmProblem &problem,
                                            const std::vector<KernelConfig> &candidates) const {
    std::vector<double> out;
    predictMs(problem, candidates, out);
    return out;
}

std::string manifestText(const nlohmann::json &manifest, const nlohmann::json::json_pointer &at) {
    if (!manifest.contains(at) || manifest.at(at).is_null())
        return "n/a";
    // Bytes that are not UTF-8 in a string become U+FFFD rather than an exception.
    auto json = [](const nlohmann::json &v) {
        return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    const auto &v = manifest.at(at);
    if (v.is_string())
        return printable(v.get<std::string>());
    if (v.is_array()) {
        std::vector<std::string> parts;
        for (const auto &e : v)
            parts.push_back(e.is_string() ? printable(e.get<std::string>()) : json(e));
        return fmt::format("{}", fmt::join(parts, !v.empty() && v[0].is_number() ? "-" : ", "));
    }
    return json(v);
}

} // namespace diode
