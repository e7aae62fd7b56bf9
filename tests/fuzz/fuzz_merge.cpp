// libFuzzer harness for `diode merge`'s inputs: the bytes as a shard (a store when they start as
// SQLite files do, else problem JSON lines) merged into a new store. Any bytes must be merged or
// refused (InvalidInput, StoreError) without a crash, and a refused merge must leave no output.
// Built with clang (-DDIODE_FUZZ=ON); elsewhere standalone_main.cpp replays a corpus.
#include "diode/store/store.h"
#include "diode/sweep/shardmerge.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    namespace fs = std::filesystem;
    static const fs::path dir =
        fs::temp_directory_path() / ("diode-fuzz-merge-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    const bool store = bytes.rfind(std::string("SQLite format 3\0", 16), 0) == 0;
    const fs::path shard = dir / (store ? "shard.db" : "shard.jsonl"), out = dir / "out.db";
    { std::ofstream(shard, std::ios::binary) << bytes; }
    try {
        diode::MergeOptions o;
        o.partial = true;
        o.allowMixed = true;
        diode::mergeShards(out.string(), {shard.string()}, o);
    } catch (const std::exception &) {
        if (fs::exists(out) && fs::file_size(out) > 0) {
            try {
                diode::Store s(out.string(), diode::Store::Mode::ReadOnly);
                if (!s.runs().empty()) {
                    std::fprintf(stderr, "a refused merge left runs in its output\n");
                    std::abort();
                }
            } catch (const diode::StoreError &) {
            }
        }
    }
    return 0;
}
