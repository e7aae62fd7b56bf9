#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// How a kernel time was taken (docs/FORMATS.md). Every time in the store and in problem JSON
/// carries one, and every consumer of times reads one method, chosen or defaulted in one place
/// (chooseTimingMethod), never a mix.
enum class TimingMethod {
    GraphWarm,        ///< the kernel alone in a CUDA graph, replayed back to back: operands warm in L2
    GraphCold,        ///< the same with L2 flushed before each call, the flush subtracted
    InductorAutotune, ///< Inductor's own max-autotune benchmark (carries launch overhead)
    Cpu,              ///< the cpu backend's reference GEMM, timed in-process
};

inline constexpr std::array kTimingMethods{TimingMethod::GraphWarm, TimingMethod::GraphCold,
                                           TimingMethod::InductorAutotune, TimingMethod::Cpu};

std::string_view toString(TimingMethod method);
std::optional<TimingMethod> parseTimingMethod(std::string_view text);
/// "graph_warm, graph_cold, inductor_autotune or cpu", for messages.
std::string timingMethodNames();
/// Every method's name, in kTimingMethods order: the choices a command line or a page offers.
const std::vector<std::string> &timingMethodNameList();

/// Successful measurements per method in some data (a store, a file of problems).
using MethodCounts = std::map<TimingMethod, int64_t>;

/// The method a consumer reads, and why: shown wherever times are trained on or evaluated.
struct MethodChoice {
    TimingMethod method = TimingMethod::GraphWarm;
    bool byDefault = true;
    std::string reason; ///< "default: the data has in-graph times", "asked for"
    /// "graph_warm times (default: the data has in-graph times)"
    std::string describe() const;
};

/// The default rule: graph_warm when the data has in-graph times, else cpu when it has cpu
/// times, else inductor_autotune (all data before in-graph timing).
MethodChoice defaultTimingMethod(const MethodCounts &ok);
/// `asked` when given, else the default. Throws InvalidInput when the data holds no successful
/// time of the asked method, listing the methods it does hold.
MethodChoice chooseTimingMethod(std::optional<TimingMethod> asked, const MethodCounts &ok);

} // namespace diode
