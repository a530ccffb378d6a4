// Every file format's older versions, read in one place: a file of an older version is brought to the
// current version's shape before its reader sees it, so each reader knows one shape only
// (docs/design.md §7).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>

namespace ndr::migrations {

// A run file's JSON of `version` (1 .. RunRecord::kVersion) in the shape of the current version: the
// fields a version lacked get the values that mean "none" (no head routing, one readout, no operator
// selection, no state change, no loss log ...). Only objects are touched; anything else is left for
// the reader to name.
void upgradeRunFile(nlohmann::json& run, int64_t version);

// A checkpoint header of `version` (1 .. CheckpointData::kVersion) in the current shape: version 1
// keeps the generators, Adam's step and the training seconds in one text, "rngState"; the current
// version names them. FileError when that text cannot be split.
void upgradeCheckpointHeader(nlohmann::json& header, int64_t version);

} // namespace ndr::migrations
