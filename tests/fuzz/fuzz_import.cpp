// libFuzzer harness for `diode import`: problem JSON lines, torch-diode datasets in JSON and in
// msgpack, told apart by content. Any bytes must be read or refused with an InvalidInput, and
// what is read must go into a store (an in-memory one, rolled back) without a constraint error
// or a crash. Built with clang (-DDIODE_FUZZ=ON); elsewhere standalone_main.cpp replays a corpus.
#include "diode/store/importer.h"
#include "diode/store/store.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static diode::Store store(":memory:");
    diode::ParsedImport parsed;
    try {
        parsed = diode::parseImportData(std::string(reinterpret_cast<const char *>(data), size), "fuzz.dat");
    } catch (const diode::InvalidInput &) {
        return 0;
    }
    try {
        diode::Store::Transaction tx(store); // never committed: each input starts from an empty store
        for (auto &[run, records] : parsed.groups) {
            run.backend = "import";
            run.status = "finished";
            const int64_t runId = store.createRun(run);
            for (const auto &r : records)
                store.insertRecord(runId, r);
        }
    } catch (const diode::StoreError &e) {
        std::fprintf(stderr, "records that were read cannot be stored: %s\n", e.what());
        std::abort();
    }
    return 0;
}
