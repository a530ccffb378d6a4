// Measures how responsive the event loop is: a timer asks to fire every few milliseconds and records
// how late each tick comes. The longest lateness is the longest the window could not react.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <vector>

namespace ndrui {

class StallMeter : public QObject {
    Q_OBJECT

public:
    explicit StallMeter(QObject* parent = nullptr);
    void start(int intervalMs = 5);
    void stop();
    double maxLatenessMs() const { return maxLateMs_; }
    double percentileMs(double p) const;                  // lateness percentile over all ticks (p in 0..100)
    double maxAtSeconds() const { return maxAtSeconds_; } // when the longest stall ended, since start()
    int countOver(double ms) const;                       // ticks later than `ms`
    int ticks() const { return int(lateness_.size()); }
    QString report() const; // one line per figure

private:
    void tick();
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 lastNs_ = 0;
    int intervalMs_ = 5;
    double maxLateMs_ = 0;
    double maxAtSeconds_ = 0;
    std::vector<double> lateness_;
};

} // namespace ndrui
