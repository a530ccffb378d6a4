// What a training worker tells the window: immutable snapshots tagged with the run and the step. The
// window never reads model state; it only keeps and draws these.
#pragma once

#include "core/io/files.h"
#include "core/records/records.h"

#include <QMetaType>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

namespace ndrui {

struct LossPoint {
    int step = 0;
    double loss = 0;
};

struct Snapshot {
    quint64 runId = 0;
    int model = 0;
    int step = 0, totalSteps = 0;
    double stepsPerSecond = 0, etaSeconds = 0;
    double evaluating = -1;              // the part of an evaluation under way done, or -1
    std::vector<LossPoint> losses;       // loss-log points (ndr::LossLog) since the previous snapshot
    std::optional<ndr::EvalRecord> eval; // an evaluation done since the previous snapshot
    int bestEval = -1;                   // index of the best-validation evaluation so far
    ndr::ModelStatus status;             // Training while it goes on; then Paused, Stopped, Finished, ...
    bool done = false;                   // the worker has stopped training (status says why)
};
using SnapshotPtr = std::shared_ptr<const Snapshot>;

// A model's record and weights at one moment, for saving while training goes on.
struct ModelCapture {
    quint64 runId = 0;
    int model = 0;
    ndr::ModelRecord record;
    ndr::CheckpointData checkpoint;
};
using ModelCapturePtr = std::shared_ptr<const ModelCapture>;

// A model's trace of one example, asked for by the inspector.
struct TraceResult {
    quint64 id = 0;
    int model = 0;
    ndr::Trace trace;
    int weightsStep = 0; // the training step of the weights that traced it
    QString error;       // non-empty when the model could not trace the example
};
using TraceResultPtr = std::shared_ptr<const TraceResult>;

} // namespace ndrui

Q_DECLARE_METATYPE(ndrui::SnapshotPtr)
Q_DECLARE_METATYPE(ndrui::ModelCapturePtr)
Q_DECLARE_METATYPE(ndrui::TraceResultPtr)
