#include "testutil.h"

#include "diode/packagechoice.h"
#include "diode/problemjson.h"
#include "diode/selectionpolicy.h"
#include "diode/timingagreement.h"
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

    struct Owned {
        diode_problem problem{};
        std::vector<diode_candidate> candidates;
        std::vector<std::string> strings; // keeps the char pointers alive
    };

    static Owned toAbi(const diode::ProblemRecord &r) {
        Owned o;
        o.strings.reserve(2 + 2 * r.candidates.size());
        o.strings.emplace_back(diode::toString(r.problem.op));
        o.strings.emplace_back(diode::toString(r.problem.dtype));
        o.problem = {o.strings[0].c_str(),  o.strings[1].c_str(), r.problem.batch,
                     r.problem.m,           r.problem.n,          r.problem.k,
                     r.problem.aTransposed, r.problem.bTransposed};
        for (const auto &m : r.candidates) {
            const auto &c = m.config;
            o.strings.push_back(c.kind);
            const char *kind = o.strings.back().c_str();
            o.strings.push_back(c.name);
            const char *name = o.strings.back().c_str();
            auto flag = [&](const char *key) {
                return c.extra.is_object() && c.extra.contains(key) && c.extra[key].is_boolean()
                           ? int(c.extra[key].get<bool>())
                           : -1;
            };
            o.candidates.push_back({kind, name, c.blockM, c.blockN, c.blockK, c.groupM, c.numStages,
                                    c.numWarps, flag("EVEN_K"), flag("ALLOW_TF32")});
        }
        return o;
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

    // The shipped package (feature schema 1) has no input for baddbmm; an unknown op is an error.
    void scoresOpFollowsThePackagesSchema() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        QCOMPARE(diode_model_scores_op(model, "bmm"), 1);
        QCOMPARE(diode_model_scores_op(model, "baddbmm"), 0);
        QCOMPARE(diode_model_scores_op(model, "conv"), -1);
        QCOMPARE(QString(diode_last_error()),
                 QString("diode_model_scores_op: op 'conv' is not one of mm, addmm, bmm, baddbmm"));
        diode_model_close(model);
    }

    void scoringEqualsDiodeRank() {
        QString out, err;
        QCOMPARE(testutil::runCli({"rank", "--package", m_package, "--input", m_heldout}, &out, &err), 0);
        const QStringList lines = out.split('\n', Qt::SkipEmptyParts);
        const auto records = heldout();
        QCOMPARE(lines.size(), int(records.size()));
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        size_t compared = 0;
        for (size_t i = 0; i < records.size(); ++i) {
            const auto rank = nlohmann::json::parse(lines[int(i)].toStdString());
            Owned o = toAbi(records[i]);
            std::vector<double> ms(o.candidates.size());
            QCOMPARE(
                diode_model_score(model, &o.problem, o.candidates.data(), o.candidates.size(), ms.data()), 0);
            const auto expected = rank["predicted_ms"].get<std::vector<double>>();
            QCOMPARE(ms.size(), expected.size());
            for (size_t c = 0; c < ms.size(); ++c) {
                // The CLI prints JSON doubles with full round-trip precision: equal, not close.
                QCOMPARE(ms[c], expected[c]);
                ++compared;
            }
            // The JSON entry point returns exactly what `diode rank` prints.
            std::string line = diode::toJson(records[i]).dump();
            char *json = diode_model_rank_json(model, line.c_str());
            QVERIFY(json);
            QCOMPARE(nlohmann::json::parse(json)["order"], rank["order"]);
            diode_free(json);
        }
        QVERIFY(compared > 1000);
        diode_model_close(model);
    }

    // The selector's fast path: candidates as one packed int32 array give the same predictions,
    // bit for bit, as the struct path; a bad row is refused naming its index.
    void packedRowsScoreAsStructsDo() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        size_t compared = 0;
        for (const auto &record : heldout()) {
            Owned o = toAbi(record);
            std::vector<const char *> names;
            std::vector<int32_t> rows;
            for (const auto &c : o.candidates) {
                auto it = std::find_if(names.begin(), names.end(),
                                       [&](const char *n) { return std::strcmp(n, c.name) == 0; });
                if (it == names.end())
                    it = names.insert(names.end(), c.name);
                rows.insert(rows.end(), {std::strcmp(c.kind, "aten") == 0 ? 0 : 1,
                                         int32_t(it - names.begin()), c.block_m, c.block_n, c.block_k,
                                         c.group_m, c.num_stages, c.num_warps, c.even_k, c.allow_tf32});
            }
            const size_t n = o.candidates.size();
            std::vector<double> viaStructs(n), viaRows(n);
            QCOMPARE(diode_model_score(model, &o.problem, o.candidates.data(), n, viaStructs.data()), 0);
            QCOMPARE(diode_model_score_packed(model, &o.problem, names.data(), names.size(), rows.data(), n,
                                              viaRows.data()),
                     0);
            QCOMPARE(viaRows, viaStructs);
            // The selector's one call: the same scores, and with margin 0 and top-1 the arg-min.
            std::vector<double> selected(n);
            std::vector<int32_t> kept(n, -1);
            const diode_policy argmin{1, 0.0, INFINITY};
            QCOMPARE(diode_model_select_packed(model, &o.problem, names.data(), names.size(), rows.data(), n,
                                               &argmin, 0, selected.data(), kept.data()),
                     1);
            QCOMPARE(selected, viaStructs);
            QCOMPARE(size_t(kept[0]),
                     size_t(std::min_element(viaStructs.begin(), viaStructs.end()) - viaStructs.begin()));
            compared += n;
        }
        QVERIFY(compared > 1000);
        diode_problem p{"mm", "bf16", 1, 128, 256, 512, 0, 1};
        const char *names[] = {"extern_kernels.mm"};
        int32_t rows[2 * DIODE_PACKED_FIELDS] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1,
                                                 0, 3, 0, 0, 0, 0, 0, 0, -1, -1};
        double ms[2] = {-1, -1};
        QCOMPARE(diode_model_score_packed(model, &p, names, 1, rows, 2, ms), -1);
        QVERIFY2(QString(diode_last_error()).contains("rows[1]"), diode_last_error());
        QCOMPARE(ms[0], -1.0);         // nothing written on failure
        rows[DIODE_PACKED_FIELDS] = 7; // an unknown kind
        QCOMPARE(diode_model_score_packed(model, &p, names, 1, rows, 2, ms), -1);
        QVERIFY2(QString(diode_last_error()).contains("kind 7"), diode_last_error());
        diode_model_close(model);
    }

    // The policy through the ABI: the package's margin (the shipped ones carry none: the regime's
    // default), a repeat that reuses given scores, and bad input refused by name.
    void selectAppliesThePolicy() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        QCOMPARE(diode_policy_margin(model, "warm"), 0.10);
        QCOMPARE(diode_policy_margin(nullptr, "cold"), 0.08);
        QVERIFY(diode_policy_margin(model, "tepid") < 0);
        QVERIFY2(QString(diode_last_error()).contains("regime 'tepid'"), diode_last_error());
        diode_problem p{"mm", "bf16", 1, 128, 256, 512, 0, 1};
        const char *names[] = {"extern_kernels.mm", "mm"};
        int32_t rows[2 * DIODE_PACKED_FIELDS] = {0, 0, 0,  0,  0,  0, 0, 0, -1, -1,
                                                 1, 1, 64, 64, 32, 8, 3, 4, -1, -1};
        double ms[2] = {1.0, 0.95}; // given: Triton predicted 5 % faster
        int32_t kept[2] = {-1, -1};
        const diode_policy guard{1, 0.10, INFINITY}, off{1, 0.0, INFINITY};
        QCOMPARE(diode_model_select_packed(model, &p, names, 2, rows, 2, &guard, 1, ms, kept), 1);
        QCOMPARE(kept[0], 0); // within the margin: ATen
        QCOMPARE(diode_model_select_packed(model, &p, names, 2, rows, 2, &off, 1, ms, kept), 1);
        QCOMPARE(kept[0], 1);
        QCOMPARE(ms[1], 0.95); // the given scores were used, not replaced
        const diode_policy bad{0, 0.1, INFINITY};
        QCOMPARE(diode_model_select_packed(model, &p, names, 2, rows, 2, &bad, 1, ms, kept), -1);
        QVERIFY2(QString(diode_last_error()).contains("top_k"), diode_last_error());
        QCOMPARE(diode_model_select_packed(model, &p, names, 2, rows, 2, nullptr, 1, ms, kept), -1);
        QVERIFY2(QString(diode_last_error()).contains("policy"), diode_last_error());
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

    // The package knows what its training data covered: every held-out problem is like one it
    // was trained on; a column-major A (a training step's dW) is not, and the call says which
    // flag. The answer is bounded by why_len; a bad problem is an error, not an answer.
    void unseenNamesTheFlagTheTrainingDataNeverHad() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY2(model, diode_last_error());
        char why[64] = "untouched";
        for (const auto &record : heldout()) {
            Owned o = toAbi(record);
            QCOMPARE(diode_model_unseen(model, &o.problem, why, sizeof why), 0);
            QCOMPARE(QString(why), QString());
        }
        diode_problem dW{"mm", "bf16", 1, 1024, 4096, 8192, 1, 0};
        QCOMPARE(diode_model_unseen(model, &dW, why, sizeof why), 1);
        QCOMPARE(QString(why), QString("a_transposed = 1"));
        char tiny[4];
        QCOMPARE(diode_model_unseen(model, &dW, tiny, sizeof tiny), 1);
        QCOMPARE(QString(tiny), QString("a_t"));
        QCOMPARE(diode_model_unseen(model, &dW, nullptr, 0), 1);
        diode_problem bad{"conv", "bf16", 1, 1, 1, 1, 0, 0};
        QCOMPARE(diode_model_unseen(model, &bad, why, sizeof why), -1);
        QVERIFY2(QString(diode_last_error()).contains("conv"), diode_last_error());
        diode_model_close(model);
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

    void badCandidatesNameTheField() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY(model);
        diode_problem p{"mm", "bf16", 1, 128, 256, 512, 0, 1};
        diode_candidate c[2] = {{"aten", "extern_kernels.mm", 0, 0, 0, 0, 0, 0, -1, -1},
                                {"cutlass", "gemm", 128, 128, 64, 8, 3, 4, -1, -1}};
        double ms[2] = {-1, -1};
        QCOMPARE(diode_model_score(model, &p, c, 2, ms), -1);
        QVERIFY2(QString(diode_last_error()).contains("candidates[1]"), diode_last_error());
        QVERIFY2(QString(diode_last_error()).contains("cutlass"), diode_last_error());
        QCOMPARE(ms[0], -1.0); // nothing written on failure

        diode_problem op{"conv", "bf16", 1, 128, 256, 512, 0, 0};
        QCOMPARE(diode_model_score(model, &op, c, 1, ms), -1);
        QVERIFY2(QString(diode_last_error()).contains("op 'conv'"), diode_last_error());
        diode_problem zero{"mm", "fp16", 1, 0, 256, 512, 0, 0};
        QCOMPARE(diode_model_score(model, &zero, c, 1, ms), -1);
        QVERIFY2(QString(diode_last_error()).contains("'M'"), diode_last_error());
        QCOMPARE(diode_model_score(model, &p, c, 1, ms), 0);
        QVERIFY(ms[0] > 0 && std::isfinite(ms[0]));
        diode_model_close(model);
    }

    void concurrentScoringFromSeveralThreads() {
        diode_model *model = diode_model_open(m_package.toUtf8().constData());
        QVERIFY(model);
        const auto records = heldout();
        std::vector<Owned> abi;
        std::vector<std::vector<double>> expected;
        for (const auto &r : records) {
            abi.push_back(toAbi(r));
            expected.emplace_back(abi.back().candidates.size());
            QCOMPARE(diode_model_score(model, &abi.back().problem, abi.back().candidates.data(),
                                       abi.back().candidates.size(), expected.back().data()),
                     0);
        }
        std::atomic<int> mismatches{0}, failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                for (int round = 0; round < 20; ++round) {
                    for (size_t i = size_t(t) % abi.size(), n = 0; n < abi.size();
                         ++n, i = (i + 1) % abi.size()) {
                        std::vector<double> ms(abi[i].candidates.size());
                        if (diode_model_score(model, &abi[i].problem, abi[i].candidates.data(), ms.size(),
                                              ms.data()) != 0)
                            ++failures;
                        else if (ms != expected[i])
                            ++mismatches;
                    }
                }
            });
        }
        for (auto &th : threads)
            th.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(mismatches.load(), 0);
        diode_model_close(model);
    }
};

QTEST_GUILESS_MAIN(TestPluginAbi)
#include "tst_plugin_abi.moc"
