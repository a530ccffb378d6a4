// Driving the experiment panel's widgets from a test: fields by their object name (the config path),
// typing as a user does, choosing a preset, reading a field's inline note, comparing configurations.
#pragma once

#include "core/config/config.h"
#include "core/io/serialize.h"

#include <QComboBox>
#include <QLabel>
#include <QtTest>
#include <nlohmann/json.hpp>

namespace ndrtest {

// The configuration as JSON, to show what differs when two are not equal.
inline QString dump(const ndr::RunConfig& c) {
    return QString::fromStdString(nlohmann::json(c).dump(1));
}

#define EXPECT_SAME_CONFIG(got, want)                                                                        \
    do {                                                                                                     \
        const ndr::RunConfig got_ = (got), want_ = (want);                                                   \
        QVERIFY2(got_ == want_, qPrintable("got\n" + dump(got_) + "\nwant\n" + dump(want_)));                \
    } while (0)

template <typename W> W* field(QWidget& panel, const QString& name) {
    W* w = panel.findChild<W*>(name);
    if (!w)
        qFatal("no %s named %s", W::staticMetaObject.className(), qPrintable(name));
    return w;
}

// Types into a spin box or line edit as a user would: select everything, delete, type, press Enter.
inline void typeInto(QWidget* w, const QString& text) {
    w->setFocus();
    QTest::keyClick(w, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(w, Qt::Key_Delete);
    QTest::keyClicks(w, text);
    QTest::keyClick(w, Qt::Key_Return);
}

inline void choosePreset(QWidget& panel, const QString& name) {
    auto* combo = field<QComboBox>(panel, "preset");
    const int index = combo->findText(name);
    QVERIFY2(index >= 0, qPrintable(name));
    combo->setCurrentIndex(index);
}

inline QString noteOf(QWidget& panel, const QString& path) {
    auto* note = field<QLabel>(panel, path + ".problem");
    return note->isHidden() ? QString() : note->text();
}

} // namespace ndrtest
