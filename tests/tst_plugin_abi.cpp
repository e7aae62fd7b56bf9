#include "testutil.h"

#include "diode/infer/packagechoice.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/selectionpolicy.h"
#include "diode/infer/timingagreement.h"
#include "diode/infer/torchversion.h"
#include "diode_inductor.h"

#include <QFile>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

// The plugin's C ABI, called as the Python package calls it, against the real shipped package.
class TestPluginAbi : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    const QString m_package = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
    const QString m_heldout = testutil::sourcePath("trained_models/h200/h200-heldout.jsonl");

    // One problem and its candidates as the Python selector hands them over: a diode_problem and
    // packed rows over a name table.
    struct Rows {
        diode_problem problem{};
        std::vector<std::string> strings; // keeps the char pointers alive
        std::vector<const char *> names;
        std::vector<int32_t> rows;
        size_t count = 0;
    };

    static Rows toRows(const diode::ProblemRecord &r) {
        Rows o;
        o.strings.reserve(2 + r.candidates.size());
        o.strings.emplace_back(diode::toString(r.problem.op));
        o.strings.emplace_back(diode::toString(r.problem.dtype));
        o.problem = {o.strings[0].c_str(),  o.strings[1].c_str(), r.problem.batch,
                     r.problem.m,           r.problem.n,          r.problem.k,
                     r.problem.aTransposed, r.problem.bTransposed};
        for (const auto &m : r.candidates) {
            const auto &c = m.config;
            auto it =
                std::find_if(o.names.begin(), o.names.end(), [&](const char *n) { return c.name == n; });
            if (it == o.names.end()) {
                o.strings.push_back(c.name);
                it = o.names.insert(o.names.end(), o.strings.back().c_str());
            }
            auto flag = [&](const char *key) {
                return c.extra.is_object() && c.extra.contains(key) && c.extra[key].is_boolean()
                           ? int(c.extra[key].get<bool>())
                           : -1;
            };
            o.rows.insert(o.rows.end(),
                          {c.kind == "aten"     ? 0
                           : c.kind == "triton" ? 1
                                                : 2,
                           int32_t(it - o.names.begin()), c.blockM, c.blockN, c.blockK, c.groupM, c.numStages,
                           c.numWarps, flag("EVEN_K"), flag("ALLOW_TF32")});
            ++o.count;
        }
        return o;
    }

    // The decision of `s` on `o`: its outcome, kept indices, predictions and exclusion codes.
    struct Outcome {
        diode_decision d{};
        std::vector<int32_t> kept;
        std::vector<double> ms;
        std::vector<int32_t> excluded;
        int rc = 0;
    };
    static Outcome decide(diode_selector *s, const Rows &o, const diode_gemm_context *context = nullptr) {
        Outcome out;
        out.kept.assign(o.count, -1);
        out.ms.assign(o.count, -1);
        out.excluded.assign(o.count, -1);
        out.rc = diode_decide_gemm(s, &o.problem, context, o.names.data(), o.names.size(), o.rows.data(),
                                   o.count, &out.d, out.kept.data(), out.ms.data(), out.excluded.data());
        out.kept.resize(size_t(std::max(0, out.d.kept)));
        return out;
    }

    std::vector<diode::ProblemRecord> heldout() {
        std::ifstream in(m_heldout.toStdString());
        std::vector<diode::ProblemRecord> out;
        std::string line;
        for (int n = 1; std::getline(in, line); ++n)
            out.push_back(diode::parseProblemLine(line, "line " + std::to_string(n)));
        return out;
    }

