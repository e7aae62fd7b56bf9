#pragma once

#include "diode/store/decisionstore.h"
#include "diode/store/store.h"

#include <string>

namespace diode {

struct ImportResult {
    std::string format;   ///< "problem-jsonl", "torch-diode-json", "torch-diode-msgpack", "kernel-site-lines"
    DecisionImport lines; ///< kernel-site-lines: what storing them did
    int64_t runs = 0;
    int64_t problems = 0;
    int64_t measurements = 0;
    int64_t alreadyImportedRun = 0; ///< importFileInTransaction skipped the file: the run that holds it
};

/// A file's content read as one of the formats importFile takes, not yet stored: one group of
/// records per GPU (torch-diode) or per worker hardware and versions (problem JSON lines).
struct ParsedImport {
    std::string format; ///< as ImportResult::format
    std::vector<std::pair<RunInfo, std::vector<ProblemRecord>>> groups;
};

/// Tells the format by content and reads `data` (the bytes of `path`, named in messages). Throws
/// InvalidInput naming the file, the line (problem JSON lines) or the entry, and the field.
ParsedImport parseImportData(const std::string &data, const std::string &path);

/// Imports problem JSON lines (the worker's output), a torch-diode dataset (JSON) or its
/// msgpack variant into `store`, in one transaction: on any error (InvalidInput naming the file
/// and where in it, or StoreError) the database is exactly as before.
/// A file whose first line is a kernel or site line (its "kind") is read whole by readDecisionLines
/// and stored by storeDecisionData: such lines are stored once per case, so the same file again changes
/// nothing and is not refused; `again` and `allowMixedData` do not apply to them.
/// A file whose content was imported before (same bytes, any name) is refused naming the earlier
/// run, unless `again`: importing twice would silently double its measurements.
/// A file whose GPUs or timing methods the database does not hold yet, where it holds data, is
/// refused (DataMixRefused naming what would mix) unless `allowMixedData`: training and evaluation
/// read a whole store, so an H100's times inside an H200 dataset would be taken for the H200's.
ImportResult importFile(Store &store, const std::string &path, bool again = false,
                        bool allowMixedData = false);

/// importFile's work inside a transaction the caller holds (`diode merge` commits all its inputs
/// at once). Content imported before is refused as by importFile unless `again`, or, when
/// `skipImported`, left out: the result then names the run that holds it. Mixing is refused as by
/// importFile unless `allowMixedData` (`diode merge` applies its own rule to its inputs).
ImportResult importFileInTransaction(Store &store, const std::string &path, bool again, bool skipImported,
                                     bool allowMixedData);

/// torch-diode's dataset ({"hardware": {GPU: {"operation": {OP: {"solution": ...}}}}}) as our
/// records, grouped by GPU name. Exposed for tests.
std::vector<std::pair<std::string, std::vector<ProblemRecord>>>
fromTorchDiodeDataset(const nlohmann::json &doc, const std::string &where);

} // namespace diode
