// Recent run files (see recent_runs.h).
#include "ui/shell/recent_runs.h"

#include <QFileInfo>
#include <QSettings>

namespace ndrui {

namespace {
constexpr const char* kKey = "files/recent";
} // namespace

RecentRuns::RecentRuns(bool persistent) : persistent_(persistent) {}

QStringList RecentRuns::files() const {
    QStringList list = persistent_ ? QSettings().value(kKey).toStringList() : memory_;
    // A list written by hand or by another version may be longer.
    while (list.size() > kMax)
        list.removeLast();
    return list;
}

void RecentRuns::add(const QString& file) {
    const QString path = QFileInfo(file).absoluteFilePath();
    QStringList list = files();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMax)
        list.removeLast();
    store(list);
}

void RecentRuns::remove(const QString& file) {
    QStringList list = files();
    list.removeAll(QFileInfo(file).absoluteFilePath());
    store(list);
}

void RecentRuns::store(const QStringList& files) {
    if (persistent_)
        QSettings().setValue(kKey, files);
    else
        memory_ = files;
}

} // namespace ndrui
