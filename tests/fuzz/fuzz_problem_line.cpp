// libFuzzer harness for problem JSON lines (docs/FORMATS.md), what `diode import` and `diode rank`
// read line by line: any bytes must give a record or an InvalidInput, never a crash or undefined
// behaviour, and a record that was read must read back the same after it is written out (an
// export followed by an import loses nothing). Built with clang (-DDIODE_FUZZ=ON); elsewhere
// standalone_main.cpp replays a corpus.
#include "diode/infer/problemjson.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string line(reinterpret_cast<const char *>(data), size);
    diode::ProblemRecord rec;
    try {
        rec = diode::parseProblemLine(line, "fuzz: line 1");
    } catch (const diode::InvalidInput &) {
        return 0;
    }
    const std::string written = diode::toJson(rec).dump();
    try {
        const auto again = diode::parseProblemLine(written, "fuzz: written line");
        if (diode::toJson(again).dump() != written) {
            std::fprintf(stderr, "a written line reads back differently:\n%s\n%s\n", written.c_str(),
                         diode::toJson(again).dump().c_str());
            std::abort();
        }
    } catch (const diode::InvalidInput &e) {
        std::fprintf(stderr, "a line we wrote is refused: %s\n%s\n", e.what(), written.c_str());
        std::abort();
    }
    return 0;
}
