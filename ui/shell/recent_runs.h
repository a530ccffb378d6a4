// The run files opened or saved lately, newest first: kept in the settings when the window keeps
// settings, in memory otherwise. The window builds its "Open recent" menu from files().
#pragma once

#include <QStringList>

namespace ndrui {

class RecentRuns {
public:
    static constexpr int kMax = 8;

    // `persistent`: read and write the list in QSettings (files/recent); otherwise it lives and dies
    // with this object.
    explicit RecentRuns(bool persistent);

    QStringList files() const; // absolute paths, newest first, at most kMax
    // Puts `file` first (as an absolute path), dropping an earlier entry of it and the oldest beyond kMax.
    void add(const QString& file);
    void remove(const QString& file);

private:
    void store(const QStringList& files);

    bool persistent_;
    QStringList memory_; // the list when not persistent
};

} // namespace ndrui
