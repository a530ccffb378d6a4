// The application object of the desktop app: an exception that escapes a slot, a paint or any other
// event handler is caught where Qt delivers the event, instead of ending the process (Qt itself is
// not exception safe and would call std::terminate), and reported to a handler on the GUI thread.
#pragma once

#include <QApplication>
#include <QString>
#include <atomic>
#include <functional>

namespace ndrui {

class GuardedApplication : public QApplication {
public:
    GuardedApplication(int& argc, char** argv);

    // Called on the GUI thread, after the failed event, with what the exception said. The event that
    // threw is dropped; everything else goes on.
    void setErrorHandler(std::function<void(const QString&)> handler) { handler_ = std::move(handler); }
    // Exceptions caught so far.
    int caught() const { return caught_.load(); }

    bool notify(QObject* receiver, QEvent* event) override;

private:
    void report(const QString& what);

    std::function<void(const QString&)> handler_;
    std::atomic<int> caught_{0};
};

} // namespace ndrui
