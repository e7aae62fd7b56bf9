// libFuzzer harness for the worker protocol as the runner reads it: the first line of the input is
// what a worker says first, each further line an answer to request 1. Any bytes must be taken as a
// hello, skipped, or refused with BackendUnavailable; every answer must be a record, a failure or a
// broken protocol, never an exception or a crash. Built with clang (-DDIODE_FUZZ=ON); elsewhere
// standalone_main.cpp replays a corpus.
#include "diode/sweep/inductorbackend.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    diode::GemmProblem problem;
    problem.m = 16;
    problem.n = 64;
    problem.k = 32;
    size_t start = 0;
    for (int n = 0; start <= bytes.size(); ++n) {
        size_t end = bytes.find('\n', start);
        if (end == std::string::npos)
            end = bytes.size();
        const std::string line = bytes.substr(start, end - start);
        start = end + 1;
        if (n == 0) {
            try {
                (void)diode::readWorkerHello(line, "worker");
            } catch (const diode::BackendUnavailable &) {
            }
            continue;
        }
        const auto answer = diode::readWorkerAnswer(line, 1, problem);
        if (answer.record && !(answer.record->problem == problem)) {
            std::fprintf(stderr, "an answer for another problem was taken\n");
            std::abort();
        }
        if (answer.broken && answer.outcome.error.empty())
            std::abort();
    }
    return 0;
}
