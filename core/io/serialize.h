// JSON forms of the configuration and records (nlohmann/json). from_json validates types and ranges
// and throws std::runtime_error naming the field ("models[1].heads: expected an integer").
#pragma once

#include "core/config/config.h"
#include "core/records/records.h"

#include <nlohmann/json_fwd.hpp>

namespace ndr {

void to_json(nlohmann::json& j, const TaskConfig& c);
void from_json(const nlohmann::json& j, TaskConfig& c);
void to_json(nlohmann::json& j, const ModelConfig& c);
void from_json(const nlohmann::json& j, ModelConfig& c);
void to_json(nlohmann::json& j, const TrainConfig& c);
void from_json(const nlohmann::json& j, TrainConfig& c);
void to_json(nlohmann::json& j, const RunConfig& c);
void from_json(const nlohmann::json& j, RunConfig& c);
void to_json(nlohmann::json& j, const Example& e);
void from_json(const nlohmann::json& j, Example& e);
void to_json(nlohmann::json& j, const Trace& t);
void from_json(const nlohmann::json& j, Trace& t);
void to_json(nlohmann::json& j, const EvalRecord& r);
void from_json(const nlohmann::json& j, EvalRecord& r);
void to_json(nlohmann::json& j, const ModelRecord& r);
void from_json(const nlohmann::json& j, ModelRecord& r);
void to_json(nlohmann::json& j, const RunRecord& r);
void from_json(const nlohmann::json& j, RunRecord& r);

// A run configuration from a JSON config file's text: either a full RunConfig object, or
// {"preset": "stub", ...overrides} where present sections override the preset's fields. Validated; a
// field the format does not have is an error naming it (and the known name it is closest to), except
// one top-level "comment". Throws std::runtime_error with every problem, one per line.
RunConfig runConfigFromJson(const std::string& text);

} // namespace ndr
