// Models that leave NDR Studio and come back (docs/design.md §7): per model a safetensors file of its
// weights under the engine's own tensor names and a JSON description of it (its configuration, its
// run's task and vocabulary), which `ndr export-weights` writes and `ndr import-weights` and the
// PyTorch twin (python/ndr_torch.py) read.
#pragma once

#include "core/config/config.h"
#include "core/io/files.h"
#include "core/io/safetensors.h"
#include "core/records/records.h"
#include "core/train/run.h"

#include <filesystem>
#include <string>
#include <vector>

namespace ndr {

constexpr const char* kModelDescriptionFormat = "ndr-studio-model";
constexpr int kModelDescriptionVersion = 1;
constexpr const char* kWeightsFormat = "ndr-studio-weights";

// The tensors of a model's parameters: one per entry of `layout`, named as the layout names it, shape
// [cols] for a tensor of one row (a bias, a gain, the geometric attention's scalars) and [rows, cols]
// otherwise, values row-major. `values` holds the layout's tensors one after another.
SafetensorsFile weightsToSafetensors(const std::vector<TensorInfo>& layout, const std::vector<float>& values);
// The values of `file`'s tensors in the order of `layout`. FileError (without a file name) naming a
// tensor the model needs that is missing, one of the wrong shape for this model, or one that is no
// parameter of it. A one-row tensor may be given as [cols] or [1, cols].
std::vector<float> weightsFromSafetensors(const SafetensorsFile& file, const std::vector<TensorInfo>& layout);

// One model's pair of files: `<stem>.json` (the description) and `<stem>.safetensors`.
struct ExportedModel {
    std::string stem;
    std::string description; // the JSON text
    SafetensorsFile weights;
    bool bestWeights = false; // the weights of the best validation, not the final ones
};

// The files of every model of a run with its weights: the final weights, or with `best` those of the
// best validation for a model that has them.
std::vector<ExportedModel> exportModels(const Run& run, bool best);
// Writes each pair into `dir` (made when missing), each file atomically. Throws FileError before
// writing anything when a file of the same name is there and `overwrite` is false.
void writeExportedModels(const std::filesystem::path& dir, const std::vector<ExportedModel>& models,
                         bool overwrite);

// A run read back from exported models: the record and checkpoints saveRunFiles writes.
struct ImportedRun {
    RunRecord record;
    std::vector<CheckpointData> checkpoints;
    std::vector<std::filesystem::path> descriptions; // the files read, in the run's model order
};

// Reads the model descriptions `path` names (a folder: every `*.json` in it; or one `.json` file) and
// their weights, and checks them against each other and against the models they describe. Throws
// FileError naming the file and what is wrong; reads only.
ImportedRun importModels(const std::filesystem::path& path);

} // namespace ndr
