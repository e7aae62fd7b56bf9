#include "problemjson.h"

#include <fmt/format.h>

#include <cmath>

namespace diode {

std::string_view toString(MeasureStatus s)
{
    switch (s) {
    case MeasureStatus::Ok: return "ok";
    case MeasureStatus::Failed: return "failed";
    case MeasureStatus::Timeout: return "timeout";
    }
    return "failed";
}

MeasureStatus parseMeasureStatus(std::string_view t)
{
    if (t == "ok") return MeasureStatus::Ok;
    if (t == "timeout") return MeasureStatus::Timeout;
    return MeasureStatus::Failed;
}

namespace {

int64_t sizeField(const nlohmann::json &j, const char *field, const std::string &where, bool required)
{
    auto it = j.find(field);
    if (it == j.end()) {
        if (required) throw InvalidInput(fmt::format("{}: field '{}' is missing", where, field));
        return 1;
    }
    if (!it->is_number_integer())
        throw InvalidInput(fmt::format("{}: field '{}' must be an integer, got {}", where, field, it->dump()));
    return it->get<int64_t>();
}

bool boolField(const nlohmann::json &j, const char *field, const std::string &where)
{
    auto it = j.find(field);
    if (it == j.end()) return false;
    if (!it->is_boolean())
        throw InvalidInput(fmt::format("{}: field '{}' must be true or false, got {}", where, field, it->dump()));
    return it->get<bool>();
}

const char *kProblemKeys[] = {"op", "dtype", "B", "M", "N", "K", "a_transposed", "b_transposed", "candidates", "error"};

} // namespace

GemmProblem problemFromJson(const nlohmann::json &j, const std::string &where)
{
    if (!j.is_object()) throw InvalidInput(fmt::format("{}: a problem must be a JSON object", where));
    GemmProblem p;
    auto opIt = j.find("op");
    if (opIt == j.end() || !opIt->is_string())
        throw InvalidInput(fmt::format("{}: field 'op' is missing", where));
    auto op = parseOp(opIt->get<std::string>());
    if (!op)
        throw InvalidInput(fmt::format("{}: field 'op' has unknown value {}; expected mm, addmm or bmm", where,
                                       opIt->dump()));
    p.op = *op;
    auto dtIt = j.find("dtype");
    if (dtIt == j.end() || !dtIt->is_string())
        throw InvalidInput(fmt::format("{}: field 'dtype' is missing", where));
    auto dt = parseDType(dtIt->get<std::string>());
    if (!dt)
        throw InvalidInput(fmt::format("{}: field 'dtype' has unknown value {}; expected bf16, fp16 or fp32",
                                       where, dtIt->dump()));
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

nlohmann::json problemToJson(const GemmProblem &p)
{
    return {{"op", toString(p.op)}, {"dtype", toString(p.dtype)}, {"B", p.batch},   {"M", p.m},
            {"N", p.n},             {"K", p.k},                   {"a_transposed", p.aTransposed},
            {"b_transposed", p.bTransposed}};
}

ProblemRecord parseProblemRecord(const nlohmann::json &j, const std::string &where)
{
    ProblemRecord r;
    r.problem = problemFromJson(j, where);
    if (auto it = j.find("error"); it != j.end() && it->is_string()) r.error = it->get<std::string>();
    if (auto it = j.find("candidates"); it != j.end()) {
        if (!it->is_array()) throw InvalidInput(fmt::format("{}: field 'candidates' must be a list", where));
        int i = 0;
        for (const auto &c : *it) {
            const std::string cw = fmt::format("{} candidates[{}]", where, i++);
            Measurement m;
            m.config = KernelConfig::fromJson(c, cw);
            if (auto t = c.find("time_ms"); t != c.end() && !t->is_null()) {
                if (!t->is_number() || !std::isfinite(t->get<double>()) || t->get<double>() <= 0)
                    throw InvalidInput(fmt::format("{}: field 'time_ms' must be a positive number, got {}", cw,
                                                   t->dump()));
                m.timeMs = t->get<double>();
            }
            if (auto e = c.find("error"); e != c.end() && e->is_string()) {
                m.error = e->get<std::string>();
                m.status = MeasureStatus::Failed;
            } else if (c.contains("time_ms") && !m.timeMs) {
                m.status = MeasureStatus::Failed;
                m.error = "no timing";
            }
            r.candidates.push_back(std::move(m));
        }
    }
    for (const auto &[k, v] : j.items()) {
        bool known = false;
        for (const char *kk : kProblemKeys) known = known || k == kk;
        if (!known) r.extra[k] = v;
    }
    return r;
}

ProblemRecord parseProblemLine(const std::string &line, const std::string &where)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error &e) {
        throw InvalidInput(fmt::format("{}: not valid JSON ({})", where, e.what()));
    }
    return parseProblemRecord(j, where);
}

nlohmann::json toJson(const ProblemRecord &r)
{
    nlohmann::json j = r.extra.is_object() ? r.extra : nlohmann::json::object();
    const nlohmann::json problem = problemToJson(r.problem);
    for (const auto &[k, v] : problem.items()) j[k] = v;
    auto cands = nlohmann::json::array();
    for (const auto &m : r.candidates) {
        auto c = m.config.toJson();
        if (m.timeMs) c["time_ms"] = *m.timeMs;
        if (m.status != MeasureStatus::Ok) c["error"] = m.error.empty() ? std::string(toString(m.status)) : m.error;
        cands.push_back(std::move(c));
    }
    j["candidates"] = std::move(cands);
    if (!r.error.empty()) j["error"] = r.error;
    return j;
}

std::string toProblemLine(const ProblemRecord &r) { return toJson(r).dump(); }

} // namespace diode
