#include "kernelsweep.h"

#include "diode/sweep/childprocess.h"
#include "diode/sweep/inductorbackend.h"

#include <fmt/format.h>

namespace diode {

std::vector<std::string> kernelSweepCommand(const KernelSweepRequest &r) {
    std::vector<std::string> args = {pluginPython(r.python),
                                     "-m",
                                     "torch_diode.tools.kernel_sweep",
                                     "--out",
                                     r.out,
                                     "--kinds",
                                     r.kinds,
                                     "--workers",
                                     std::to_string(r.workers)};
    if (!r.families.empty())
        args.insert(args.end(), {"--families", r.families});
    if (r.limit)
        args.insert(args.end(), {"--limit", std::to_string(r.limit)});
    if (!r.match.empty())
        args.insert(args.end(), {"--match", r.match});
    if (r.list)
        args.push_back("--list");
    if (r.deadlineS > 0)
        args.insert(args.end(), {"--deadline-s", fmt::format("{}", r.deadlineS)});
    if (!r.configsFrom.empty())
        args.insert(args.end(), {"--package", r.configsFrom});
    return args;
}

int runKernelSweep(const KernelSweepRequest &r, const std::atomic<bool> *cancel) {
    if (!cancel)
        return waitChild(startChild(kernelSweepCommand(r), pluginToolEnv()));
    // In a group of its own, so that a cancel reaches the compile workers it started too.
    return waitChildGroup(startChild(kernelSweepCommand(r), pluginToolEnv(), {}, true), *cancel);
}

} // namespace diode
