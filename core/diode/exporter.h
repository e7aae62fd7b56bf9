#pragma once

#include "store.h"

#include <ostream>

namespace diode {

/// Problem JSON lines, one per (run, problem), with the run's hardware; importable again.
int64_t exportJsonl(Store &store, std::ostream &out);
/// One row per measurement, with a header; for spreadsheets and pandas.
int64_t exportCsv(Store &store, std::ostream &out);

} // namespace diode
