#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace diode {

/// The kernel sweep: the plugin's own tool (`python3 -m torch_diode.tools.kernel_sweep`) measures
/// this GPU's pointwise and reduction kernels under fixed configurations, and small-M GEMMs and
/// one-token attention in both forms, as kernel and site lines (docs/FORMATS.md). Cases of this GPU in
/// `out` are skipped, so a run stopped part way continues. What `diode sweep-kernels` runs, and
/// `diode characterise` after its GEMM sweep. With `steps`, the step sweep instead
/// (`torch_diode.tools.step_kernels`): the kernels and small-M sites of those model steps, each timed
/// inside its step.
struct KernelSweepRequest {
    std::string python; ///< the interpreter ("" = $DIODE_PYTHON or python3)
    std::string gpu;    ///< the GPU it measures on, as CUDA_VISIBLE_DEVICES names it ("": the environment's)
    std::string out;    ///< the lines file, appended to
    std::string kinds = "kernel,site";
    static constexpr int kMaxWorkers = 64;
    int workers = 4; ///< cases compiled and timed at once (they share the GPU by its lock), 1 to kMaxWorkers
    std::string families; ///< comma-separated model families ("": all)
    /// a regular expression the case names must match ("": all); with steps, the names of the steps'
    /// kernels (their fused operations, as a step line names them after "SCENARIO/")
    std::string match;
    std::string configsFrom; ///< a package whose kernel-config model gives the decomposed forms' configs
    /// kernel line files whose kernels' fastest configurations beyond their portfolio are measured on
    /// every kernel too (fastestBeyondPortfolio), comma-separated ("": none)
    std::string extraConfigsFrom;
    /// model steps whose own kernels and sites (as `kinds` says) are measured (torch_diode.tools.models'
    /// names, comma-separated; "": the kernel and site cases). Not with families or configsFrom, which
    /// choose among those cases; needs `package`.
    std::string steps;
    std::string package;  ///< with steps: the package whose GEMM and small-M form decisions shape them
    int limit = 0;        ///< at most this many cases (0: all); with steps, configurations a step
    bool list = false;    ///< list the cases, measure nothing
    double deadlineS = 0; ///< start no case after this many seconds (0: never)
};

/// The tool's command line for `r`.
std::vector<std::string> kernelSweepCommand(const KernelSweepRequest &r);

/// Runs the tool to its end, its output on ours: its exit code (3: no GPU with torch and Triton;
/// 127: the interpreter could not be started). When `cancel` turns true the tool's process group
/// is sent SIGTERM (the tool then gathers what its workers wrote into `out`); the same request
/// again continues.
int runKernelSweep(const KernelSweepRequest &r, const std::atomic<bool> *cancel = nullptr);

/// Why the tool would refuse `r` before measuring anything (a step name outside the grammar, a
/// training step, a package that is not there: its own message), asked through its --list, which
/// needs no GPU; "" when it would start. What `diode characterise --steps` checks before its GEMM sweep.
std::string kernelSweepRefusal(const KernelSweepRequest &r);

/// How a run of `r` that exited with `exitCode` ended, in one phrase: "finished", or why not and
/// what the same command again does. Where the tool ran, the cases of `r` still missing from its
/// `out` decide between finished and stopped (the tool's --list, run here).
std::string describeKernelSweep(const KernelSweepRequest &r, int exitCode);

} // namespace diode
