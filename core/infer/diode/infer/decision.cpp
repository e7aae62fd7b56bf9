#include "decision.h"

#include <cmath>

namespace diode {

std::string_view toString(DecisionKind kind) {
    switch (kind) {
    case DecisionKind::GemmKernel:
        break;
    case DecisionKind::SmallMForm:
        return "small_m_form";
    case DecisionKind::KernelConfig:
        return "kernel_config";
    }
    return "gemm_kernel";
}

std::string_view toString(Exclusion e) {
    return kExclusionNames[size_t(e)];
}

void DecisionCounters::count(const Decision &d) {
    std::lock_guard lock(m_lock);
    Kind &k = m_kinds[size_t(d.kind)];
    ++k.decisions;
    const size_t candidates = d.excluded.size();
    if (d.kept.size() > 1 || (d.kept.empty() && candidates > 0))
        ++k.handedBackSeveral;
    int64_t unscorable = 0, scored = 0, keptUnscorable = 0;
    for (size_t i = 0; i < candidates; ++i) {
        const Exclusion e = d.excluded[i];
        if (e == Exclusion::WrongResult || e == Exclusion::SharedMemory)
            ++k.excluded[std::string(toString(e))];
        unscorable += e == Exclusion::Unscorable;
        scored += e == Exclusion::None && !std::isnan(d.predictedMs[i]);
    }
    if (!d.selected) {
        ++k.notSelected[d.notSelected];
        return;
    }
    for (size_t i : d.kept)
        keptUnscorable += d.excluded[i] == Exclusion::Unscorable;
    ++k.selected;
    ++k.byOp[d.op];
    k.scoresReused += d.scoresReused;
    k.seen += scored + unscorable;
    k.scored += scored;
    k.filtered += scored - (int64_t(d.kept.size()) - keptUnscorable);
    k.unknownKept += keptUnscorable;
    k.unknownDropped += unscorable - keptUnscorable;
}

void DecisionCounters::reset() {
    std::lock_guard lock(m_lock);
    m_kinds = {};
}

nlohmann::json DecisionCounters::toJson() const {
    std::lock_guard lock(m_lock);
    nlohmann::json out = nlohmann::json::object();
    for (const DecisionKind kind : kDecisionKinds) {
        const Kind &k = m_kinds[size_t(kind)];
        out[std::string(toString(kind))] = {{"decisions", k.decisions},
                                            {"selected", k.selected},
                                            {"not_selected", k.notSelected},
                                            {"handed_back_several", k.handedBackSeveral},
                                            {"scores_reused", k.scoresReused},
                                            {"selections_by_op", k.byOp},
                                            {"candidates_seen", k.seen},
                                            {"candidates_scored", k.scored},
                                            {"candidates_filtered", k.filtered},
                                            {"candidates_unknown_kept", k.unknownKept},
                                            {"candidates_unknown_dropped", k.unknownDropped},
                                            {"candidates_excluded", k.excluded}};
    }
    return out;
}

} // namespace diode
