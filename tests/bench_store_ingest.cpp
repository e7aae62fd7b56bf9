// Store ingest benchmark (not a test): measurements per second through the sweep's own write
// path (StoreWriter: one writer thread, batched transactions, WAL) into a fresh SQLite file.
// Usage: bench_store_ingest [DB_PATH] [PROBLEMS] [CONFIGS_PER_PROBLEM]

#include "diode/store/storewriter.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

using namespace diode;

int main(int argc, char **argv) {
    const std::string path = argc > 1 ? argv[1] : "/tmp/diode-ingest-bench.db";
    const int problems = argc > 2 ? std::atoi(argv[2]) : 25000;
    const int configs = argc > 3 ? std::atoi(argv[3]) : 20;
    for (const char *suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path + suffix);

    std::vector<KernelConfig> cfgs;
    for (int i = 0; i < configs; ++i) {
        KernelConfig c;
        c.kind = "triton";
        c.name = "mm";
        c.blockM = 16 << (i % 5);
        c.blockN = 32 << (i / 5 % 4);
        c.blockK = 32;
        c.groupM = 8;
        c.numStages = 2 + i / 20;
        c.numWarps = 4;
        cfgs.push_back(c);
    }
    int64_t runId;
    {
        Store s(path);
        RunInfo r;
        r.backend = "bench";
        runId = s.createRun(r);
    }
    const auto t0 = std::chrono::steady_clock::now();
    {
        StoreWriter w(path);
        for (int p = 0; p < problems; ++p) {
            const GemmProblem prob{
                GemmOp(p % 3), DType(p / 3 % 3), p % 3 == 2 ? 4 : 1, 1 + p, 4096, 4096, false, true};
            for (int i = 0; i < configs; ++i) {
                Measurement m;
                m.config = cfgs[size_t(i)];
                m.timeMs = 0.01 + 1e-4 * i;
                w.push(StoreWriter::MeasurementRow{runId, prob, std::move(m)});
            }
            w.push(StoreWriter::ProblemDone{runId, prob, "ok", "", 1.0});
        }
        w.flush();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t n = int64_t(problems) * configs;
    Store check(path, Store::Mode::ReadOnly);
    fmt::print("{} measurements ({} problems x {} configs) in {:.2f} s: {:.0f} measurements/s; stored {}\n",
               n, problems, configs, s, n / s, check.measurementCount());
    return check.measurementCount() == n ? 0 : 1;
}
