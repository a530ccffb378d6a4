// The inspector's notes (see inspector.h): why a model's answer may need more steps.
#include "ui/inspector/inspector.h"
#include "ui/training/training_session.h"

namespace ndrui {

QStringList Inspector::routingNotes() const {
    QStringList notes;
    // Only table lookup names the steps a question needs.
    if (!example_ || !session_.task() || !session_.task()->routesOneStepPerDepth())
        return notes;
    const int depth = example_->depth();
    for (int m = 0; m < modelCount(); ++m)
        if (const ndr::Trace* t = trace(m); t && ndr::stepsBelowDepth(depth, t->steps))
            notes << tr("%1 runs %2 steps, fewer than the %3 that route a depth-%4 expression one function "
                        "per step; its answer is shown all the same.")
                         .arg(modelName(session_.models()[size_t(m)]))
                         .arg(t->steps)
                         .arg(ndr::routingSteps(depth))
                         .arg(depth);
    return notes;
}

namespace {

// "A", "A and B", "A, B and C".
QString listOfNames(const QStringList& names) {
    if (names.size() <= 1)
        return names.join(QString());
    return QObject::tr("%1 and %2").arg(names.mid(0, names.size() - 1).join(", "), names.back());
}

} // namespace

QString Inspector::shortRoutingNote() const {
    // One sentence for all the models that run too few steps, so the note stays a line or two.
    if (!session_.task() || !session_.task()->routesOneStepPerDepth())
        return {};
    QStringList names;
    int steps = 0;
    for (int m = 0; m < modelCount(); ++m)
        if (const ndr::Trace* t = trace(m);
            example_ && t && ndr::stepsBelowDepth(example_->depth(), t->steps)) {
            names << modelName(session_.models()[size_t(m)]);
            steps = std::max(steps, t->steps);
        }
    if (names.isEmpty())
        return {};
    const int depth = example_->depth();
    return tr("%1 run at most %2 steps, fewer than the %3 that route a depth-%4 expression one function per "
              "step; the answers are shown all the same.")
        .arg(listOfNames(names))
        .arg(steps)
        .arg(ndr::routingSteps(depth))
        .arg(depth);
}

} // namespace ndrui
