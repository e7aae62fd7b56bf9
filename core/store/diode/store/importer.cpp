#include "importer.h"

#include "diode/infer/datafile.h"
#include "diode/store/datamix.h"

#include "diode/infer/jsonlimits.h"
#include "diode/infer/printable.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/stablehash.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace diode {

namespace {

using json = nlohmann::json;

// torch-diode writes dtypes as "float16", "torch.float16" or {"__torch_dtype__": "float16"}.
std::optional<DType> torchDType(const json &v) {
    if (v.is_string())
        return parseDType(v.get<std::string>());
    if (v.is_object() && v.contains("__torch_dtype__") && v["__torch_dtype__"].is_string())
        return parseDType(v["__torch_dtype__"].get<std::string>());
    return std::nullopt;
}

json decodeMaybeString(const json &v, const std::string &where, const char *what) {
    if (!v.is_string())
        return v;
    try {
        return parseJsonBounded(v.get<std::string>(), fmt::format("{}: {}", where, what), kProblemJsonLimits);
    } catch (const InvalidInput &e) {
        throw InvalidInput(
            fmt::format("{}: {} is a string but not JSON we read ({})", where, what, e.what()));
    }
}

int64_t intField(const json &o, const char *key, const std::string &where) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number_integer())
        throw InvalidInput(fmt::format("{}: field '{}' is missing or not an integer", where, key));
    return it->get<int64_t>();
}

KernelConfig torchDiodeConfig(const json &cfgIn, const std::string &where) {
    const json cfg = decodeMaybeString(cfgIn, where, "config");
    if (!cfg.is_object())
        throw InvalidInput(fmt::format("{}: config must be an object", where));
    KernelConfig c;
    const std::string name = cfg.value("name", std::string("mm"));
    const bool aten = name.rfind("aten", 0) == 0 || name.rfind("extern", 0) == 0;
    c.kind = aten ? "aten" : "triton";
    c.name = name;
    if (!aten) {
        c.name = name.rfind("triton_", 0) == 0 ? name.substr(7) : name;
        c.blockM = KernelConfig::intParameter(cfg.value("block_m", json()), where, "block_m");
        c.blockN = KernelConfig::intParameter(cfg.value("block_n", json()), where, "block_n");
        c.blockK = KernelConfig::intParameter(cfg.value("block_k", json()), where, "block_k");
        c.groupM = KernelConfig::intParameter(cfg.value("group_m", json()), where, "group_m");
        c.numStages = KernelConfig::intParameter(cfg.value("num_stages", json()), where, "num_stages");
        c.numWarps = KernelConfig::intParameter(cfg.value("num_warps", json()), where, "num_warps");
        for (const char *k : {"EVEN_K", "ALLOW_TF32", "USE_FAST_ACCUM", "ACC_TYPE"})
            if (cfg.contains(k) && !cfg[k].is_null())
                c.extra[k] = cfg[k];
    }
    return c;
}

// By content, not by line count: a one-line problem JSONL file is one object too, and a problem
// line carries "hardware" (the worker's GPU facts). A torch-diode dataset has no "op" or
// "candidates", and its "hardware" maps GPU names to objects holding "operation".
bool isTorchDiodeDataset(const json &doc) {
    if (!doc.is_object() || doc.contains("op") || doc.contains("candidates"))
        return false;
    auto hw = doc.find("hardware");
    if (hw == doc.end() || !hw->is_object() || hw->empty())
        return false;
    for (const auto &[gpu, v] : hw->items())
        if (!v.is_object() || !v.contains("operation"))
            return false;
    return true;
}

