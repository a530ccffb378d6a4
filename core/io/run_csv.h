// A run's history as CSV tables, for spreadsheets and plotting scripts: one row per evaluation of each
// model, one per evaluation, model and depth (and operation), and the training-loss log.
#pragma once

#include "core/records/records.h"

#include <string>

namespace ndr {

// model,step,train_loss,iid,validation,longer,steps_per_second (empty cells where a split is absent).
std::string evaluationsCsv(const RunRecord& record);
// model,step,depth,split,accuracy,loss (split: train, valid or test, from the run's task).
std::string depthAccuracyCsv(const RunRecord& record);
// model,step,depth,split,operation,examples,right,accuracy: per evaluation of each model, depth and
// operation at the root of the examples (tasks with operations; the header alone for the others).
std::string operationAccuracyCsv(const RunRecord& record);
// Whether any evaluation of the run has the per-operation counts.
bool hasOperationCounts(const RunRecord& record);
// model,step,loss: the training loss averaged over each logged span of steps.
std::string lossCsv(const RunRecord& record);

} // namespace ndr
