#pragma once

#include <ftw.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

namespace diode {

/// Removes `path` and everything under it (symbolic links themselves, never what they point to);
/// best effort, as std::filesystem::remove_all(path, ec): what cannot be removed stays.
///
/// Not std::filesystem::remove_all: a pip torch's libtorch.so exports its own copies of 64
/// std::filesystem functions (from its build toolchain's static part of libstdc++), which win
/// symbol lookup in every program that links it, and its remove_all called address 0: `diode
/// characterise` died with SIGSEGV when its sweep's Inductor backend removed its cache folder
/// (docs/DEVELOPING.md, "Building on a GPU machine"). POSIX's nftw is not interposed.
inline void removeTree(const std::string &path) {
    const auto one = [](const char *p, const struct stat *, int, struct FTW *) {
        std::remove(p); // what cannot be removed stays, as its folder then does
        return 0;
    };
    nftw(path.c_str(), one, 16, FTW_DEPTH | FTW_PHYS);
}

} // namespace diode
