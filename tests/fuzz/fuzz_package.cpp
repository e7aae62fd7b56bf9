// libFuzzer harness for the model package reader: any bytes must give a package or a
// PackageError, never a crash, a hang or undefined behaviour. Built with clang
// (-DDIODE_FUZZ=ON); with other compilers standalone_main.cpp replays a corpus instead.
#include "diode/infer/modelpackage.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        const auto pkg =
            diode::ModelPackage::fromBytes(std::string(reinterpret_cast<const char *>(data), size));
        // A package that loads must also run.
        diode::KernelConfig c;
        c.kind = "triton";
        c.name = "mm";
        c.blockM = c.blockN = c.blockK = 64;
        c.numStages = 3;
        c.numWarps = 4;
        (void)pkg.predictMs(
            diode::GemmProblem{diode::GemmOp::Mm, diode::DType::BF16, 1, 128, 256, 512, false, true}, {c});
    } catch (const diode::PackageError &) {
    }
    return 0;
}
