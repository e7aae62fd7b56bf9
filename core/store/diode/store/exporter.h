#pragma once

#include "diode/store/store.h"

#include <ostream>

namespace diode {

/// Problem JSON lines (version 2: every timing method, baselines), one per (run, problem), with
/// the run's hardware; importable again.
int64_t exportJsonl(Store &store, std::ostream &out);
/// One row per measurement (one per candidate and timing method, `method` column), with a
/// header; for spreadsheets and pandas.
int64_t exportCsv(Store &store, std::ostream &out);
/// The kernel and site lines the store holds (docs/FORMATS.md, "Kernel and site lines"), skipped
/// cases included, one a line: readDecisionData reads them back to what the store read.
int64_t exportDecisionLines(Store &store, std::ostream &out);

} // namespace diode
