#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/timingmethod.h"

#include <set>
#include <string>

namespace diode {

class Store;

/// What the measurements of a database were taken with, or what a sweep or a model's stored
/// predictions would add to it. One database holds one kind of data unless someone confirms
/// otherwise: training and evaluation read a whole store, and a cpu run or a second
/// GPU inside an H200 dataset would be trained on and scored against as if it were the H200's.
struct DataOrigin {
    std::set<std::string> backends; ///< sweep backends ("cpu", "inductor"); an import names none
    std::set<std::string> gpus;     ///< GPU names of the runs ("CPU: ..." for the cpu backend)
    std::set<TimingMethod> methods; ///< methods with successful measurements
};

/// The origin of what `store` holds: the backends and GPUs of its runs with a finished problem,
/// and the methods of its successful measurements.
DataOrigin dataOrigin(Store &store);

/// "" when adding `added` to data of origin `existing` mixes nothing (a new or empty database
/// mixes nothing); else one sentence naming each fact that would mix, as "GPU CPU: AMD EPYC with
/// NVIDIA H200".
std::string describeMix(const DataOrigin &existing, const DataOrigin &added);

/// A write refused because it would mix backends, GPUs or timing methods in one database; the
/// message names what would mix. The faces say how to confirm (the CLI's --allow-mixed-data, a
/// dialog of the workbench).
class DataMixRefused : public InvalidInput {
public:
    using InvalidInput::InvalidInput;
};

} // namespace diode
