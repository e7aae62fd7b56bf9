#include "outputpath.h"

#include "diode/infer/atomicfile.h"
#include "diode/infer/gemmproblem.h"
#include "diode/infer/shippeddata.h"

#include <fmt/format.h>

#include <filesystem>

namespace diode {

void refuseOutputPath(const std::string &path, const std::vector<std::string> &inputs,
                      std::string_view what) {
    namespace fs = std::filesystem;
    shipped::refuseWritingShipped(path, "output file");
    if (const std::string kind = notARegularFile(path); kind == "a directory")
        throw InvalidInput(fmt::format("{} '{}' is a directory; name the file to write", what, path));
    else if (!kind.empty())
        throw InvalidInput(
            fmt::format("{} '{}' is {}; an output is written beside it and renamed over it, which "
                        "only a regular file may be: name a file",
                        what, path, kind));
    refuseInputPath(path, inputs, what, "writing it would replace what it is made from; name another file");
}

void refuseInputPath(const std::string &path, const std::vector<std::string> &inputs, std::string_view what,
                     std::string_view consequence) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec))
        return;
    for (const auto &in : inputs) {
        std::error_code e2;
        if (!in.empty() && fs::equivalent(path, in, e2) && !e2)
            throw InvalidInput(fmt::format("{} '{}' is the input '{}': {}", what, path, in, consequence));
    }
}

} // namespace diode
