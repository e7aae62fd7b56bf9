#include "problemjson.h"

#include "diode/infer/datafile.h"
#include "diode/infer/jsonlimits.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>

namespace diode {

std::string_view toString(MeasureStatus s) {
    switch (s) {
    case MeasureStatus::Ok:
        return "ok";
    case MeasureStatus::Failed:
        return "failed";
    case MeasureStatus::Timeout:
        return "timeout";
    }
    return "failed";
}

MeasureStatus parseMeasureStatus(std::string_view t) {
    if (t == "ok")
        return MeasureStatus::Ok;
    if (t == "timeout")
        return MeasureStatus::Timeout;
    return MeasureStatus::Failed;
}

std::optional<double> Candidate::timeMs(TimingMethod method) const {
    const Timing *t = timing(method);
    return t && t->status == MeasureStatus::Ok ? t->timeMs : std::nullopt;
}

const Timing *Candidate::timing(TimingMethod method) const {
    for (const auto &t : timings)
        if (t.method == method)
            return &t;
    return nullptr;
}

std::string Candidate::error() const {
    for (const auto &t : timings)
        if (t.status != MeasureStatus::Ok)
            return t.error.empty() ? std::string(toString(t.status)) : t.error;
    return {};
}

std::string Candidate::wrongResult() const {
    for (const auto &t : timings)
        if (t.status == MeasureStatus::Failed && t.error.rfind(kWrongResultError, 0) == 0)
            return t.error;
    return {};
}

std::vector<Measurement> Candidate::measurements() const {
    std::vector<Measurement> out;
    out.reserve(timings.size());
    for (const auto &t : timings)
        out.push_back({config, t.method, t.timeMs, t.status, t.error});
    return out;
}

void ProblemRecord::add(const Measurement &m) {
    if (candidates.empty() || !(candidates.back().config == m.config))
        candidates.push_back({m.config, {}});
    candidates.back().timings.push_back({m.method, m.timeMs, m.status, m.error});
}

size_t ProblemRecord::measurementCount() const {
    size_t n = 0;
    for (const auto &c : candidates)
        n += c.timings.size();
    return n;
}

const BaselineTiming *ProblemRecord::baseline(std::string_view name, TimingMethod method) const {
    for (const auto &b : baselines)
        if (b.baseline == name && b.method == method)
            return &b;
    return nullptr;
}

namespace {

int64_t sizeField(const nlohmann::json &j, const char *field, const std::string &where, bool required) {
    auto it = j.find(field);
    if (it == j.end()) {
        if (required)
            throw InvalidInput(fmt::format("{}: field '{}' is missing", where, field));
        return 1;
    }
    if (!it->is_number_integer())
        throw InvalidInput(
            fmt::format("{}: field '{}' must be an integer, got {}", where, field, it->dump()));
    return it->get<int64_t>();
}

bool boolField(const nlohmann::json &j, const char *field, const std::string &where) {
    auto it = j.find(field);
    if (it == j.end())
        return false;
    if (!it->is_boolean())
        throw InvalidInput(
            fmt::format("{}: field '{}' must be true or false, got {}", where, field, it->dump()));
    return it->get<bool>();
}

const char *kProblemKeys[] = {"version", "op",           "dtype",        "B",          "M",         "N",
                              "K",       "a_transposed", "b_transposed", "candidates", "baselines", "error"};

} // namespace

GemmProblem problemFromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a problem must be a JSON object", where));
    GemmProblem p;
    auto opIt = j.find("op");
    if (opIt == j.end() || !opIt->is_string())
        throw InvalidInput(fmt::format("{}: field 'op' is missing", where));
    auto op = parseOp(opIt->get<std::string>());
    if (!op)
        throw InvalidInput(fmt::format("{}: field 'op' has unknown value {}; expected one of {}", where,
                                       opIt->dump(), opNames()));
    p.op = *op;
    auto dtIt = j.find("dtype");
    if (dtIt == j.end() || !dtIt->is_string())
        throw InvalidInput(fmt::format("{}: field 'dtype' is missing", where));
    auto dt = parseDType(dtIt->get<std::string>());
    if (!dt)
        throw InvalidInput(fmt::format("{}: field 'dtype' has unknown value {}; expected one of {}", where,
                                       dtIt->dump(), fmt::join(dtypeNameList(), ", ")));
    p.dtype = *dt;
    p.batch = sizeField(j, "B", where, false);
    p.m = sizeField(j, "M", where, true);
    p.n = sizeField(j, "N", where, true);
    p.k = sizeField(j, "K", where, true);
    p.aTransposed = boolField(j, "a_transposed", where);
    p.bTransposed = boolField(j, "b_transposed", where);
    validate(p, where);
    return p;
}

nlohmann::json problemToJson(const GemmProblem &p) {
    return {{"op", toString(p.op)},
            {"dtype", toString(p.dtype)},
            {"B", p.batch},
            {"M", p.m},
            {"N", p.n},
            {"K", p.k},
            {"a_transposed", p.aTransposed},
            {"b_transposed", p.bTransposed}};
}