private slots:
    void versions() {
        QCOMPARE(diode_abi_version(), DIODE_ABI_VERSION);
        QCOMPARE(diode_feature_schema_version(), 3);
    }

    // The names Python reads instead of defining its own: core's, every one parsed back by core.
    void vocabularyIsCoresNames() {
        const auto v = nlohmann::json::parse(diode_vocabulary());
        QCOMPARE(v["ops"].size(), diode::allOps().size());
        for (const auto &op : v["ops"])
            QVERIFY(diode::parseOp(op.get<std::string>()));
        QCOMPARE(v["batched_ops"], nlohmann::json({"bmm", "baddbmm"}));
        for (const auto &d : v["dtypes"]) {
            const auto dtype = diode::parseDType("torch." + d["torch"].get<std::string>());
            QVERIFY(dtype);
            QCOMPARE(diode::toString(*dtype), d["name"].get<std::string>());
            QCOMPARE(d["bytes"].get<int>(), diode::elementBytes(*dtype));
        }
        QCOMPARE(v["problem_fields"].size(), size_t(8));
        const auto line = diode::problemToJson(diode::GemmProblem{});
        for (const auto &f : v["problem_fields"])
            QVERIFY2(line.contains(f.get<std::string>()), f.dump().c_str());
        QCOMPARE(v["timing_methods"], nlohmann::json(diode::timingMethodNameList()));
        QCOMPARE(v["regimes"], nlohmann::json({"warm", "cold"}));
        QCOMPARE(v["default_regime"], nlohmann::json("warm"));
        QCOMPARE(v["timing_agreement"]["relative"].get<double>(), diode::kAgreementRelative);
        QCOMPARE(v["timing_agreement"]["absolute_ms"].get<double>(), diode::kAgreementAbsoluteMs);
        QCOMPARE(v["candidate_key"].size(), size_t(DIODE_PACKED_FIELDS));
        QCOMPARE(v["row_kinds"], nlohmann::json({"aten", "triton", "other"}));
        QCOMPARE(v["exclusions"], nlohmann::json({"", "unscorable", "wrong_result", "shared_memory"}));
        QCOMPARE(v["decision_kinds"][DIODE_DECISION_GEMM_KERNEL], nlohmann::json("gemm_kernel"));
        QCOMPARE(v["search_spaces"], nlohmann::json({"DEFAULT", "EXHAUSTIVE"}));
        QCOMPARE(v["problem_line"]["max_bytes"].get<uint64_t>(), diode::kProblemJsonLimits.maxBytes);
        QCOMPARE(v["min_torch"], nlohmann::json(diode::minTorchVersion()));
        QCOMPARE(v["default_group_m"].get<int>(), diode::kDefaultGroupM);
    }

    // Timing method, regime fit and refusal, as core decides them: the shipped v2 package is from
    // before timing methods (Inductor's benchmark by default); a cpu model is refused.
    void factsAreCoresDecisions() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        char *text = diode_model_facts(model);
        QVERIFY2(text, diode_last_error());
        const auto facts = nlohmann::json::parse(text);
        diode_free(text);
        diode_model_close(model);
        QCOMPARE(facts["timing_method"], nlohmann::json("inductor_autotune"));
        QCOMPARE(facts["regime_rank"], nlohmann::json({{"warm", 2}, {"cold", 2}}));
        QCOMPARE(facts["refused"], nlohmann::json(""));
        QVERIFY(!diode::pluginRefusal(diode::TimingMethod::Cpu).empty());
        QVERIFY(diode::pluginRefusal(diode::TimingMethod::GraphCold).empty());
        QCOMPARE(diode_model_facts(nullptr), nullptr);
        QCOMPARE(QString(diode_last_error()), QString("diode_model_facts: model must not be NULL"));
    }

    // The decision's predictions are the package's: every held-out candidate scored exactly as
    // `diode rank` scores it (margin 0 and a top_k past the candidates keep every one, best first).
    void decisionsScoreAsDiodeRankDoes() {
        QString out, err;
        QCOMPARE(testutil::runCli({"rank", "--package", m_package, "--input", m_heldout}, &out, &err), 0);
        const QStringList lines = out.split('\n', Qt::SkipEmptyParts);
        const auto records = heldout();
        QCOMPARE(lines.size(), int(records.size()));
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        diode_selector *all = diode_selector_open(model, R"({"top_k": 100000, "margin": 0})");
        QVERIFY2(all, diode_last_error());
        size_t compared = 0;
        for (size_t i = 0; i < records.size(); ++i) {
            const auto rank = nlohmann::json::parse(lines[int(i)].toStdString());
            const Rows o = toRows(records[i]);
            const Outcome got = decide(all, o);
            QCOMPARE(got.rc, 0);
            if (!got.d.selected) { // a lowering offering only ATen has nothing to choose: nothing scored
                QCOMPARE(QString(got.d.not_selected), QString("only_aten"));
                continue;
            }
            const auto expected = rank["predicted_ms"].get<std::vector<double>>();
            QCOMPARE(got.ms.size(), expected.size());
            for (size_t c = 0; c < got.ms.size(); ++c) {
                // The CLI prints JSON doubles with full round-trip precision: equal, not close.
                QCOMPARE(got.ms[c], expected[c]);
                QCOMPARE(got.excluded[c], 0);
                ++compared;
            }
            std::vector<int32_t> order(rank["order"].begin(), rank["order"].end());
            QCOMPARE(got.kept, order);
        }
        QVERIFY(compared > 1000);
        diode_selector_close(all);
        diode_model_close(model);
    }

    // What the model does not decide is a reason, counted, with plain's kernel kept: an ATen-only
    // lowering, an op or dtype no model knows, a layout the training data never had. Bad input is an
    // error naming the field or row, and is not counted.
    void decisionsSayWhyTheModelDidNotDecide() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        diode_selector *s = diode_selector_open(model, nullptr);
        QVERIFY2(s, diode_last_error());
        Rows o;
        o.names = {"extern_kernels.addmm", "extern_kernels.bias_addmm", "mm"};
        o.rows = {0, 0, 0, 0,  0,  0, 0, 0,  -1, -1, 0, 1, 0, 0,  0,
                  0, 0, 0, -1, -1, 1, 2, 64, 64, 32, 8, 3, 4, -1, -1};
        o.count = 3;
        // The reason a decision gives, with plain's kernel (bias_addmm, where offered) kept alone.
        const auto reason = [&](const char *op, const char *dtype, int32_t aT, size_t count) {
            o.problem = {op, dtype, 1, 128, 256, 512, aT, 1};
            o.count = count;
            const Outcome got = decide(s, o);
            if (got.rc != 0)
                return QString("error: ") + diode_last_error();
            if (!got.d.selected && (got.kept != std::vector<int32_t>{1} || got.d.plain != 1))
                return QString("plain's kernel not kept");
            return QString(got.d.not_selected);
        };
        QCOMPARE(reason("addmm", "bf16", 0, 2), QString("only_aten"));
        QCOMPARE(reason("conv", "bf16", 0, 3), QString("unscorable_op_conv"));
        QCOMPARE(reason("baddbmm", "bf16", 0, 3), QString("unscorable_op_baddbmm")); // schema 1: no input
        QCOMPARE(reason("addmm", "torch.int8", 0, 3), QString("unscorable_dtype"));
        QCOMPARE(reason("addmm", "bfloat16", 1, 3), QString("unscorable_unseen_a_transposed"));
        QCOMPARE(reason("addmm", "bfloat16", 0, 3), QString()); // decided: torch's dtype name is read
        o.problem = {"addmm", "bf16", 1, 0, 256, 512, 0, 1};
        QCOMPARE(decide(s, o).rc, -1);
        QVERIFY2(QString(diode_last_error()).contains("'M'"), diode_last_error());
        o.problem.m = 128;
        o.rows[20] = 7; // an unknown kind
        QCOMPARE(decide(s, o).rc, -1);
        QVERIFY2(QString(diode_last_error()).contains("rows[2]: kind 7"), diode_last_error());
        o.rows[20] = 1, o.rows[21] = 9; // a name past the table
        QCOMPARE(decide(s, o).rc, -1);
        QVERIFY2(QString(diode_last_error()).contains("rows[2]: name index 9"), diode_last_error());
        QCOMPARE(diode_decide_gemm(s, &o.problem, nullptr, nullptr, 0, nullptr, 3, nullptr, nullptr, nullptr,
                                   nullptr),
                 -1);

        char *text = diode_selector_counters(s);
        QVERIFY2(text, diode_last_error());
        const auto counters = nlohmann::json::parse(text)["gemm_kernel"];
        diode_free(text);
        QCOMPARE(counters["decisions"].get<int>(), 6);
        QCOMPARE(counters["selected"].get<int>(), 1);
        QCOMPARE(counters["not_selected"], nlohmann::json({{"only_aten", 1},
                                                           {"unscorable_op_conv", 1},
                                                           {"unscorable_op_baddbmm", 1},
                                                           {"unscorable_dtype", 1},
                                                           {"unscorable_unseen_a_transposed", 1}}));
        diode_selector_reset_counters(s);
        text = diode_selector_counters(s);
        QCOMPARE(nlohmann::json::parse(text)["gemm_kernel"]["decisions"].get<int>(), 0);
        diode_free(text);
        diode_selector_close(s);
        diode_model_close(model);
    }

    // Options are read by name; the margin and regime in use are the package's where none is given.
    void selectorOptionsAreNamedAndResolved() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        diode_selector *s = diode_selector_open(model, "{}");
        QVERIFY2(s, diode_last_error());
        char *text = diode_selector_options(s);
        const auto options = nlohmann::json::parse(text);
        diode_free(text);
        diode_selector_close(s);
        QCOMPARE(options["regime"], nlohmann::json("warm")); // Inductor's benchmark: a warm truth
        QCOMPARE(options["margin"].get<double>(), diode::defaultMargin(diode::Regime::Warm));
        QCOMPARE(options["fallback"], nlohmann::json("plain"));
        for (const auto &[json, key] : {std::pair{R"({"top_k": 0})", "top_k"},
                                        {R"({"regime": "tepid"})", "regime 'tepid'"},
                                        {R"({"ops": ["conv"]})", "conv"},
                                        {R"({"fallback": "raise"})", "fallback"},
                                        {R"({"topk": 1})", "unknown key 'topk'"},
                                        {"[1", "selector options"}}) {
            QVERIFY(!diode_selector_open(model, json));
            QVERIFY2(QString(diode_last_error()).contains(key), diode_last_error());
        }
        QVERIFY(!diode_selector_open(nullptr, nullptr));
        diode_model_close(model);
    }

    // Plain's kernel without predictions is the policy's rule: bias_addmm where offered, else the
    // first ATen kernel; none without ATen; NULL arrays are an error, not "none".
    void plainCandidateIsThePolicysRule() {
        const char *kinds[] = {"triton", "aten", "aten"};
        const std::string plain(diode::kPlainAddmmKernel);
        const char *addmm[] = {"mm", "extern_kernels.addmm", plain.c_str()};
        QCOMPARE(diode_plain_candidate(kinds, addmm, 3), 2);
        const char *mm[] = {"mm", "extern_kernels.mm", "extern_kernels.addmm"};
        QCOMPARE(diode_plain_candidate(kinds, mm, 3), 1);
        QCOMPARE(diode_plain_candidate(kinds, mm, 1), -1);
        QCOMPARE(diode_plain_candidate(kinds, mm, 0), -1);
        QCOMPARE(diode_plain_candidate(nullptr, mm, 3), -2);
        QVERIFY2(QString(diode_last_error()).contains("kinds and names"), diode_last_error());
    }

    // Problem lines read by core's reader for the Python tools: every field, B and the layouts
    // defaulted; a bad line names the file, the line and the field.
    void problemLinesAreReadByCoresReader() {
        const QString good = m_dir.filePath("good.jsonl");
        QFile f(good);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"op\":\"bmm\",\"dtype\":\"fp16\",\"M\":2,\"N\":3,\"K\":4,\"family\":\"x\"}\n\n");
        f.close();
        char *text = diode_read_problem_lines(good.toUtf8().constData());
        QVERIFY2(text, diode_last_error());
        const auto lines = nlohmann::json::parse(text);
        diode_free(text);
        QCOMPARE(lines.size(), size_t(1));
        QCOMPARE(lines[0]["B"].get<int>(), 1);
        QCOMPARE(lines[0]["a_transposed"], nlohmann::json(false));
        QCOMPARE(lines[0]["family"], nlohmann::json("x"));
        QVERIFY(f.open(QIODevice::Append));
        f.write("{\"op\":\"mm\",\"dtype\":\"bf16\",\"N\":3,\"K\":4}\n");
        f.close();
        QVERIFY(!diode_read_problem_lines(good.toUtf8().constData()));
        QVERIFY2(QString(diode_last_error()).contains(good + ": line 3"), diode_last_error());
        QVERIFY2(QString(diode_last_error()).contains("'M'"), diode_last_error());
        QVERIFY(!diode_read_problem_lines(m_dir.path().toUtf8().constData()));
        QVERIFY2(QString(diode_last_error()).contains("is a directory"), diode_last_error());
    }

    void badPackagesAreRefusedWithTheFault() {
        QFile src(m_package);
        QVERIFY(src.open(QIODevice::ReadOnly));
        const QByteArray bytes = src.readAll();
        const QString truncated = m_dir.filePath("truncated.diode");
        QFile t(truncated);
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write(bytes.left(bytes.size() / 2));
        t.close();
        QVERIFY(!diode_model_open(truncated.toUtf8().constData()));
        QVERIFY2(QString(diode_last_error()).contains("truncated"), diode_last_error());

        QByteArray flipped = bytes;
        flipped[flipped.size() - 100] = char(flipped[flipped.size() - 100] ^ 0x10);
        const QString bad = m_dir.filePath("flipped.diode");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(flipped);
        f.close();
        QVERIFY(!diode_model_open(bad.toUtf8().constData()));
        QVERIFY2(QString(diode_last_error()).contains("checksum mismatch"), diode_last_error());

        QVERIFY(!diode_model_open(m_dir.filePath("absent.diode").toUtf8().constData()));
        QVERIFY2(QString(diode_last_error()).contains("absent.diode"), diode_last_error());
        QVERIFY(!diode_model_open(nullptr));
    }

    // One selector deciding from several threads (compiles run in threads): every decision as a
    // single thread makes it, each counted once.
    void concurrentDecisionsFromSeveralThreads() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY(model);
        diode_selector *s = diode_selector_open(model, R"({"top_k": 3})");
        QVERIFY(s);
        std::vector<Rows> abi;
        std::vector<Outcome> expected;
        for (const auto &r : heldout()) {
            abi.push_back(toRows(r));
            expected.push_back(decide(s, abi.back()));
            QCOMPARE(expected.back().rc, 0);
        }
        diode_selector_reset_counters(s);
        std::atomic<int> mismatches{0}, failures{0};
        std::vector<std::thread> threads;
        constexpr int kThreads = 8, kRounds = 20;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int round = 0; round < kRounds; ++round) {
                    for (size_t i = size_t(t) % abi.size(), n = 0; n < abi.size();
                         ++n, i = (i + 1) % abi.size()) {
                        const Outcome got = decide(s, abi[i]);
                        if (got.rc != 0)
                            ++failures;
                        else if (got.kept != expected[i].kept ||
                                 !std::equal(got.ms.begin(), got.ms.end(), expected[i].ms.begin(),
                                             [](double a, double b) { return a == b || (a != a && b != b); }))
                            ++mismatches;
                    }
                }
            });
        }
        for (auto &th : threads)
            th.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(mismatches.load(), 0);
        char *text = diode_selector_counters(s);
        const auto counters = nlohmann::json::parse(text)["gemm_kernel"];
        diode_free(text);
        QCOMPARE(counters["decisions"].get<size_t>(), kThreads * kRounds * abi.size());
        // Every GEMM was seen before: each one the model decided was scored from the cache.
        QVERIFY(counters["selected"].get<size_t>() > 0);
        QCOMPARE(counters["scores_reused"], counters["selected"]);
        diode_selector_close(s);
        diode_model_close(model);
    }
};

QTEST_GUILESS_MAIN(TestPluginAbi)
#include "tst_plugin_abi.moc"
