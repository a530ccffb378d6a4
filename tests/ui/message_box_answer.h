// Answering the modal message boxes a test provokes: an Answer made before the action clicks the
// chosen button of the next box with the given object name once it shows.
#pragma once

#include <QAbstractButton>
#include <QApplication>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QTimer>
#include <functional>
#include <memory>

namespace ndrtest {

// Answers the next modal message box named `name` by clicking the button `pick` chooses; `seen` tells
// whether it showed. Polls, since the box runs its own event loop once shown.
class Answer {
public:
    Answer(const QString& name, std::function<QAbstractButton*(QMessageBox*)> pick) {
        auto* timer = new QTimer;
        timer->setInterval(20);
        auto deadline = std::make_shared<QElapsedTimer>();
        deadline->start();
        QObject::connect(timer, &QTimer::timeout, [seen = seen_, text = text_, timer, deadline, name, pick] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (box && box->objectName() == name) {
                *seen = true;
                *text = box->text();
                pick(box)->click();
            } else if (deadline->elapsed() < 10000) {
                return;
            }
            timer->stop();
            timer->deleteLater();
        });
        timer->start();
    }
    bool seen() const { return *seen_; }
    const QString& text() const { return *text_; }

private:
    std::shared_ptr<bool> seen_ = std::make_shared<bool>(false);
    std::shared_ptr<QString> text_ = std::make_shared<QString>();
};

inline std::function<QAbstractButton*(QMessageBox*)> standard(QMessageBox::StandardButton b) {
    return [b](QMessageBox* box) { return box->button(b); };
}
inline std::function<QAbstractButton*(QMessageBox*)> named(const QString& name) {
    return [name](QMessageBox* box) { return box->findChild<QAbstractButton*>(name); };
}

} // namespace ndrtest