namespace {

double positiveMs(const nlohmann::json &v, const std::string &where, const std::string &field) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
        throw InvalidInput(fmt::format("{}: field '{}' must be a positive number (milliseconds), got {}",
                                       where, field, v.dump()));
    return v.get<double>();
}

// Version 1: one `time_ms`, Inductor's autotune number on a GPU, the cpu backend's own for cpu.
void readVersion1Times(const nlohmann::json &c, const std::string &where, Candidate &cand) {
    Timing t;
    t.method = cand.config.kind == "cpu" ? TimingMethod::Cpu : TimingMethod::InductorAutotune;
    auto time = c.find("time_ms");
    if (time != c.end() && !time->is_null())
        t.timeMs = positiveMs(*time, where, "time_ms");
    if (auto e = c.find("error"); e != c.end() && e->is_string()) {
        t.status = MeasureStatus::Failed;
        t.error = e->get<std::string>();
    } else if (time != c.end() && !t.timeMs) {
        t.status = MeasureStatus::Failed;
        t.error = "no timing";
    } else if (time == c.end()) {
        return; // a candidate to rank, not a measurement
    }
    cand.timings.push_back(std::move(t));
}

// Version 2: `times` maps method -> ms; a method given as null was tried and gave no time. An
// `error` without such a null is a failure of the in-graph timing (of the cpu timing for cpu
// candidates), filed under the first of those methods the candidate has no time for.
void readVersion2Times(const nlohmann::json &c, const nlohmann::json &times, const std::string &where,
                       Candidate &cand) {
    if (!times.is_object())
        throw InvalidInput(fmt::format("{}: field 'times' must be an object of method: milliseconds", where));
    for (const auto &[k, v] : times.items())
        if (!parseTimingMethod(k))
            throw InvalidInput(fmt::format("{}: field 'times' has unknown timing method \"{}\"; expected {}",
                                           where, k, timingMethodNames()));
    auto e = c.find("error");
    const std::string error = e != c.end() && e->is_string() ? e->get<std::string>() : std::string();
    bool failureFiled = false;
    for (TimingMethod m : kTimingMethods) { // a fixed order, whatever the file's
        auto it = times.find(std::string(toString(m)));
        if (it == times.end())
            continue;
        if (it->is_null()) {
            cand.timings.push_back(
                {m, std::nullopt, MeasureStatus::Failed, error.empty() ? "no timing" : error});
            failureFiled = true;
        } else {
            cand.timings.push_back(
                {m, positiveMs(*it, where, fmt::format("times.{}", toString(m))), MeasureStatus::Ok, {}});
        }
    }
    if (error.empty() || failureFiled)
        return;
    const auto failedUnder = cand.config.kind == "cpu" ? std::vector<TimingMethod>{TimingMethod::Cpu}
                                                       : std::vector<TimingMethod>{TimingMethod::GraphWarm,
                                                                                   TimingMethod::GraphCold};
    for (TimingMethod m : failedUnder) {
        if (cand.timing(m))
            continue;
        cand.timings.push_back({m, std::nullopt, MeasureStatus::Failed, error});
        return;
    }
}

std::vector<BaselineTiming> readBaselines(const nlohmann::json &j, const std::vector<Candidate> &candidates,
                                          const std::string &where) {
    std::vector<BaselineTiming> out;
    if (!j.is_object())
        throw InvalidInput(
            fmt::format("{}: field 'baselines' must be an object of name: {{method: ms, ...}}", where));
    for (const auto &[name, b] : j.items()) {
        const std::string bw = fmt::format("{} baselines.{}", where, name);
        if (!b.is_object())
            throw InvalidInput(bw + ": must be an object of method: milliseconds");
        std::optional<double> compileS;
        if (auto it = b.find("compile_s"); it != b.end() && !it->is_null()) {
            if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
                throw InvalidInput(
                    fmt::format("{}: field 'compile_s' must be seconds, got {}", bw, it->dump()));
            compileS = it->get<double>();
        }
        std::optional<KernelConfig> pick;
        if (auto it = b.find("pick"); it != b.end() && !it->is_null()) {
            if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
                it->get<int64_t>() >= int64_t(candidates.size()))
                throw InvalidInput(fmt::format("{}: field 'pick' must index the {} candidates, got {}", bw,
                                               candidates.size(), it->dump()));
            pick = candidates[size_t(it->get<int64_t>())].config;
        }
        for (TimingMethod m : kTimingMethods) {
            auto it = b.find(std::string(toString(m)));
            if (it == b.end() || it->is_null())
                continue;
            out.push_back({name, m, positiveMs(*it, bw, std::string(toString(m))), compileS, pick});
        }
    }
    return out;
}

} // namespace

