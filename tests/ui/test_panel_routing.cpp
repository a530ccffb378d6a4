// The experiment panel's head routing, thought cost and halting fields driven through their widgets: the
// routing presets fill them, edits reach the configuration, the fields follow the model's switches and
// the validator's messages show beside them.
#include "core/config/config.h"
#include "panel_fixture.h"
#include "ui/panel/experiment_panel.h"
#include "ui/panel/real_spin_box.h"

#include <QCheckBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

using ndrui::ExperimentPanel;
using namespace ndrtest;

class TestPanelRouting : public QObject {
    Q_OBJECT
private:
    QTemporaryDir configHome_;

private slots:
    void initTestCase() {
        QVERIFY(configHome_.isValid());
        qputenv("XDG_CONFIG_HOME", configHome_.path().toLocal8Bit());
    }

    void routingPresetsFillTheFields() {
        ExperimentPanel panel(nullptr, false);
        for (const QString name : {"stub-routing", "stub-thought-cost", "stub", "stub-routing"}) {
            choosePreset(panel, name);
            EXPECT_SAME_CONFIG(panel.config(), ndr::presetConfig(name.toStdString()));
            QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        }
        // stub-routing: columns 1 and 3 route top-2 of 4.
        for (int m = 0; m < 4; ++m) {
            const QString at = QString("models[%1].").arg(m);
            QCOMPARE(field<QCheckBox>(panel, at + "headRouting")->isChecked(), m % 2 == 1);
            QCOMPARE(field<QSpinBox>(panel, at + "routeTopK")->value(), m % 2 == 1 ? 2 : 0);
            QCOMPARE(field<QSpinBox>(panel, at + "routeTopK")->isEnabled(), m % 2 == 1);
        }
        // Thought cost and halting apply to copy-gated models only: NDR yes, the Transformer no.
        QVERIFY(field<ndrui::RealSpinBox>(panel, "models[0].thoughtCost")->isEnabled());
        QVERIFY(field<ndrui::RealSpinBox>(panel, "models[0].haltThreshold")->isEnabled());
        QVERIFY(!field<ndrui::RealSpinBox>(panel, "models[2].thoughtCost")->isEnabled());
        QVERIFY(!field<ndrui::RealSpinBox>(panel, "models[2].haltThreshold")->isEnabled());
    }

    void editsReachTheConfiguration() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        ndr::RunConfig want = ndr::presetConfig("stub");
        // Ticking routing starts the entropy coefficient at 0.01, and enables top-k.
        auto* routing = field<QCheckBox>(panel, "models[0].headRouting");
        QVERIFY(!field<QSpinBox>(panel, "models[0].routeTopK")->isEnabled());
        QTest::mouseClick(routing, Qt::LeftButton, {}, QPoint(8, routing->height() / 2));
        QVERIFY(routing->isChecked());
        QVERIFY(field<QSpinBox>(panel, "models[0].routeTopK")->isEnabled());
        QVERIFY(!field<QComboBox>(panel, "models[0].routeDropped")->isEnabled()); // every head kept
        typeInto(field<QSpinBox>(panel, "models[0].routeTopK"), "3");
        QVERIFY(field<QComboBox>(panel, "models[0].routeDropped")->isEnabled());
        field<QComboBox>(panel, "models[0].routeDropped")->setCurrentIndex(1);
        typeInto(field<ndrui::RealSpinBox>(panel, "models[0].thoughtCost"), "0.02");
        typeInto(field<ndrui::RealSpinBox>(panel, "models[0].haltThreshold"), "0.15");
        // The Transformer has no gates to halt on; halting on the change enables its threshold.
        auto* vanillaHalt = field<ndrui::RealSpinBox>(panel, "models[1].haltThreshold");
        QVERIFY(!vanillaHalt->isEnabled());
        auto* haltOn = field<QComboBox>(panel, "models[1].haltOn");
        haltOn->setCurrentIndex(haltOn->findText("change"));
        QVERIFY(vanillaHalt->isEnabled());
        typeInto(vanillaHalt, "0.2");
        want.models[1].as<ndr::EncoderConfig>().haltOn = ndr::HaltSignal::Change;
        want.models[1].as<ndr::EncoderConfig>().haltThreshold = 0.2;
        want.preset = "custom";
        want.models[0].as<ndr::EncoderConfig>().headRouting = true;
        want.models[0].as<ndr::EncoderConfig>().routeTopK = 3;
        want.models[0].as<ndr::EncoderConfig>().routeDropped = ndr::DroppedHeads::SeedExact;
        want.models[0].as<ndr::EncoderConfig>().routeEntropy = 0.01;
        want.models[0].as<ndr::EncoderConfig>().thoughtCost = 0.02;
        want.models[0].as<ndr::EncoderConfig>().haltThreshold = 0.15;
        EXPECT_SAME_CONFIG(panel.config(), want);
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
    }

    void problemsShowBesideTheirField() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub-routing");
        // One head cannot keep the top 2.
        typeInto(field<QSpinBox>(panel, "models[1].heads"), "1");
        QVERIFY2(noteOf(panel, "models[1].routeTopK").contains("between 1 and heads (1), got 2"),
                 qPrintable(noteOf(panel, "models[1].routeTopK")));
        QVERIFY(!field<QPushButton>(panel, "start")->isEnabled());
        typeInto(field<QSpinBox>(panel, "models[1].heads"), "4");
        QVERIFY(noteOf(panel, "models[1].routeTopK").isEmpty());
        // A thought cost on a residual model is refused by name; the field stays editable to fix it.
        choosePreset(panel, "stub-thought-cost");
        auto* update = field<QComboBox>(panel, "models[1].update");
        update->setCurrentIndex(update->findText("residual"));
        QVERIFY(noteOf(panel, "models[1].thoughtCost").contains("needs a copy-gated update"));
        QVERIFY(field<ndrui::RealSpinBox>(panel, "models[1].thoughtCost")->isEnabled());
        typeInto(field<ndrui::RealSpinBox>(panel, "models[1].thoughtCost"), "0");
        QVERIFY(noteOf(panel, "models[1].thoughtCost").isEmpty());
        QVERIFY(!field<ndrui::RealSpinBox>(panel, "models[1].thoughtCost")->isEnabled());
    }
};

QTEST_MAIN(TestPanelRouting)
#include "test_panel_routing.moc"
