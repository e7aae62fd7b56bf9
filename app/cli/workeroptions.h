#pragma once

#include "diode/hardware.h"
#include "diode/sweepsession.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace diode::cli {

/// `--workers-per-gpu` and `--gpus`, as `diode sweep` and `diode characterise` take them.
struct WorkerOptions {
    int perGpu = 1;
    std::string gpus;

    void addTo(CLI::App *c) {
        c->add_option("--workers-per-gpu", perGpu,
                      "workers on each GPU: they compile in parallel and take turns timing (6 on an H100 "
                      "or H200 with 16 cores: docs/BENCHMARKS.md, \"Sweep speed\")")
            ->check(CLI::Range(1, SweepSession::kMaxWorkersPerGpu))
            ->capture_default_str();
        c->add_option("--gpus", gpus,
                      "GPUs to sweep on, as CUDA_VISIBLE_DEVICES names them (0,1,3), or 'all'; each gets "
                      "--workers-per-gpu workers (default: the one GPU the environment gives)");
    }
    /// Into a sweep request's fields; "all" is resolved here (InvalidInput when there is no GPU).
    void apply(int &workersPerGpu, std::vector<std::string> &gpuIds) const {
        workersPerGpu = perGpu;
        if (!gpus.empty())
            gpuIds = gpuList(gpus);
    }
};

} // namespace diode::cli
