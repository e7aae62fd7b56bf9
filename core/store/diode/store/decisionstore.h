#pragma once

#include "diode/infer/decisionmodel.h"
#include "diode/store/store.h"

#include <cstdint>
#include <map>
#include <string>

namespace diode {

/// What storing kernel and site lines did. A case is one row per GPU (kernels: GPU and name;
/// sites: GPU, name and the package its configs came from): the same line again leaves it as it is,
/// a line with other figures replaces it (a case measured again: the newest import wins), and a
/// skipped line never replaces a measured case.
struct DecisionImport {
    int64_t kernels = 0, sites = 0, skipped = 0; ///< lines read, by what they hold
    int64_t added = 0, replaced = 0, unchanged = 0;
};

/// "N kernels, M sites, K skipped cases: A added, R replaced, U unchanged": how import and merge say it.
std::string describe(const DecisionImport &d);

/// A measured case's line as storing compares it, and the case in words ("kernel
/// 'llama2-7b/norm-t1' of NVIDIA H100 80GB HBM3").
struct MeasuredCase {
    std::string line, what;
};
/// The measured (not skipped) cases of `d` by case: a kernel is its GPU and name, a site its GPU,
/// name and the package its configs came from. The same key with another line is a re-measurement.
std::map<std::string, MeasuredCase> measuredCases(const DecisionData &d);

/// Stores the lines `data` read from `source` (schema v5 tables measured_kernels,
/// measured_kernel_configs, measured_sites), inside the caller's transaction.
DecisionImport storeDecisionData(Store &store, const DecisionData &data, const std::string &source);

/// Every kernel and site line of the store, as readDecisionData reads them from the lines the store
/// was given, in the order their cases were first stored. Throws StoreError naming the row of a
/// value no build writes.
DecisionData storedDecisionData(Store &store);

/// The lines of several stores (opened read-only), in order.
DecisionData storedDecisionData(const std::vector<std::string> &paths);

} // namespace diode