// One measurement a (config, timing method) in a record, as the store keeps it: the same one given
// again (a candidate listed twice) is dropped, so the counts say what is stored; another time for it
// is refused, naming both, since which one holds is not known.
void dropRepeatedMeasurements(ProblemRecord &r, const std::string &where) {
    std::map<std::string, size_t> byKey; // config key -> index into `kept`
    std::vector<Candidate> kept;
    for (auto &c : r.candidates) {
        const std::string key = c.config.key();
        const auto [it, isNew] = byKey.emplace(key, kept.size());
        if (isNew) {
            kept.push_back(std::move(c));
            continue;
        }
        Candidate &first = kept[it->second];
        for (auto &t : c.timings) {
            const Timing *had = first.timing(t.method);
            if (!had) {
                first.timings.push_back(std::move(t));
                continue;
            }
            if (had->status != t.status || had->timeMs != t.timeMs)
                throw InvalidInput(fmt::format(
                    "{}: candidate {} is given twice with different {} results ({} and {}); one problem has "
                    "one "
                    "measurement a candidate and method: keep the one that holds",
                    where, printable(key), toString(t.method),
                    had->timeMs ? fmt::format("{} ms", *had->timeMs) : std::string(toString(had->status)),
                    t.timeMs ? fmt::format("{} ms", *t.timeMs) : std::string(toString(t.status))));
        }
    }
    r.candidates = std::move(kept);
}

// Told by the first line's "kind", as the reader of these lines tells them; a first line that is not
// JSON is left to the problem JSON reader, which names what is wrong with it.
bool holdsDecisionLines(const std::string &data) {
    const size_t first = data.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || data[first] != '{')
        return false;
    const size_t end = data.find('\n', first);
    try {
        return isDecisionLine(parseJsonBounded(
            std::string_view(data).substr(first, end == std::string::npos ? end : end - first), "line 1",
            kProblemJsonLimits));
    } catch (const InvalidInput &) {
        return false;
    }
}

} // namespace

std::vector<std::pair<std::string, std::vector<ProblemRecord>>>
fromTorchDiodeDataset(const json &doc, const std::string &where) {
    auto hwIt = doc.find("hardware");
    if (!doc.is_object() || hwIt == doc.end() || !hwIt->is_object())
        throw InvalidInput(
            fmt::format("{}: not a torch-diode dataset (no 'hardware' object at the top)", where));
    std::vector<std::pair<std::string, std::vector<ProblemRecord>>> out;
    for (const auto &[gpu, hw] : hwIt->items()) {
        const std::string w0 = fmt::format("{} hardware[\"{}\"]", where, gpu);
        auto ops = hw.find("operation");
        if (!hw.is_object() || ops == hw.end() || !ops->is_object())
            throw InvalidInput(w0 + ": no 'operation' object");
        std::vector<ProblemRecord> records;
        for (const auto &[opName, opDoc] : ops->items()) {
            const std::string w1 = fmt::format("{} operation[\"{}\"]", w0, opName);
            auto op = parseOp(opName);
            if (!op)
                throw InvalidInput(
                    fmt::format("{}: unknown op \"{}\"; expected one of {}", w1, opName, opNames()));
            auto sol = opDoc.find("solution");
            if (!opDoc.is_object() || sol == opDoc.end() || !sol->is_object())
                throw InvalidInput(w1 + ": no 'solution' object");
            for (const auto &[key, entry] : sol->items()) {
                const std::string w2 =
                    fmt::format("{} solution[{}]", w1, key.size() > 80 ? key.substr(0, 80) + "..." : key);
                const json pj = decodeMaybeString(json(key), w2, "problem key");
                if (!pj.is_object())
                    throw InvalidInput(w2 + ": problem key is not a JSON object");
                ProblemRecord r;
                r.problem.op = *op;
                auto dt = torchDType(pj.value("M_dtype", json()));
                if (!dt)
                    throw InvalidInput(fmt::format("{}: field 'M_dtype' has unknown dtype {}", w2,
                                                   pj.value("M_dtype", json()).dump()));
                r.problem.dtype = *dt;
                r.problem.batch = pj.contains("B") ? intField(pj, "B", w2) : 1;
                r.problem.m = intField(pj, "M", w2);
                r.problem.n = intField(pj, "N", w2);
                r.problem.k = intField(pj, "K", w2);
                if (!isBatched(*op))
                    r.problem.batch = 1;
                validate(r.problem, w2);
                auto tcs = entry.find("timed_configs");
                if (!entry.is_object() || tcs == entry.end() || !tcs->is_array())
                    throw InvalidInput(w2 + ": no 'timed_configs' list");
                for (size_t i = 0; i < tcs->size(); ++i) {
                    const auto &tc = (*tcs)[i];
                    const std::string w3 = fmt::format("{} timed_configs[{}]", w2, i);
                    if (!tc.is_object() || !tc.contains("config"))
                        throw InvalidInput(w3 + ": needs 'config' and 'time'");
                    Candidate c;
                    c.config = torchDiodeConfig(tc["config"], w3);
                    const json &t = tc.value("time", json());
                    if (!t.is_number())
                        throw InvalidInput(w3 + ": field 'time' must be a number (milliseconds)");
                    const double ms = t.get<double>();
                    // torch-diode records what Inductor's autotune benchmark measured.
                    Timing timing;
                    timing.method = TimingMethod::InductorAutotune;
                    if (std::isfinite(ms) && ms > 0) {
                        timing.timeMs = ms;
                    } else {
                        timing.status = MeasureStatus::Failed;
                        timing.error = fmt::format("torch-diode recorded time {}", ms);
                    }
                    c.timings.push_back(std::move(timing));
                    r.candidates.push_back(std::move(c));
                }
                dropRepeatedMeasurements(r, w2);
                records.push_back(std::move(r));
            }
        }
        out.emplace_back(gpu, std::move(records));
    }
    return out;
}

