#include "kernelsweep.h"

#include "diode/infer/gemmproblem.h"
#include "diode/sweep/childprocess.h"
#include "diode/sweep/inductorbackend.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace diode {

std::vector<std::string> kernelSweepCommand(const KernelSweepRequest &r) {
    // The step sweep measures the kernels and sites of model steps; the kernel sweep its own cases,
    // which families and configsFrom choose among. Kinds and match choose in both (match: a case's
    // name, or a step kernel's).
    if (!r.steps.empty() && (!r.families.empty() || !r.configsFrom.empty()))
        throw InvalidInput(
            "the step sweep measures the steps' own kernels and sites: families and configs-from "
            "choose among the kernel sweep's cases");
    if (!r.steps.empty() && r.package.empty())
        throw InvalidInput(
            "--steps needs --package P.diode: the package whose GEMM and small-M form decisions "
            "shape the steps");
    std::vector<std::string> args = {pluginPython(r.python), "-m"};
    if (!r.steps.empty()) {
        args.insert(args.end(), {"torch_diode.tools.step_kernels", "--steps", r.steps, "--package", r.package,
                                 "--out", r.out, "--kinds", r.kinds});
    } else {
        args.insert(args.end(), {"torch_diode.tools.kernel_sweep", "--out", r.out, "--kinds", r.kinds});
    }
    args.insert(args.end(), {"--workers", std::to_string(r.workers)});
    if (!r.families.empty())
        args.insert(args.end(), {"--families", r.families});
    if (r.limit)
        args.insert(args.end(), {"--limit", std::to_string(r.limit)});
    if (!r.match.empty())
        args.push_back("--match=" + r.match); // one argument: a pattern may begin with '-'
    if (r.list)
        args.push_back("--list");
    if (r.deadlineS > 0)
        args.insert(args.end(), {"--deadline-s", fmt::format("{}", r.deadlineS)});
    if (!r.configsFrom.empty())
        args.insert(args.end(), {"--package", r.configsFrom});
    if (!r.extraConfigsFrom.empty())
        args.insert(args.end(), {"--extra-configs-from", r.extraConfigsFrom});
    return args;
}

namespace {

std::vector<std::string> environmentOf(const KernelSweepRequest &r) {
    std::vector<std::string> env = pluginToolEnv();
    if (!r.gpu.empty())
        env.insert(env.end(),
                   {"CUDA_VISIBLE_DEVICES=" + r.gpu, "TORCH_DIODE_GPU_LOCK=" + gpuLockPath(r.gpu)});
    return env;
}

// The tool's --list for `r` (what `out` still lacks), run here: it needs no GPU.
ChildOutput listed(const KernelSweepRequest &r) {
    KernelSweepRequest list = r;
    list.list = true;
    return runCaptured(kernelSweepCommand(list), environmentOf(r));
}

} // namespace

int runKernelSweep(const KernelSweepRequest &r, const std::atomic<bool> *cancel) {
    if (!cancel)
        return waitChild(startChild(kernelSweepCommand(r), environmentOf(r)));
    // In a group of its own, so that a cancel reaches the compile workers it started too.
    return waitChildGroup(startChild(kernelSweepCommand(r), environmentOf(r), {}, true), *cancel);
}

std::string kernelSweepRefusal(const KernelSweepRequest &r) {
    const ChildOutput o = listed(r);
    if (o.rc == 0)
        return {};
    if (o.rc == 127)
        return "its Python interpreter could not be started";
    // The tool's last line says why (argparse's "error: ..." line).
    std::string err = o.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' '))
        err.pop_back();
    const size_t nl = err.rfind('\n');
    const std::string last = nl == std::string::npos ? err : err.substr(nl + 1);
    return last.empty() ? fmt::format("the tool exited with code {}", o.rc) : last;
}

std::string describeKernelSweep(const KernelSweepRequest &r, int exitCode) {
    if (exitCode == 3)
        return "not run: the plugin's Python found no GPU with torch and Triton (its message above says why)";
    if (exitCode == 127)
        return "not run: its Python interpreter could not be started";
    const ChildOutput o = listed(r); // the cases not yet in `out`, one a line; none when it cannot say
    const std::optional<size_t> casesLeft =
        o.rc == 0 ? std::optional(size_t(std::count(o.out.begin(), o.out.end(), '\n'))) : std::nullopt;
    if (!r.steps.empty()) {
        // A step cut short keeps its lines and is not measured again by the same command (the tool's
        // --list names it with the missing ones).
        const std::string left = casesLeft ? fmt::format("{} step{} missing or measured in part", *casesLeft,
                                                         *casesLeft == 1 ? "" : "s")
                                           : std::string("the steps left unknown");
        const std::string again =
            fmt::format("the same command again measures the missing ones; remove a step's "
                        "lines from {} to measure it again whole",
                        r.out);
        if (exitCode == 0)
            return casesLeft && *casesLeft == 0
                       ? std::string("finished")
                       : fmt::format("stopped at its deadline, {} ({})", left, again);
        return fmt::format("stopped with exit code {}, {} (its output above says why; {})", exitCode, left,
                           again);
    }
    const std::string left =
        casesLeft ? fmt::format("{} case{} still to measure", *casesLeft, *casesLeft == 1 ? "" : "s")
                  : std::string("the cases left unknown");
    if (exitCode == 0)
        return casesLeft && *casesLeft == 0
                   ? std::string("finished")
                   : fmt::format("stopped at its deadline, {} (the same command again measures them)", left);
    return fmt::format("stopped with exit code {}, {} (its output above says why; the same command again "
                       "continues it)",
                       exitCode, left);
}

} // namespace diode
