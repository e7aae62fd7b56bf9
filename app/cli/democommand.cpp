// diode demo: compile GEMMs and real model blocks with plain torch.compile, max-autotune and the
// plugin on the local GPU, and print compile time and kernel time (warm and L2-flushed). The GPU work runs in
// `python3 -m torch_diode.tools.demo`, which writes the result JSON this command prints as a table.

#include "democommand.h"
#include "terminal.h"

#include "diode/analysis/demoresult.h"
#include "diode/infer/gemmproblem.h"
#include "diode/sweep/childprocess.h"
#include "diode/sweep/inductorbackend.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace diode::cli {

namespace {

struct DemoOptions {
    std::string problems, package, modes, json, casesOut, decisionsOut, python, show, blockCases, models,
        gpus;
    int limit = 0;
    int processes = 1;
    bool mlp = false;
    bool blocks = false;
    bool breakdown = false;
};

int runPython(const std::vector<std::string> &args) {
    return waitChild(startChild(args, pluginToolEnv())); // the demo installs the selector per mode
}

int runDemo(const DemoOptions &o) {
    if (!o.show.empty()) {
        show("{}", DemoResult::load(o.show).table());
        return 0;
    }
    const std::string python = pluginPython(o.python);
    const std::string json = o.json.empty() ? "diode-demo.json" : o.json;
    std::vector<std::string> args{python, "-u", "-m", "torch_diode.tools.demo", "--json", json};
    if (!o.problems.empty())
        args.insert(args.end(), {"--problems", o.problems});
    if (o.limit > 0)
        args.insert(args.end(), {"--limit", std::to_string(o.limit)});
    if (o.mlp)
        args.push_back("--mlp");
    if (o.blocks)
        args.push_back("--blocks");
    if (!o.blockCases.empty())
        args.insert(args.end(), {"--block-cases", o.blockCases});
    if (!o.models.empty())
        args.insert(args.end(), {"--models", o.models});
    if (!o.package.empty())
        args.insert(args.end(), {"--package", o.package});
    if (!o.modes.empty())
        args.insert(args.end(), {"--modes", o.modes});
    if (!o.casesOut.empty())
        args.insert(args.end(), {"--cases-out", o.casesOut});
    if (!o.decisionsOut.empty())
        args.insert(args.end(), {"--decisions-out", o.decisionsOut});
    if (o.processes != 1) // the tool refuses a count below 1
        args.insert(args.end(), {"--processes", std::to_string(o.processes)});
    if (!o.gpus.empty())
        args.insert(args.end(), {"--gpus", o.gpus});
    if (o.breakdown)
        args.push_back("--breakdown");
    if (o.problems.empty() && !o.mlp && !o.blocks && o.blockCases.empty() && o.models.empty())
        throw InvalidInput(
            "demo: give --problems FILE, --blocks, --block-cases, --models, --mlp, or several");
    const int rc = runPython(args);
    if (rc != 0)
        return rc; // 3: no GPU/torch (the worker's message said why), 2: bad input
    show("{}", DemoResult::load(json).table());
    show("result: {}\n", json);
    return 0;
}

} // namespace

std::function<int()> addDemoCommand(CLI::App &app) {
    auto o = std::make_shared<DemoOptions>();
    auto *demo =
        app.add_subcommand("demo", "Compile GEMMs and model blocks with plain torch.compile, max-autotune "
                                   "and the plugin; print compile and kernel time");
    demo->add_option("--problems", o->problems,
                     "problem JSON lines to compile (e.g. resources/demo/h200-heldout-gemms.jsonl)")
        ->check(CLI::ExistingFile);
    demo->add_option("--limit", o->limit, "only the first N problems");
    demo->add_option("--processes", o->processes,
                     "run it in N processes, merged (`python3 -m torch_diode.tools.demo --help`)");
    demo->add_option("--gpus", o->gpus,
                     "with --processes: run as many at once as GPUs named here (comma-separated), each on "
                     "its own");
    demo->add_flag("--breakdown", o->breakdown,
                   "model scenarios: each mode's kernels (`python3 -m torch_diode.tools.demo --help`)");
    demo->add_flag("--mlp", o->mlp, "also a bf16 transformer MLP block built from nn.Linear");
    demo->add_flag(
        "--blocks", o->blocks,
        "real model blocks: Llama-class decoder layer, GPT-2 block, ViT block at decode and prefill");
    demo->add_option(
        "--block-cases", o->blockCases,
        "instead of the default blocks: BLOCK:PHASE:TOKENS:DTYPE,... (e.g. llama:decode:8:bf16)");
    demo->add_option("--package", o->package, ".diode package (default: the best for this GPU)")
        ->check(CLI::ExistingFile);
    // The modes and scenarios are the Python tool's (torch_diode.tools.demo MODES, tools.models
    // SCENARIOS): its --help lists them, so that no list here falls behind.
    demo->add_option("--modes", o->modes,
                     "comma-separated modes: default (plain torch.compile), max-autotune, plugin (the "
                     "recommended way) and the others `python3 -m torch_diode.tools.demo --help` lists");
    demo->add_option("--models", o->models,
                     "whole model steps: 'all', or SCENARIO[:DTYPE],... (decode with a KV cache, prefill, a "
                     "training step, a ViT block; `python3 -m torch_diode.tools.demo --help` lists them)");
    demo->add_option("--json", o->json, "result file (default diode-demo.json)");
    demo->add_option("--cases-out", o->casesOut, "keep finished cases here and skip them on a rerun");
    demo->add_option("--decisions-out", o->decisionsOut,
                     "append the plugin modes' GEMM decisions here as problem JSON lines with their case and "
                     "mode (what the selector kept for each lowering of a model step it decided or left to "
                     "plain's kernel; --problems takes the file back to time each GEMM alone)");
    demo->add_option("--python", o->python, "interpreter (default $DIODE_PYTHON or python3)");
    demo->add_option("--show", o->show, "print the table of a saved result and exit (no GPU needed)")
        ->check(CLI::ExistingFile);
    return [o, demo]() { return *demo ? runDemo(*o) : -1; };
}

} // namespace diode::cli