ParsedImport parseImportData(const std::string &data, const std::string &path) {
    ParsedImport res;
    auto &groups = res.groups;

    const size_t first = data.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw InvalidInput(fmt::format("{}: file is empty", path));
    // Bounded: a document nested too deep is not taken whole, and the line reader below then
    // refuses it naming its line.
    json whole;
    std::string wholeError;
    if (data[first] == '{') {
        try {
            whole = parseJsonBounded(data, path, kDocumentLimits);
        } catch (const InvalidInput &e) {
            wholeError = e.what();
        }
    }
    // One document over several lines (a pretty-printed dataset) is not problem JSON lines: its
    // first line alone is no JSON, and the line reader would report "line 1 column 2" for an
    // error further down. Report the document's own error, or what it lacks.
    const size_t firstEnd = data.find('\n', first);
    const bool spansLines = data[first] == '{' && firstEnd != std::string::npos &&
                            !json::accept(std::string_view(data).substr(first, firstEnd - first));
    if (spansLines && !wholeError.empty())
        throw InvalidInput(wholeError);
    if (spansLines && !isTorchDiodeDataset(whole)) {
        if (whole.contains("hardware") && !whole.contains("op") && !whole.contains("candidates"))
            (void)fromTorchDiodeDataset(whole, path); // names the entry it cannot read
        throw InvalidInput(
            fmt::format("{}: one JSON document over several lines that is not a torch-diode dataset "
                        "(no 'hardware' object of GPUs with 'operation'); problem JSON has one "
                        "object per line",
                        path));
    }
    if (isTorchDiodeDataset(whole)) {
        res.format = "torch-diode-json";
        for (auto &[gpu, recs] : fromTorchDiodeDataset(whole, path)) {
            RunInfo run;
            run.gpuName = gpu;
            groups.emplace_back(run, std::move(recs));
        }
    } else if (data[first] == '{') {
        res.format = "problem-jsonl";
        std::map<std::string, size_t> byHardware;
        std::vector<std::set<GemmProblem>> problemsOf; // of each group
        forEachDataLine(std::string_view(data), path, [&](int lineNo, const std::string &line) {
            const std::string where = fmt::format("{}: line {}", path, lineNo);
            auto rec = parseProblemLine(line, where);
            dropRepeatedMeasurements(rec, where);
            const json hw = rec.extra.value("hardware", json::object());
            const json ver = rec.extra.value("versions", json::object());
            const json spaceField = rec.extra.value("search_space", json(""));
            if (!spaceField.is_string())
                throw InvalidInput(fmt::format("{}: field 'search_space' must be a string", where));
            // One run per machine, software and search space: the same problem measured in the
            // DEFAULT and the EXHAUSTIVE space is two runs' measurements, never one's twice. A problem
            // a file gives again (held-out lines of two model families) goes into a further run of
            // the same kind, as a second sweep of it would: kept, not dropped against the first.
            const std::string space = spaceField.get<std::string>();
            const std::string kind = hw.dump(-1, ' ', false, json::error_handler_t::replace) +
                                     ver.dump(-1, ' ', false, json::error_handler_t::replace) + space;
            for (int repeat = 0;; ++repeat) {
                const std::string key = repeat ? fmt::format("{}#{}", kind, repeat) : kind;
                auto [it, isNew] = byHardware.emplace(key, groups.size());
                if (isNew) {
                    RunInfo run;
                    run.setFromWorker(hw, ver, where);
                    run.searchSpace = space;
                    groups.emplace_back(run, std::vector<ProblemRecord>{});
                    problemsOf.emplace_back();
                }
                if (!problemsOf[it->second].insert(rec.problem).second)
                    continue;
                groups[it->second].second.push_back(std::move(rec));
                break;
            }
        });
    } else {
        json doc = parseMsgpackBounded(data, path, kDocumentLimits);
        if (doc.is_discarded())
            throw InvalidInput(
                fmt::format("{}: not problem JSON lines, a torch-diode dataset (JSON) or a torch-diode "
                            "msgpack dataset",
                            path));
        res.format = "torch-diode-msgpack";
        for (auto &[gpu, recs] : fromTorchDiodeDataset(doc, path)) {
            RunInfo run;
            run.gpuName = gpu;
            groups.emplace_back(run, std::move(recs));
        }
    }
    return res;
}

