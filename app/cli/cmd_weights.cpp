// `ndr export-weights` and `ndr import-weights`: a saved run's models as safetensors weights and JSON
// descriptions that PyTorch reads (python/ndr_torch.py), and such files back into a run folder that
// `ndr eval`, `ndr predict` and the app open (docs/design.md §7).
#include "commands.h"
#include "common.h"

#include "core/train/reference_batch.h"
#include "core/train/weights.h"

#include <iostream>
#include <memory>

namespace ndrcli {

namespace {

struct ExportWeightsOptions {
    std::string runFile, out, checkBatch;
    WeightsChoice weights = WeightsChoice::Final;
    bool overwrite = false;
    int perDepth = 2;
    uint64_t seed = 1;
};

int runExportWeights(const ExportWeightsOptions& o) {
    LoadedRun run = loadRun(o.runFile, WeightsChoice::Final);
    std::vector<ndr::ExportedModel> models;
    try {
        models = ndr::exportModels(*run.run, o.weights == WeightsChoice::Best);
        ndr::writeExportedModels(o.out, models, o.overwrite);
        if (!o.checkBatch.empty())
            ndr::saveSafetensors(o.checkBatch, ndr::referenceBatch(*run.run, o.perDepth, o.seed));
    } catch (const ndr::FileError& e) {
        throw CliError(e.what());
    }
    std::cout << "Wrote " << models.size() << (models.size() == 1 ? " model" : " models") << " to " << o.out
              << ":\n";
    for (const auto& m : models)
        std::cout << "  " << m.stem << ".safetensors, " << m.stem << ".json ("
                  << (m.bestWeights ? "best-validation" : "final") << " weights)\n";
    if (!o.checkBatch.empty())
        std::cout << "  the reference batch: " << o.checkBatch << "\n";
    for (const auto& m : models)
        if (o.weights == WeightsChoice::Best && !m.bestWeights)
            std::cout << "Note: " << m.stem
                      << " has no best-validation weights; its final weights were written\n";
    return 0;
}

struct ImportWeightsOptions {
    std::string path, out;
};

int runImportWeights(const ImportWeightsOptions& o) {
    const fs::path runFile = fs::path(o.out) / "run.json";
    checkOutputDir(o.out);
    ndr::ImportedRun imported;
    try {
        imported = ndr::importModels(o.path);
        ndr::saveRunFiles(runFile, imported.record, imported.checkpoints);
    } catch (const ndr::FileError& e) {
        throw CliError(e.what());
    }
    std::cout << "Wrote " << runFile.string() << " with " << imported.record.models.size()
              << (imported.record.models.size() == 1 ? " model" : " models") << ":";
    for (const auto& m : imported.record.models)
        std::cout << " " << m.config.name;
    std::cout << "\n";
    return 0;
}

} // namespace

Command addExportWeightsCommand(CLI::App& root) {
    auto o = std::make_shared<ExportWeightsOptions>();
    auto* cmd = root.add_subcommand("export-weights", "Write a saved run's models as safetensors weights and "
                                                      "JSON descriptions, for PyTorch");
    cmd->add_option("run", o->runFile, "The run file (run.json)")->required();
    cmd->add_option("--out", o->out, "Folder to write <model>.safetensors and <model>.json into")->required();
    addWeightsOption(cmd, o->weights, "Weights to write: final, or best (at the best validation)");
    cmd->add_flag("--overwrite", o->overwrite,
                  "Replace files that already exist (otherwise nothing is written)");
    cmd->add_option(
        "--check-batch", o->checkBatch,
        "Also write FILE (safetensors): a fixed batch's token ids, each model's logits, loss and "
        "gradients of one training step without dropout, to check another implementation against");
    cmd->add_option("--check-per-depth", o->perDepth, "With --check-batch: examples per depth of the task")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--check-seed", o->seed, "With --check-batch: the seed the examples are drawn from");
    cmd->footer(
        "Tensor names are the engine's own (docs/design.md §7); python/ndr_torch.py loads the folder as "
        "PyTorch modules. `ndr import-weights` reads it back.\n");
    return {cmd, [o] { return runExportWeights(*o); }};
}

Command addImportWeightsCommand(CLI::App& root) {
    auto o = std::make_shared<ImportWeightsOptions>();
    auto* cmd =
        root.add_subcommand("import-weights", "Make a run folder from models written by export-weights "
                                              "(or python/import_authors.py)");
    cmd->add_option("path", o->path, "A folder of <model>.json and <model>.safetensors, or one <model>.json")
        ->required();
    cmd->add_option("--out", o->out, "The run folder to write (run.json and a checkpoint per model)")
        ->required();
    cmd->footer(
        "Every file is checked first (tensor names, shapes, the task's vocabulary); a bad file is refused "
        "with what is wrong and nothing is written.\n");
    return {cmd, [o] { return runImportWeights(*o); }};
}

} // namespace ndrcli
