// Training-time benchmark (not a test): 100,000 rows for 30 epochs with all cores.
// Rows are the shipped H200 dataset's problems repeated with M shifted (so each copy is a
// distinct problem) and times scaled accordingly. Usage: bench_train DB [ROWS] [EPOCHS] [MEMBERS]
#include "diode/train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

using namespace diode;

int main(int argc, char **argv) {
    if (argc < 2) {
        fmt::print(stderr, "usage: bench_train DB [ROWS] [EPOCHS] [MEMBERS]\n");
        return 2;
    }
    Store store(argv[1], Store::Mode::ReadOnly);
    const auto base = loadDataset(store, std::nullopt).problems; // the store's default method
    const size_t rows = argc > 2 ? size_t(std::atol(argv[2])) : 100000;
    TrainOptions o;
    o.epochs = argc > 3 ? std::atoi(argv[3]) : 30;
    o.patience = 1 << 30;
    if (argc > 4)
        o.members = std::atoi(argv[4]);
    std::vector<TrainingProblem> data;
    size_t n = 0;
    for (int copy = 0; n < rows; ++copy)
        for (const auto &p : base) {
            if (n >= rows)
                break;
            TrainingProblem q = p;
            q.problem.m += copy;
            for (auto &t : q.timesMs)
                if (t)
                    *t *= double(q.problem.m) / double(p.problem.m);
            for (const auto &t : q.timesMs)
                n += t.has_value();
            data.push_back(std::move(q));
        }
    const auto t0 = std::chrono::steady_clock::now();
    const auto res = train(data, o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{} timed rows ({} problems), {} network(s) x {} epochs ({} in all), {} threads: {:.1f} s\n",
               n, data.size(), o.members, o.epochs, res.epochsRun, std::thread::hardware_concurrency(), s);
    return 0;
}
