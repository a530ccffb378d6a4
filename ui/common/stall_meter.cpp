// Event-loop lateness measurement (see stallmeter.h).
#include "ui/common/stall_meter.h"

#include <algorithm>

namespace ndrui {

StallMeter::StallMeter(QObject* parent) : QObject(parent) {
    timer_.setTimerType(Qt::PreciseTimer);
    connect(&timer_, &QTimer::timeout, this, &StallMeter::tick);
}

void StallMeter::start(int intervalMs) {
    intervalMs_ = intervalMs;
    lateness_.clear();
    maxLateMs_ = 0;
    maxAtSeconds_ = 0;
    clock_.start();
    lastNs_ = 0;
    timer_.start(intervalMs);
}

void StallMeter::stop() {
    timer_.stop();
}

void StallMeter::tick() {
    const qint64 now = clock_.nsecsElapsed();
    const double late = std::max(0.0, double(now - lastNs_) / 1e6 - intervalMs_);
    lastNs_ = now;
    lateness_.push_back(late);
    if (late > maxLateMs_) {
        maxLateMs_ = late;
        maxAtSeconds_ = double(now) / 1e9;
    }
}

int StallMeter::countOver(double ms) const {
    return int(std::count_if(lateness_.begin(), lateness_.end(), [ms](double late) { return late > ms; }));
}

double StallMeter::percentileMs(double p) const {
    if (lateness_.empty())
        return 0;
    std::vector<double> v = lateness_;
    const size_t k = std::min(v.size() - 1, size_t(p / 100.0 * double(v.size() - 1) + 0.5));
    std::nth_element(v.begin(), v.begin() + long(k), v.end());
    return v[k];
}

QString StallMeter::report() const {
    return QStringLiteral(
               "event loop: %1 ticks of %2 ms; lateness median %3 ms, p99 %4 ms, max %5 ms at %6 s; "
               "%7 ticks over 50 ms\n")
        .arg(ticks())
        .arg(intervalMs_)
        .arg(percentileMs(50), 0, 'f', 1)
        .arg(percentileMs(99), 0, 'f', 1)
        .arg(maxLateMs_, 0, 'f', 1)
        .arg(maxAtSeconds_, 0, 'f', 1)
        .arg(countOver(50));
}

} // namespace ndrui
