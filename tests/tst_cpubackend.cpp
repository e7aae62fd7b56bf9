#include "testutil.h"

#include "diode/sweep/cpubackend.h"

#include <random>
#include <thread>

using namespace diode;

class TestCpuBackend : public QObject {
    Q_OBJECT
private slots:
    // The reference GEMM must compute C = A @ B (+ bias) for every tiling, thread count and layout.
    void tiledGemmMatchesNaive_data() {
        QTest::addColumn<int>("op");
        QTest::addColumn<bool>("aT");
        QTest::addColumn<bool>("bT");
        QTest::addColumn<int>("bm");
        QTest::addColumn<int>("threads");
        QTest::newRow("mm") << int(GemmOp::Mm) << false << false << 16 << 1;
        QTest::newRow("mm Bt 2 threads") << int(GemmOp::Mm) << false << true << 8 << 2;
        QTest::newRow("mm At odd tile") << int(GemmOp::Mm) << true << false << 7 << 3;
        QTest::newRow("addmm") << int(GemmOp::Addmm) << false << true << 32 << 2;
        QTest::newRow("bmm") << int(GemmOp::Bmm) << true << true << 5 << 2;
        QTest::newRow("baddbmm") << int(GemmOp::Baddbmm) << false << true << 6 << 2;
    }
    void tiledGemmMatchesNaive() {
        QFETCH(int, op);
        QFETCH(bool, aT);
        QFETCH(bool, bT);
        QFETCH(int, bm);
        QFETCH(int, threads);
        GemmProblem p{GemmOp(op), DType::FP32, isBatched(GemmOp(op)) ? 3 : 1, 37, 29, 41, aT, bT};
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> d(-1, 1);
        std::vector<float> a(size_t(p.batch * p.m * p.k)), b(size_t(p.batch * p.k * p.n)),
            bias(size_t(p.batch * p.n)); // addmm reads row 0; baddbmm's addend [B,1,N] a row per batch
        for (auto *v : {&a, &b, &bias})
            for (auto &x : *v)
                x = d(rng);
        std::vector<float> c(size_t(p.batch * p.m * p.n), std::nanf(""));
        KernelConfig cfg;
        cfg.kind = "cpu";
        cfg.name = "tiled";
        cfg.blockM = bm;
        cfg.blockN = 11;
        cfg.blockK = 13;
        cfg.threads = threads;
        const bool addmm = p.op == GemmOp::Addmm, baddbmm = p.op == GemmOp::Baddbmm;
        tiledGemm(p, a.data(), b.data(), addmm || baddbmm ? bias.data() : nullptr, c.data(), cfg);
        double maxErr = 0;
        for (int64_t bb = 0; bb < p.batch; ++bb)
            for (int64_t i = 0; i < p.m; ++i)
                for (int64_t j = 0; j < p.n; ++j) {
                    double ref = addmm ? bias[size_t(j)] : baddbmm ? bias[size_t(bb * p.n + j)] : 0.0;
                    for (int64_t k = 0; k < p.k; ++k) {
                        const float av = aT ? a[size_t(bb * p.m * p.k + k * p.m + i)]
                                            : a[size_t(bb * p.m * p.k + i * p.k + k)];
                        const float bv = bT ? b[size_t(bb * p.k * p.n + j * p.k + k)]
                                            : b[size_t(bb * p.k * p.n + k * p.n + j)];
                        ref += double(av) * bv;
                    }
                    maxErr = std::max(maxErr, std::abs(ref - c[size_t(bb * p.m * p.n + i * p.n + j)]));
                }
        QVERIFY2(maxErr < 1e-4, qPrintable(QString::number(maxErr))); // NaN fails too
    }

    void measuresEveryConfigWithPositiveMedian() {
        SweepPlan plan;
        plan.repeats = 3;
        for (int t : {1, 2}) {
            KernelConfig c;
            c.kind = "cpu";
            c.name = "tiled";
            c.blockM = c.blockN = c.blockK = 32;
            c.threads = t;
            plan.cpuConfigs.push_back(c);
        }
        CpuBackend backend;
        std::vector<Measurement> got;
        std::atomic<bool> cancel{false};
        const auto out = backend.measure(
            GemmProblem{GemmOp::Mm, DType::FP32, 1, 128, 128, 128, false, false}, plan,
            {plan.cpuConfigs[0].key()}, [&](const Measurement &m) { got.push_back(m); }, cancel);
        QVERIFY(out.status == MeasureStatus::Ok);
        QCOMPARE(got.size(), size_t(1)); // the first config was in `skip`
        QCOMPARE(got[0].config.threads, 2);
        QVERIFY(got[0].timeMs && *got[0].timeMs > 0);
    }

    // A GEMM that takes a minute stops between tiles and says it did, so Ctrl-C and the plan's
    // timeout_s need not wait for it to end.
    void gemmStopsBetweenTiles() {
        const GemmProblem p{GemmOp::Mm, DType::FP32, 1, 256, 256, 256, false, false};
        std::vector<float> a(256 * 256, 1.f), b(256 * 256, 1.f), c(256 * 256, 0.f);
        KernelConfig cfg;
        cfg.kind = "cpu";
        cfg.name = "tiled";
        cfg.blockM = cfg.blockN = cfg.blockK = 32;
        cfg.threads = 2;
        std::atomic<bool> cancel{true};
        QVERIFY(!tiledGemm(p, a.data(), b.data(), nullptr, c.data(), cfg, GemmStop{&cancel}));
        QCOMPARE(c[size_t(255 * 256 + 255)], 0.f); // the last tile was never computed
        const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        QVERIFY(!tiledGemm(p, a.data(), b.data(), nullptr, c.data(), cfg, GemmStop{nullptr, past}));
        cancel = false;
        QVERIFY(tiledGemm(p, a.data(), b.data(), nullptr, c.data(), cfg, GemmStop{&cancel}));
        QCOMPARE(c[size_t(255 * 256 + 255)], 256.f);
    }

    // A config still running when the problem's timeout_s passes is stored as a timeout, never
    // with the time of a multiply cut short; a cancel drops it (the problem stays unfinished).
    void configPastTheDeadlineIsATimeoutAndCancelDropsIt() {
        SweepPlan plan;
        plan.repeats = 3;
        plan.timeoutS = 0.05; // a 1024^3 fp32 GEMM takes far longer on the cpu backend's tiles
        KernelConfig c;
        c.kind = "cpu";
        c.name = "tiled";
        c.blockM = c.blockN = c.blockK = 32;
        c.threads = 1;
        plan.cpuConfigs = {c};
        const GemmProblem big{GemmOp::Mm, DType::FP32, 1, 1024, 1024, 1024, false, false};
        CpuBackend backend;
        std::vector<Measurement> got;
        std::atomic<bool> cancel{false};
        auto out = backend.measure(
            big, plan, {}, [&](const Measurement &m) { got.push_back(m); }, cancel);
        QVERIFY(!out.cancelled);
        QCOMPARE(got.size(), size_t(1));
        QVERIFY(got[0].status == MeasureStatus::Timeout);
        QVERIFY(!got[0].timeMs);
        QVERIFY2(QString::fromStdString(got[0].error).contains("reached while this config ran"),
                 got[0].error.c_str());

        got.clear();
        plan.timeoutS = 3600;
        plan.repeats = 50; // seconds of work on any machine: the cancel lands inside it
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        out = backend.measure(
            big, plan, {}, [&](const Measurement &m) { got.push_back(m); }, cancel);
        stopper.join();
        QVERIFY(out.cancelled);
        QVERIFY(got.empty());
    }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "tst_cpubackend.moc"