ImportResult importFile(Store &store, const std::string &path, bool again, bool allowMixedData) {
    Store::Transaction tx(store);
    auto res = importFileInTransaction(store, path, again, false, allowMixedData);
    tx.commit();
    return res;
}

ImportResult importFileInTransaction(Store &store, const std::string &path, bool again, bool skipImported,
                                     bool allowMixedData) {
    const std::string data = readDataFile(path, "import");
    if (holdsDecisionLines(data)) {
        ImportResult res;
        res.format = "kernel-site-lines";
        res.lines = storeDecisionData(store, readDecisionLines(data, path), path);
        return res;
    }
    const std::string fingerprint = fmt::format("{:016x}", fnv1a64(data));
    auto parsed = parseImportData(data, path);
    auto &groups = parsed.groups;
    ImportResult res;
    res.format = parsed.format;
    if (groups.empty())
        throw InvalidInput(fmt::format("{}: holds no problems", path));

    // Checked inside the write transaction, so parallel imports of one file land once.
    if (!again)
        if (const auto earlier = store.importOfContent(fingerprint)) {
            if (skipImported) {
                res.alreadyImportedRun = earlier->id;
                return res;
            }
            throw InvalidInput(
                fmt::format("{}: the same content was imported already (run {} from '{}', {}); "
                            "nothing imported. Use --again to import it once more",
                            path, earlier->id, earlier->source, earlier->createdAt));
        }
    if (!allowMixedData) {
        DataOrigin added; // an import names no backend
        for (const auto &[run, records] : groups) {
            if (!run.gpuName.empty())
                added.gpus.insert(run.gpuName);
            for (const auto &r : records)
                for (const auto &c : r.candidates)
                    for (const auto &t : c.timings)
                        if (t.timeMs)
                            added.methods.insert(t.method);
        }
        if (const std::string mix = describeMix(dataOrigin(store), added); !mix.empty())
            throw DataMixRefused(
                fmt::format("importing {} would mix data in {}: {}", path, store.path(), mix));
    }
    for (auto &[run, records] : groups) {
        run.backend = "import";
        run.status = "finished";
        run.source = path;
        run.planName = res.format;
        run.planJson = json{{"content_fnv1a64", fingerprint}, {"bytes", data.size()}}.dump();
        run.problemsPlanned = int64_t(records.size());
        const int64_t runId = store.createRun(run);
        for (const auto &r : records) {
            store.insertRecord(runId, r);
            res.measurements += int64_t(r.measurementCount());
        }
        store.setRunStatus(runId, "finished");
        res.problems += int64_t(records.size());
        ++res.runs;
    }
    return res;
}

} // namespace diode
