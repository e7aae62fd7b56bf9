#pragma once

#include "diode/sweep/hardware.h"
#include "diode/sweep/sweepsession.h"

#include "validators.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace diode::cli {

/// `--workers-per-gpu` and `--gpus`, as `diode sweep` and `diode characterise` take them.
struct WorkerOptions {
    std::string perGpu = "auto";
    std::string gpus;

    void addTo(CLI::App *c) {
        c->add_option("--workers-per-gpu", perGpu,
                      "workers on each GPU, or auto: they compile in parallel and take turns timing; auto "
                      "gives 6 on a 16-core host with one GPU (docs/BENCHMARKS.md, \"Sweep speed\"), fewer "
                      "with fewer cores, 1 for the cpu backend")
            ->check(CLI::IsMember({"auto"}) | integerIn(1, SweepSession::kMaxWorkersPerGpu))
            ->capture_default_str();
        c->add_option("--gpus", gpus,
                      "GPUs to sweep on, as CUDA_VISIBLE_DEVICES names them (0,1,3), or 'all'; each gets "
                      "--workers-per-gpu workers (default: the one GPU the environment gives)");
    }
    /// --workers-per-gpu as a count: SweepSession::kAutoWorkers for auto.
    int perGpuCount() const { return perGpu == "auto" ? SweepSession::kAutoWorkers : std::stoi(perGpu); }
    /// Into a sweep request's fields; "all" is resolved here (InvalidInput when there is no GPU).
    void apply(int &workersPerGpu, std::vector<std::string> &gpuIds) const {
        workersPerGpu = perGpuCount();
        if (!gpus.empty())
            gpuIds = gpuList(gpus);
    }
};

} // namespace diode::cli
