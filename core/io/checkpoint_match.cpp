// Whether a checkpoint fits a model: the same kind, that kind's architecture fields, the tensor
// layout and the buffers' sizes.
#include "core/config/model_kind.h"
#include "core/io/files.h"

#include "core/io/checkpoint_problems.h"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace ndr {

using checkpointio::checkpointBufferProblems;
using checkpointio::joinProblems;

void checkCheckpointMatches(const CheckpointData& data, const ModelConfig& model,
                            const std::vector<TensorInfo>& layout) {
    std::vector<std::string> problems;
    // Architecture only: dropouts, evalSteps and the name may change between training and use.
    const ModelKindInfo &savedKind = kindOf(data.model), &wantedKind = kindOf(model);
    if (&savedKind != &wantedKind) {
        problems.push_back("checkpoint was saved for kind " + savedKind.id +
                           " but the run's model has kind " + wantedKind.id);
    } else {
        const auto show = [](const FieldValue& v) {
            return std::visit(
                [](const auto& x) -> std::string {
                    using T = std::decay_t<decltype(x)>;
                    if constexpr (std::is_same_v<T, std::string>)
                        return x;
                    else if constexpr (std::is_same_v<T, bool>)
                        return x ? "true" : "false";
                    else if constexpr (std::is_same_v<T, double>)
                        return numberText(x);
                    else
                        return std::to_string(x);
                },
                v);
        };
        for (const std::string& key : wantedKind.parameterFields)
            for (const ModelField& f : wantedKind.fields)
                if (f.key == key && !(f.get(data.model) == f.get(model)))
                    problems.push_back("checkpoint was saved for " + key + " " + show(f.get(data.model)) +
                                       " but the run's model has " + key + " " + show(f.get(model)));
    }
    // With the same architecture a different layout means a different task (vocabulary, symbols).
    if (problems.empty() && data.layout != layout) {
        if (data.layout.size() != layout.size()) {
            problems.push_back("checkpoint has " + std::to_string(data.layout.size()) +
                               " tensors but the run's model has " + std::to_string(layout.size()));
        } else {
            for (size_t i = 0; i < layout.size(); ++i) {
                const TensorInfo &a = data.layout[i], &b = layout[i];
                if (a == b)
                    continue;
                problems.push_back("checkpoint tensor " + std::to_string(i) + " is '" + a.name + "' " +
                                   std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                                   " but the run's model has '" + b.name + "' " + std::to_string(b.rows) +
                                   "x" + std::to_string(b.cols) + " (was the task changed?)");
                break;
            }
        }
    }
    const auto buffers = checkpointBufferProblems(data);
    problems.insert(problems.end(), buffers.begin(), buffers.end());
    if (!problems.empty())
        throw FileError(joinProblems(problems));
}

} // namespace ndr
