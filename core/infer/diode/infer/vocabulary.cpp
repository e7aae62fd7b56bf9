#include "vocabulary.h"

#include "diode/infer/decision.h"
#include "diode/infer/decisionmodel.h"
#include "diode/infer/features.h"
#include "diode/infer/gemmproblem.h"
#include "diode/infer/kernelconfig.h"
#include "diode/infer/packagechoice.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/selectionpolicy.h"
#include "diode/infer/shippeddata.h"
#include "diode/infer/timingagreement.h"
#include "diode/infer/timingmethod.h"
#include "diode/infer/torchversion.h"

namespace diode {

const nlohmann::json &vocabulary() {
    static const nlohmann::json v = [] {
        constexpr size_t kFirstFlag = kCandidateKeyFields.size() - kCandidateKeyFlags;
        nlohmann::json ops = nlohmann::json::array(), batched = nlohmann::json::array();
        for (const auto op : allOps()) {
            ops.push_back(toString(op));
            if (isBatched(op))
                batched.push_back(toString(op));
        }
        nlohmann::json dtypes = nlohmann::json::array();
        for (const auto d : allDTypes())
            dtypes.push_back({{"name", toString(d)}, {"torch", torchName(d)}, {"bytes", elementBytes(d)}});
        nlohmann::json fields = nlohmann::json::array();
        for (const auto f : kProblemFields)
            fields.push_back(f);
        nlohmann::json key = {"kind", "name"}, flags = nlohmann::json::array();
        for (size_t i = 0; i < kCandidateKeyFields.size(); ++i) {
            key.push_back(kCandidateKeyFields[i]);
            if (i >= kFirstFlag)
                flags.push_back(kCandidateKeyFields[i]);
        }
        nlohmann::json kinds = nlohmann::json::array(), exclusions = nlohmann::json::array(),
                       templates = nlohmann::json::array(), spaces = nlohmann::json::array();
        for (const auto k : kDecisionKinds)
            kinds.push_back(toString(k));
        for (const auto e : kExclusionNames)
            exclusions.push_back(e);
        for (const auto t : FeatureSchema::kTritonTemplates)
            templates.push_back(t);
        for (const auto sp : kSearchSpaces)
            spaces.push_back(sp);
        return nlohmann::json{
            {"ops", ops},
            {"batched_ops", batched},
            {"dtypes", dtypes},
            {"problem_fields", fields},
            {"max_problem_size", kMaxProblemSize},
            {"candidate_key", key},
            {"candidate_flags", flags},
            {"row_kinds", kCandidateRowKinds},
            {"default_group_m", kDefaultGroupM},
            {"triton_templates", templates},
            {"exclusions", exclusions},
            {"decision_kinds", kinds},
            {"search_spaces", spaces},
            {"step_line_prefix", std::string(kStepLinePrefix)},
            {"problem_line",
             {{"max_bytes", kProblemJsonLimits.maxBytes}, {"max_depth", kProblemJsonLimits.maxDepth}}},
            {"min_torch", minTorchVersion()},
            {"model_directory", shipped::kModelDirectory},
            {"timing_methods", timingMethodNameList()},
            {"regimes", {toString(Regime::Warm), toString(Regime::Cold)}},
            {"default_regime", kDefaultRegime},
            {"timing_agreement", {{"relative", kAgreementRelative}, {"absolute_ms", kAgreementAbsoluteMs}}}};
    }();
    return v;
}

} // namespace diode
