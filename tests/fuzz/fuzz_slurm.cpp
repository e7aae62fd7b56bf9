// libFuzzer harness for a Slurm sweep's hostile files: the first line of the input is a plan's name,
// the rest a --slurm-config file. Whatever is read must give scripts in which no value added a line
// or a command: every #SBATCH line before the first command, one line a setup entry, and as many
// lines as a script of the same options without values would have. The same bytes as a sweep's
// slurm.json record must be read or refused with an InvalidInput. Built with clang
// (-DDIODE_FUZZ=ON); elsewhere standalone_main.cpp replays a corpus.
#include "diode/sweep/slurmsweep.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string &why, const std::string &script) {
    std::fprintf(stderr, "%s:\n%s\n", why.c_str(), script.c_str());
    std::abort();
}

size_t lines(const std::string &s) {
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

void checkScript(const std::string &script, size_t expectedLines) {
    std::istringstream in(script);
    bool command = false;
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("#SBATCH", 0) == 0 && command)
            fail("an #SBATCH line after a command", script);
        if (!l.empty() && l[0] != '#')
            command = true;
    }
    if (lines(script) != expectedLines)
        fail("a value changed the number of lines", script);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const fs::path dir =
        fs::temp_directory_path() / ("diode-fuzz-slurm-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    const size_t nl = bytes.find('\n');
    const std::string name = bytes.substr(0, nl),
                      config = nl == std::string::npos ? "" : bytes.substr(nl + 1);
    { std::ofstream(dir / "slurm-config.json", std::ios::binary) << config; }
    diode::SlurmSweep::Request r;
    r.db = (dir / "fuzz.db").string();
    r.backend = "cpu";
    r.shards = 2;
    r.plan.name = name;
    r.plan.problems = {diode::GemmProblem{}, diode::GemmProblem{}};
    try {
        r.slurm = diode::SlurmOptions::load((dir / "slurm-config.json").string());
        const auto scripts = diode::SlurmSweep::scripts(r);
        // The same options with every value one word long: as many lines.
        diode::SlurmSweep::Request plain = r;
        plain.plan.name = "plan";
        for (auto &l : plain.slurm.setup)
            l = "true";
        const auto expected = diode::SlurmSweep::scripts(plain);
        checkScript(scripts.sweep, lines(expected.sweep));
        checkScript(scripts.merge, lines(expected.merge));
    } catch (const diode::InvalidInput &) {
    }
    // The bytes as the record of a submitted sweep.
    fs::create_directories(dir / "fuzz.db.shards");
    { std::ofstream(dir / "fuzz.db.shards" / "slurm.json", std::ios::binary) << bytes; }
    try {
        const int64_t shards = diode::SlurmSweep::checkRecord(r.db);
        if (shards < 1 || shards > 1'000'000)
            fail("a record of " + std::to_string(shards) + " shards was read", bytes);
    } catch (const diode::InvalidInput &) {
    }
    return 0;
}