ProblemRecord parseProblemRecord(const nlohmann::json &j, const std::string &where) {
    ProblemRecord r;
    r.problem = problemFromJson(j, where);
    if (auto it = j.find("version"); it != j.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 1)
            throw InvalidInput(fmt::format("{}: field 'version' must be 1 or 2, got {}", where, it->dump()));
        if (it->get<int64_t>() > kProblemJsonVersion)
            throw InvalidInput(fmt::format("{}: problem JSON version {}; this build reads up to {}", where,
                                           it->get<int64_t>(), kProblemJsonVersion));
    }
    if (auto it = j.find("error"); it != j.end() && it->is_string())
        r.error = it->get<std::string>();
    if (auto it = j.find("candidates"); it != j.end()) {
        if (!it->is_array())
            throw InvalidInput(fmt::format("{}: field 'candidates' must be a list", where));
        int i = 0;
        for (const auto &c : *it) {
            const std::string cw = fmt::format("{} candidates[{}]", where, i++);
            Candidate cand;
            cand.config = KernelConfig::fromJson(c, cw);
            if (auto t = c.find("times"); t != c.end())
                readVersion2Times(c, *t, cw, cand);
            else
                readVersion1Times(c, cw, cand);
            r.candidates.push_back(std::move(cand));
        }
    }
    if (auto it = j.find("baselines"); it != j.end() && !it->is_null())
        r.baselines = readBaselines(*it, r.candidates, where);
    // A line's search space is kept as written, and must be one Inductor has.
    if (auto it = j.find("search_space");
        it != j.end() && !(it->is_string() && parseSearchSpace(it->get<std::string>())))
        throw InvalidInput(fmt::format("{}: field 'search_space' must be one of {}, got {}", where,
                                       fmt::join(kSearchSpaces, ", "), it->dump()));
    for (const auto &[k, v] : j.items()) {
        bool known = false;
        for (const char *kk : kProblemKeys)
            known = known || k == kk;
        if (!known)
            r.extra[k] = v;
    }
    return r;
}

ProblemRecord parseProblemLine(const std::string &line, const std::string &where) {
    return parseProblemRecord(parseJsonBounded(line, where, kProblemJsonLimits), where);
}

LineRead readProblemLine(std::istream &in, std::string &line) {
    line.clear();
    auto *buf = in.rdbuf();
    bool any = false;
    for (;;) {
        const int c = buf->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            in.setstate(std::ios::eofbit);
            return any ? LineRead::Line : LineRead::End;
        }
        any = true;
        if (c == '\n')
            return LineRead::Line;
        if (line.size() >= kProblemJsonLimits.maxBytes)
            return LineRead::TooLong;
        line.push_back(char(c));
    }
}

nlohmann::json toJson(const ProblemRecord &r) {
    nlohmann::json j = r.extra.is_object() ? r.extra : nlohmann::json::object();
    const nlohmann::json problem = problemToJson(r.problem);
    for (const auto &[k, v] : problem.items())
        j[k] = v;
    j["version"] = kProblemJsonVersion;
    auto cands = nlohmann::json::array();
    for (const auto &cand : r.candidates) {
        auto c = cand.config.toJson();
        if (!cand.timings.empty()) {
            auto times = nlohmann::json::object();
            // A failed method is written as null, so that reading the line files it where it was.
            for (const auto &t : cand.timings)
                times[std::string(toString(t.method))] = t.status == MeasureStatus::Ok && t.timeMs
                                                             ? nlohmann::json(*t.timeMs)
                                                             : nlohmann::json(nullptr);
            c["times"] = std::move(times);
        }
        if (const std::string e = cand.error(); !e.empty())
            c["error"] = e;
        cands.push_back(std::move(c));
    }
    j["candidates"] = std::move(cands);
    if (!r.baselines.empty()) {
        auto baselines = nlohmann::json::object();
        for (const auto &b : r.baselines) {
            auto &o = baselines[b.baseline];
            o[std::string(toString(b.method))] = b.timeMs;
            if (b.compileS && !o.contains("compile_s"))
                o["compile_s"] = *b.compileS;
            if (b.pick && !o.contains("pick")) {
                const std::string key = b.pick->key();
                for (size_t i = 0; i < r.candidates.size(); ++i)
                    if (r.candidates[i].config.key() == key) {
                        o["pick"] = i;
                        break;
                    }
            }
        }
        j["baselines"] = std::move(baselines);
    }
    if (!r.error.empty())
        j["error"] = r.error;
    return j;
}

std::string lowerExtension(const std::string &path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return ext;
}

bool isProblemLinesName(const std::string &path) {
    const std::string ext = lowerExtension(path);
    return ext == ".jsonl" || ext == ".ndjson";
}

std::vector<ProblemRecord> readProblemFile(const std::string &path) {
    // A directory opens as a stream and fails on the first read ("basic_filebuf::underflow").
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InvalidInput(fmt::format("'{}' is a directory; expected a file of problem JSON lines", path));
    std::ifstream in(path);
    if (!in)
        throw InvalidInput(fmt::format("cannot read '{}'", path));
    std::vector<ProblemRecord> out;
    forEachDataLine(in, path, [&](int n, const std::string &line) {
        out.push_back(parseProblemLine(line, fmt::format("{}: line {}", path, n)));
    });
    return out;
}

std::optional<std::string> parseSearchSpace(std::string_view text) {
    std::string upper(text);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return char(std::toupper(c)); });
    for (const auto space : kSearchSpaces)
        if (upper == space)
            return upper;
    return std::nullopt;
}

} // namespace diode
