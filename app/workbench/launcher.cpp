// diode-workbench: what a user starts. It answers --version at once and otherwise runs the GUI,
// diode-workbench-gui beside it, in the same process (exec), with the environment GNU OpenMP
// reads when LibTorch loads it, before any main() of a program linked with LibTorch runs:
// passive thread waits, so a training on the Train page does not collapse when another program
// is busy. Neither Qt nor LibTorch is loaded here, so `--version` answers at once (the GUI takes
// most of a second to load LibTorch's libraries).

#include "diode/config.h"
#include "diode/train/trainoptions.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <unistd.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--version" || a == "-v") { // as QCommandLineParser would print it
            std::printf("diode-workbench %s\n", DIODE_VERSION);
            return 0;
        }
    }
    diode::preferPassiveThreadWaits();
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto gui = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "diode-workbench-gui";
    argv[0] = const_cast<char *>("diode-workbench");
    ::execv(gui.c_str(), argv);
    std::fprintf(stderr, "diode-workbench: cannot start the GUI %s: %s\n", gui.c_str(), std::strerror(errno));
    return 3;
}
