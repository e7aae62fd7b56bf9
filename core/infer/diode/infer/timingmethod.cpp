#include "timingmethod.h"

#include "diode/infer/gemmproblem.h"

#include <fmt/format.h>

namespace diode {

std::string_view toString(TimingMethod method) {
    switch (method) {
    case TimingMethod::GraphWarm:
        return "graph_warm";
    case TimingMethod::GraphCold:
        return "graph_cold";
    case TimingMethod::InductorAutotune:
        return "inductor_autotune";
    case TimingMethod::Cpu:
        return "cpu";
    }
    return "graph_warm";
}

std::optional<TimingMethod> parseTimingMethod(std::string_view text) {
    for (TimingMethod m : kTimingMethods)
        if (toString(m) == text)
            return m;
    return std::nullopt;
}

std::string timingMethodNames() {
    return "graph_warm, graph_cold, inductor_autotune or cpu";
}

const std::vector<std::string> &timingMethodNameList() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (TimingMethod m : kTimingMethods)
            v.emplace_back(toString(m));
        return v;
    }();
    return names;
}

std::string MethodChoice::describe() const {
    return fmt::format("{} times ({})", toString(method), reason);
}

MethodChoice defaultTimingMethod(const MethodCounts &ok) {
    auto has = [&](TimingMethod m) {
        auto it = ok.find(m);
        return it != ok.end() && it->second > 0;
    };
    if (has(TimingMethod::GraphWarm))
        return {TimingMethod::GraphWarm, true, "default: the data has in-graph times"};
    if (has(TimingMethod::Cpu))
        return {TimingMethod::Cpu, true, "default: the data holds cpu-backend times"};
    return {TimingMethod::InductorAutotune, true, "default: the data has no in-graph times"};
}

MethodChoice chooseTimingMethod(std::optional<TimingMethod> asked, const MethodCounts &ok) {
    if (!asked)
        return defaultTimingMethod(ok);
    auto it = ok.find(*asked);
    if (it == ok.end() || it->second == 0) {
        std::string held;
        for (const auto &[m, n] : ok)
            if (n > 0)
                held += fmt::format("{}{} ({})", held.empty() ? "" : ", ", toString(m), n);
        throw InvalidInput(fmt::format("the data has no successful {} times; it has {}", toString(*asked),
                                       held.empty() ? std::string("none") : held));
    }
    return {*asked, false, "asked for"};
}

} // namespace diode
