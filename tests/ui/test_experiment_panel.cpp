// The experiment panel driven through its widgets: presets fill every field, edits but the seeds switch to
// custom, the core's validation shows inline and gates Start, state locks the fields, settings persist.
#include "core/config/config.h"
#include "core/io/serialize.h"
#include "panel_fixture.h"
#include "ui/panel/experiment_panel.h"
#include "ui/panel/real_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>
#include <functional>
#include <nlohmann/json.hpp>

using ndrui::ExperimentPanel;

using namespace ndrtest;

namespace {

bool hasProblemFor(const QStringList& problems, const QString& path) {
    for (const QString& p : problems)
        if (p.startsWith(path + ": "))
            return true;
    return false;
}

} // namespace

class TestExperimentPanel : public QObject {
    Q_OBJECT
private:
    QTemporaryDir configHome_;

private slots:
    void initTestCase() {
        // QSettings writes under XDG_CONFIG_HOME: a temporary one keeps the user's settings out of it.
        QVERIFY(configHome_.isValid());
        qputenv("XDG_CONFIG_HOME", configHome_.path().toLocal8Bit());
    }

    void eachPresetFillsEveryField() {
        ExperimentPanel panel(nullptr, false);
        // Going round twice makes every preset replace a different one.
        const QStringList order = {"paper-backward", "stub",           "arith", "paper-forward", "listops",
                                   "thoughtnet",     "paper-backward", "stub",  "thoughtnet"};
        for (const QString& name : order) {
            choosePreset(panel, name);
            const ndr::RunConfig want = ndr::presetConfig(name.toStdString());
            EXPECT_SAME_CONFIG(panel.config(), want);
            QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
            QVERIFY(field<QPushButton>(panel, "start")->isEnabled());
        }
    }

    void editingAFieldSwitchesToCustom() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "paper-forward");
        QSignalSpy changed(&panel, &ExperimentPanel::configChanged);
        typeInto(field<QSpinBox>(panel, "models[0].dModel"), "96");
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        QVERIFY(changed.count() > 0);
        ndr::RunConfig want = ndr::presetConfig("paper-forward");
        want.preset = "custom";
        want.models[0].as<ndr::EncoderConfig>().dModel = 96;
        EXPECT_SAME_CONFIG(panel.config(), want); // every other field kept

        // A combo and a real-valued field as well.
        choosePreset(panel, "stub");
        field<QComboBox>(panel, "task.order")->setCurrentIndex(1);
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        QCOMPARE(panel.config().task.order, ndr::Order::Backward);
        choosePreset(panel, "stub");
        typeInto(field<QDoubleSpinBox>(panel, "models[1].dropout"), "0.25");
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        QCOMPARE(panel.config().models[1].as<ndr::EncoderConfig>().dropout, 0.25f);
    }

    // The seeds are not part of a preset: editing them keeps it, and a preset's run from other seeds
    // (`ndr train --preset NAME --seed N`) opens as that preset.
    void seedsKeepThePreset() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        typeInto(field<QLineEdit>(panel, "train.seed"), "7");
        typeInto(field<QLineEdit>(panel, "task.seed"), "3");
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("stub"));
        ndr::RunConfig want = ndr::presetConfig("stub");
        want.train.seed = 7;
        want.task.seed = 3;
        EXPECT_SAME_CONFIG(panel.config(), want);
        typeInto(field<QSpinBox>(panel, "train.steps"), "1500");
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));

        ndr::RunConfig seeded = ndr::presetConfig("thoughtnet");
        seeded.task.seed = seeded.train.seed = 2;
        panel.setConfig(seeded);
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("thoughtnet"));
        EXPECT_SAME_CONFIG(panel.config(), seeded);
        seeded.train.steps = 100;
        panel.setConfig(seeded);
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
    }

    void badValuesAreShownAndBlockStart_data() {
        QTest::addColumn<QString>("editor");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problemField");
        QTest::addColumn<QString>("says");
        // Stub: train 1-4, no validation split, test 5-7, d_model 48.
        QTest::newRow("train min > max") << "task.trainMinDepth"
                                         << "6"
                                         << "task.trainMaxDepth"
                                         << "must be at least task.trainMinDepth";
        QTest::newRow("heads do not divide d_model") << "models[0].heads"
                                                     << "5"
                                                     << "models[0].heads"
                                                     << "5 does not divide d_model 48";
        QTest::newRow("learning rate 0") << "train.learningRate"
                                         << "0"
                                         << "train.learningRate"
                                         << "must be above 0";
        QTest::newRow("test overlaps train") << "task.testMinDepth"
                                             << "3"
                                             << "task.testMinDepth"
                                             << "overlap train depths 1..4";
        QTest::newRow("one symbol") << "task.symbols"
                                    << "1"
                                    << "task.symbols"
                                    << "must be between 2 and 64";
        QTest::newRow("empty name") << "models[1].name"
                                    << ""
                                    << "models[1].name"
                                    << "must not be empty";
        QTest::newRow("duplicate name") << "models[1].name"
                                        << "NDR"
                                        << "models[1].name"
                                        << "already the name of another model";
    }

    void badValuesAreShownAndBlockStart() {
        QFETCH(QString, editor);
        QFETCH(QString, text);
        QFETCH(QString, problemField);
        QFETCH(QString, says);
        ExperimentPanel panel(nullptr, false);
        panel.resize(440, 900);
        panel.show();
        auto* start = field<QPushButton>(panel, "start");
        QVERIFY(panel.problems().isEmpty());
        QVERIFY(noteOf(panel, problemField).isEmpty());

        typeInto(field<QWidget>(panel, editor), text);
        QVERIFY2(hasProblemFor(panel.problems(), problemField), qPrintable(panel.problems().join('\n')));
        QVERIFY2(noteOf(panel, problemField).contains(says), qPrintable(noteOf(panel, problemField)));
        QVERIFY(field<QWidget>(panel, problemField)->toolTip().contains(says));
        QVERIFY(field<QLabel>(panel, "summary")->text().contains("problem"));
        QVERIFY(!start->isEnabled());
        QSignalSpy started(&panel, &ExperimentPanel::startRequested);
        QTest::mouseClick(start, Qt::LeftButton);
        QCOMPARE(started.count(), 0);

        // Back to a valid preset: the note goes and Start comes back.
        choosePreset(panel, "stub");
        QVERIFY(panel.problems().isEmpty());
        QVERIFY(noteOf(panel, problemField).isEmpty());
        QVERIFY(start->isEnabled());
    }

    void unshareedEvalStepsAndSoftmaxL1AreCoreProblems() {
        ExperimentPanel panel(nullptr, false);
        field<QCheckBox>(panel, "models[0].sharedWeights")->setChecked(false);
        QVERIFY2(noteOf(panel, "models[0].evalSteps").contains("without shared weights"),
                 qPrintable(panel.problems().join('\n')));
        choosePreset(panel, "stub");
        field<QComboBox>(panel, "models[0].geomNorm")->setCurrentIndex(1);  // L1
        field<QComboBox>(panel, "models[0].attention")->setCurrentIndex(0); // softmax
        QVERIFY(noteOf(panel, "models[0].geomNorm").contains("needs geometric attention"));
        // Still editable, so the user can fix it; off under softmax is then disabled.
        auto* norm = field<QComboBox>(panel, "models[0].geomNorm");
        QVERIFY(norm->isEnabled());
        norm->setCurrentIndex(0);
        QVERIFY(panel.problems().isEmpty());
        QVERIFY(!norm->isEnabled());
    }

    void fieldsThatDoNotApplyAreDisabled() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        // Model 0 is NDR (geometric, copy gate), model 1 vanilla (softmax, residual).
        QVERIFY(field<QWidget>(panel, "models[0].gateDropout")->isEnabled());
        QVERIFY(field<QWidget>(panel, "models[0].geomNorm")->isEnabled());
        QVERIFY(!field<QWidget>(panel, "models[1].gateDropout")->isEnabled());
        QVERIFY(!field<QWidget>(panel, "models[1].gateBiasInit")->isEnabled());
        QVERIFY(!field<QWidget>(panel, "models[1].geomNorm")->isEnabled());
        field<QComboBox>(panel, "models[1].update")->setCurrentIndex(1); // copy gate
        QVERIFY(field<QWidget>(panel, "models[1].gateDropout")->isEnabled());
        QVERIFY(field<QWidget>(panel, "models[1].gateBiasInit")->isEnabled());
    }

    // Symbols, functions and order belong to table lookup; choosing another task disables them, hides
    // their rows and reaches the configuration.
    void taskKindDisablesTableLookupFields() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        for (const char* name : {"task.symbols", "task.functions", "task.order"}) {
            QVERIFY(field<QWidget>(panel, name)->isEnabled());
            QVERIFY(field<QWidget>(panel, name)->isVisibleTo(&panel));
        }
        auto* kind = field<QComboBox>(panel, "task.kind");
        kind->setCurrentIndex(kind->findData(int(ndr::TaskKind::ListOps)));
        for (const char* name : {"task.symbols", "task.functions", "task.order"}) {
            QVERIFY(!field<QWidget>(panel, name)->isEnabled());
            QVERIFY(!field<QWidget>(panel, name)->isVisibleTo(&panel));
        }
        QCOMPARE(panel.config().task.kind, ndr::TaskKind::ListOps);
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        // Depth 1 is no ListOps question: the panel says so under the field and Start stays off.
        field<QSpinBox>(panel, "task.trainMinDepth")->setValue(1);
        QVERIFY(!panel.problems().isEmpty());
        QVERIFY(!field<QPushButton>(panel, "start")->isEnabled());
        field<QSpinBox>(panel, "task.trainMinDepth")->setValue(2);
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        choosePreset(panel, "stub");
        QVERIFY(field<QWidget>(panel, "task.symbols")->isEnabled());
        QVERIFY(field<QWidget>(panel, "task.symbols")->isVisibleTo(&panel));
    }

    // ListOps' operations: a field of words, enabled for ListOps alone, refused by name when unknown.
    void listOpsOperationsField() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "listops");
        auto* operations = field<QLineEdit>(panel, "task.operations");
        QVERIFY(operations->isEnabled() && operations->isVisibleTo(&panel));
        QCOMPARE(operations->text(), QString("MIN MAX MED SM"));
        typeInto(operations, "max  min med");
        QCOMPARE(panel.config().task.operations, (std::vector<std::string>{"MAX", "MIN", "MED"}));
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        typeInto(operations, "MAX SUM");
        QVERIFY2(noteOf(panel, "task.operations").contains("unknown operation 'SUM'"),
                 qPrintable(noteOf(panel, "task.operations")));
        QVERIFY(!field<QPushButton>(panel, "start")->isEnabled());
        // Another task has no operations to choose: the field is off and hidden, and its text does not
        // count.
        auto* kind = field<QComboBox>(panel, "task.kind");
        kind->setCurrentIndex(kind->findData(int(ndr::TaskKind::Arith)));
        QVERIFY(!operations->isEnabled() && !operations->isVisibleTo(&panel));
        QCOMPARE(panel.config().task.operations, ndr::listOpsOperationNames());
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        // A configuration with a subset fills the field.
        ndr::RunConfig c = ndr::presetConfig("listops");
        c.task.operations = {"SM"};
        panel.setConfig(c);
        QCOMPARE(operations->text(), QString("SM"));
        QCOMPARE(panel.config().task.operations, std::vector<std::string>{"SM"});
    }

    // The multi-digit task's depths are its problem sizes: the depth fields show and read them by name,
    // and the rows say sizes; another task's show numbers again.
    void multiDigitDepthsShowAsSizes() {
        ExperimentPanel panel(nullptr, false);
        auto hasLabel = [&](const QString& text) {
            for (const QLabel* label : panel.findChildren<QLabel*>())
                if (label->text() == text)
                    return true;
            return false;
        };
        choosePreset(panel, "thoughtnet");
        auto* trainMin = field<QSpinBox>(panel, "task.trainMinDepth");
        auto* trainMax = field<QSpinBox>(panel, "task.trainMaxDepth");
        auto* testMax = field<QSpinBox>(panel, "task.testMaxDepth");
        QCOMPARE(trainMin->text(), QString("1+1"));
        QCOMPARE(trainMax->text(), QString("2×2"));
        QCOMPARE(testMax->text(), QString("2×3"));
        QVERIFY(hasLabel("train sizes") && hasLabel("test sizes") && !hasLabel("train depths"));
        QCOMPARE(field<QCheckBox>(panel, "task.validEnabled")->text(), QString("valid sizes"));
        // A size typed with x for ×, or a depth's number, sets that depth.
        typeInto(trainMax, "1x2");
        QCOMPARE(trainMax->value(), 5);
        QCOMPARE(trainMax->text(), QString("1×2"));
        QCOMPARE(panel.config().task.trainMaxDepth, 5);
        typeInto(trainMax, "3");
        QCOMPARE(trainMax->text(), QString("3+3"));
        QCOMPARE(panel.config().task.trainMaxDepth, 3);
        // A depth the task does not have shows as its number, and the core's note says what is wrong.
        typeInto(trainMax, "9");
        QCOMPARE(trainMax->text(), QString("9"));
        QVERIFY(!noteOf(panel, "task.trainMaxDepth").isEmpty());
        QVERIFY(!field<QPushButton>(panel, "start")->isEnabled());
        typeInto(trainMax, "2*2");
        QCOMPARE(panel.config().task.trainMaxDepth, 6);
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        choosePreset(panel, "stub");
        QCOMPARE(trainMin->text(), QString("1"));
        QCOMPARE(testMax->text(), QString("7"));
        QVERIFY(hasLabel("train depths") && hasLabel("test depths") && !hasLabel("train sizes"));
        // Table lookup has no sizes: the x of "1x2" is refused as any letter is, the digits stay.
        typeInto(trainMax, "1x2");
        QCOMPARE(panel.config().task.trainMaxDepth, 12);
    }

    // A column of kind LSTM shows the LSTM's fields and hides the encoder's. Its fields reach the
    // configuration, and a configuration with the LSTM model preset fills them.
    void lstmColumnShowsOnlyItsFields() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        QVERIFY(field<QWidget>(panel, "models[1].lstmHidden")->isHidden());
        QVERIFY(!field<QWidget>(panel, "models[1].dModel")->isHidden());
        field<QComboBox>(panel, "models[1].kind")->setCurrentIndex(1); // LSTM
        QVERIFY(panel.config().models[1].is<ndr::LstmConfig>());
        for (const char* name : {"dModel", "heads", "attention", "steps", "gateBiasInit", "attentionDropout"})
            QVERIFY2(field<QWidget>(panel, QString("models[1].%1").arg(name))->isHidden(), name);
        for (const char* name :
             {"name", "kind", "lstmHidden", "lstmEmbedding", "dropout", "learningRate", "weightDecay"})
            QVERIFY2(!field<QWidget>(panel, QString("models[1].%1").arg(name))->isHidden(), name);
        QVERIFY(!field<QWidget>(panel, "models[0].dModel")->isHidden());
        QVERIFY(field<QWidget>(panel, "models[0].lstmHidden")->isHidden());
        typeInto(field<QSpinBox>(panel, "models[1].lstmHidden"), "64");
        QCOMPARE(panel.config().models[1].as<ndr::LstmConfig>().hidden, 64);
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));

        // Weight decay: "run's" (-1) at the bottom, one step up is none.
        auto* decay = field<ndrui::RealSpinBox>(panel, "models[1].weightDecay");
        QCOMPARE(decay->text(), QString("run's"));
        QCOMPARE(panel.config().models[1].weightDecay, -1.0);
        decay->stepBy(1);
        QCOMPARE(panel.config().models[1].weightDecay, 0.0);
        decay->stepBy(2);
        QCOMPARE(panel.config().models[1].weightDecay, 0.002);

        // A configuration with the "lstm" model preset fills the column and reads back unchanged.
        ndr::RunConfig want = ndr::presetConfig("stub");
        want.preset = "custom";
        want.models[1] = ndr::lstmModel();
        panel.setConfig(want);
        QCOMPARE(dump(panel.config()), dump(want));
        QVERIFY(field<QWidget>(panel, "models[1].heads")->isHidden());
    }

    void tableOneRowPickerSetsTheSwitches() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        auto pick = [&](int column, const QString& label) {
            auto* row = field<QComboBox>(panel, QString("models[%1].row").arg(column));
            const int index = row->findText(label);
            QVERIFY2(index >= 0, qPrintable(label));
            row->setCurrentIndex(index);
            emit row->activated(index); // as a user's choice
        };
        QCOMPARE(field<QComboBox>(panel, "models[0].row")->currentText(), QString("NDR"));
        QCOMPARE(field<QComboBox>(panel, "models[1].row")->currentText(), QString("Transformer"));
        pick(1, "+rel+gate");
        pick(0, "+abs/rel+gate");
        const ndr::RunConfig stub = ndr::presetConfig("stub");
        ndr::RunConfig want = stub;
        want.preset = "custom";
        for (int m = 0; m < 2; ++m) {
            const ndr::ModelConfig& s = stub.models[size_t(m)];
            const ndr::ModelConfig r =
                ndr::tableOneModel(m == 0 ? "absrel-gate" : "rel-gate", s.as<ndr::EncoderConfig>().dModel,
                                   s.as<ndr::EncoderConfig>().heads, s.as<ndr::EncoderConfig>().dFF,
                                   s.as<ndr::EncoderConfig>().steps);
            ndr::ModelConfig& w = want.models[size_t(m)];
            w.name = r.name, w.as<ndr::EncoderConfig>().attention = r.as<ndr::EncoderConfig>().attention,
            w.as<ndr::EncoderConfig>().update = r.as<ndr::EncoderConfig>().update,
            w.as<ndr::EncoderConfig>().positional = r.as<ndr::EncoderConfig>().positional;
            w.as<ndr::EncoderConfig>().geomNorm = r.as<ndr::EncoderConfig>().geomNorm,
            w.as<ndr::EncoderConfig>().gateDropout =
                r.as<ndr::EncoderConfig>().gateDropout; // sizes, dropouts, eval steps stay
        }
        QCOMPARE(dump(panel.config()), dump(want));
        QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join('\n')));
        QCOMPARE(field<QLabel>(panel, "models[1].header")->text(), QString("+rel+gate"));
        QVERIFY(field<QWidget>(panel, "models[1].gateDropout")->isEnabled());
        // Editing a switch shows the row it now matches, or custom.
        field<QComboBox>(panel, "models[1].positional")->setCurrentIndex(3); // abs/rel
        QCOMPARE(field<QComboBox>(panel, "models[1].row")->currentText(), QString("+abs/rel+gate"));
        field<QComboBox>(panel, "models[1].update")->setCurrentIndex(1); // copy gate (LN)
        QCOMPARE(field<QComboBox>(panel, "models[1].row")->currentText(), QString("custom"));
        // Relative positions under geometric attention: the core's message shows under the field.
        field<QComboBox>(panel, "models[1].attention")->setCurrentIndex(1); // geometric
        QVERIFY2(noteOf(panel, "models[1].positional").contains("use softmax attention"),
                 qPrintable(noteOf(panel, "models[1].positional")));
        QVERIFY(!field<QPushButton>(panel, "start")->isEnabled());
        pick(1, "NDR");
        QVERIFY(panel.problems().isEmpty());
        QCOMPARE(panel.config().models[1].as<ndr::EncoderConfig>().gateDropout, 0.1f);
        QCOMPARE(panel.config().models[1].as<ndr::EncoderConfig>().positional, ndr::PositionalKind::None);
    }

    void validationSplitCheckbox() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "paper-forward");
        auto* valid = field<QCheckBox>(panel, "task.validEnabled");
        QVERIFY(valid->isChecked());
        auto* validMin = field<QSpinBox>(panel, "task.validMinDepth");
        auto* validMax = field<QSpinBox>(panel, "task.validMaxDepth");
        const QString dash = QStringLiteral("\u2013");
        valid->setChecked(false);
        QVERIFY(!validMin->isEnabled());
        // The fields of a split that is off show a dash, not a range that does not count.
        QCOMPARE(validMin->text(), dash);
        QCOMPARE(validMax->text(), dash);
        ndr::TaskConfig t = panel.config().task;
        QVERIFY(t.validMinDepth > t.validMaxDepth);
        QVERIFY(panel.problems().isEmpty());
        valid->setChecked(true);
        t = panel.config().task;
        QCOMPARE(t.validMinDepth, 6);
        QCOMPARE(t.validMaxDepth, 8);
        QCOMPARE(validMin->text(), QString("6"));
        QCOMPARE(validMax->text(), QString("8"));
        choosePreset(panel, "stub"); // the stub has no validation split
        QVERIFY(!valid->isChecked());
        QCOMPARE(validMax->text(), dash);
        choosePreset(panel, "thoughtnet"); // nor does ThoughtNet's, whose fields show sizes
        QCOMPARE(validMin->text(), dash);
        QCOMPARE(field<QSpinBox>(panel, "task.trainMinDepth")->text(), QString("1+1"));
        // Locked while a run trains, the fields keep showing their values.
        panel.setState(ExperimentPanel::RunState::Training);
        QCOMPARE(field<QSpinBox>(panel, "task.testMaxDepth")->text(), QString("2×3"));
        QCOMPARE(validMin->text(), dash);
        panel.setState(ExperimentPanel::RunState::Idle);
        valid->setChecked(true);
        QCOMPARE(validMin->text(), validMax->text());
        QVERIFY(validMin->text() != dash);
    }

    void validConfigStarts() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        typeInto(field<QSpinBox>(panel, "train.steps"), "1500");
        typeInto(field<QLineEdit>(panel, "train.seed"), "7");
        QVERIFY(panel.problems().isEmpty());
        QSignalSpy started(&panel, &ExperimentPanel::startRequested);
        QTest::mouseClick(field<QPushButton>(panel, "start"), Qt::LeftButton);
        QCOMPARE(started.count(), 1);
        const auto c = started.at(0).at(0).value<ndr::RunConfig>();
        ndr::RunConfig want = ndr::presetConfig("stub");
        want.preset = "custom";
        want.train.steps = 1500;
        want.train.seed = 7;
        EXPECT_SAME_CONFIG(c, want);
    }

    void stateLocksFieldsAndDrivesButtons() {
        ExperimentPanel panel(nullptr, false);
        auto* start = field<QPushButton>(panel, "start");
        auto* pause = field<QPushButton>(panel, "pauseResume");
        auto* stop = field<QPushButton>(panel, "stop");
        QVERIFY(start->isEnabled() && !pause->isEnabled() && !stop->isEnabled());
        QSignalSpy paused(&panel, &ExperimentPanel::pauseRequested);
        QSignalSpy resumed(&panel, &ExperimentPanel::resumeRequested);
        QSignalSpy stopped(&panel, &ExperimentPanel::stopRequested);
        QSignalSpy started(&panel, &ExperimentPanel::startRequested);

        panel.setState(ExperimentPanel::RunState::Training);
        for (const char* name : {"preset", "task.symbols", "models[0].dModel", "models[1].attention",
                                 "train.learningRate", "task.validEnabled"})
            QVERIFY2(!field<QWidget>(panel, name)->isEnabled(), name);
        QVERIFY(!start->isEnabled() && pause->isEnabled() && stop->isEnabled());
        QCOMPARE(pause->text(), QString("Pause"));
        QTest::mouseClick(start, Qt::LeftButton);
        QTest::mouseClick(pause, Qt::LeftButton);
        QCOMPARE(started.count(), 0);
        QCOMPARE(paused.count(), 1);

        panel.setState(ExperimentPanel::RunState::Paused);
        QCOMPARE(pause->text(), QString("Resume"));
        QVERIFY(!field<QWidget>(panel, "task.symbols")->isEnabled());
        QTest::mouseClick(pause, Qt::LeftButton);
        QCOMPARE(resumed.count(), 1);
        QTest::mouseClick(stop, Qt::LeftButton);
        QCOMPARE(stopped.count(), 1);

        panel.setState(ExperimentPanel::RunState::Idle);
        QVERIFY(field<QWidget>(panel, "task.symbols")->isEnabled());
        QVERIFY(start->isEnabled() && !pause->isEnabled() && !stop->isEnabled());
        // Fields that do not apply stay disabled after the unlock.
        QVERIFY(!field<QWidget>(panel, "models[1].gateDropout")->isEnabled());
    }

    void setConfigRoundTripsACustomConfig() {
        ndr::RunConfig c = ndr::presetConfig("paper-backward");
        c.preset = "custom";
        c.task.symbols = 6;
        c.task.functions = 5;
        c.task.trainMinDepth = 2, c.task.trainMaxDepth = 4;
        c.task.validMinDepth = 5, c.task.validMaxDepth = 5;
        c.task.testMinDepth = 6, c.task.testMaxDepth = 9;
        c.task.order = ndr::Order::Backward;
        c.task.seed = 12345678901234567ULL; // beyond a spin box
        c.task.evalExamplesPerDepth = 250;
        ndr::ModelConfig a = ndr::vanillaModel(60, 3, 120, 5);
        a.name = "softmax unshared";
        a.as<ndr::EncoderConfig>().attention = ndr::AttentionKind::Softmax;
        a.as<ndr::EncoderConfig>().update = ndr::UpdateKind::Residual;
        a.as<ndr::EncoderConfig>().positional = ndr::PositionalKind::Sinusoidal;
        a.as<ndr::EncoderConfig>().sharedWeights = false;
        a.as<ndr::EncoderConfig>().evalSteps = 5;
        a.as<ndr::EncoderConfig>().dropout = 0.3f;
        a.as<ndr::EncoderConfig>().attentionDropout = 0.05f;
        a.as<ndr::EncoderConfig>().gateDropout = 0.2f; // kept though disabled
        a.as<ndr::EncoderConfig>().gateBiasInit = -1.5f;
        a.learningRate = 3e-5;
        ndr::ModelConfig b = ndr::ndrModel(32, 2, 64, 12);
        b.as<ndr::EncoderConfig>().geomNorm = ndr::GeomNorm::L1;
        b.as<ndr::EncoderConfig>().evalSteps = 20;
        b.as<ndr::EncoderConfig>().gateDropout = 0.15f;
        b.as<ndr::EncoderConfig>().gateBiasInit = -2.75f;
        b.as<ndr::EncoderConfig>().readout = ndr::ReadoutColumn::First;
        c.models = {b, a};
        c.train.batchSize = 48;
        c.train.learningRate = 2.5e-4;
        c.train.weightDecay = 0.0025;
        c.train.gradClip = 0; // off
        c.train.steps = 1234;
        c.train.evalInterval = 111;
        c.train.seed = 99;
        c.train.threads = 2;
        c.train.lrDecaySteps = 700;
        c.train.lrDecayFactor = 0.3;
        c.train.stopPatience = 4; // no field: kept as the config set it
        c.train.stopIid = 0.95;
        QCOMPARE(ndr::problemTexts(ndr::validate(c)), std::vector<std::string>{});

        ExperimentPanel panel(nullptr, false);
        QSignalSpy changed(&panel, &ExperimentPanel::configChanged);
        panel.setConfig(c);
        QCOMPARE(changed.count(), 1);
        EXPECT_SAME_CONFIG(panel.config(), c);
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("custom"));
        QVERIFY(panel.problems().isEmpty());
        QCOMPARE(field<QLabel>(panel, "models[1].header")->text(), QString("softmax unshared"));

        // A preset passed to setConfig shows as that preset.
        panel.setConfig(ndr::presetConfig("paper-forward"));
        QCOMPARE(field<QComboBox>(panel, "preset")->currentText(), QString("paper-forward"));
        // Three models get three columns.
        c.models.push_back(ndr::ndrModel(16, 2, 32, 4));
        c.models.back().name = "small";
        panel.setConfig(c);
        EXPECT_SAME_CONFIG(panel.config(), c);
        QVERIFY(panel.findChild<QProgressBar*>("progress[2]"));
    }

    void wheelScrollsTheFormNotTheField() {
        // Scrolling the panel over a field must not change it (or switch the preset): a field without
        // the focus leaves the wheel event unaccepted, and Qt then hands a real (spontaneous) wheel event
        // to its parents, up to the scroll area. A field with the focus takes the wheel as before.
        ExperimentPanel panel(nullptr, false);
        panel.resize(440, 500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        choosePreset(panel, "paper-forward");
        const ndr::RunConfig before = panel.config();
        auto wheelDown = [](QWidget* w) {
            const QPointF at(w->width() / 2.0, w->height() / 2.0);
            QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QApplication::sendEvent(w, &e);
            return e.isAccepted();
        };
        panel.setFocus();
        for (const char* name :
             {"preset", "models[0].dModel", "train.learningRate", "task.order", "train.lrDecaySteps"}) {
            QWidget* editor = panel.findChild<QWidget*>(name);
            QVERIFY2(editor, name);
            QVERIFY(!editor->hasFocus());
            QVERIFY2(!wheelDown(editor), name);
            EXPECT_SAME_CONFIG(panel.config(), before);
        }
        auto* dModel = field<QSpinBox>(panel, "models[0].dModel");
        dModel->setFocus();
        QTRY_VERIFY(dModel->hasFocus());
        QVERIFY(wheelDown(dModel));
        QVERIFY(panel.config().models[0].as<ndr::EncoderConfig>().dModel !=
                before.models[0].as<ndr::EncoderConfig>().dModel);
    }

    void realFieldsShowShortText() {
        ndrui::RealSpinBox box;
        box.setRange(0, 1);
        const std::pair<double, const char*> cases[] = {{5e-4, "0.0005"}, {1e-3, "0.001"}, {1e-5, "1e-5"},
                                                        {3e-5, "3e-5"},   {0.25, "0.25"},  {1, "1"}};
        for (const auto& [value, text] : cases) {
            box.setValue(value);
            QCOMPARE(box.text(), QString(text));
            QCOMPARE(box.value(), value);
        }
        box.setFloat(0.1f);
        QCOMPARE(box.text(), QString("0.1"));
        QCOMPARE(float(box.value()), 0.1f);
        // Typing scientific notation works too.
        typeInto(&box, "2.5e-4");
        QCOMPARE(box.value(), 2.5e-4);
    }

    void progressText() {
        ExperimentPanel panel(nullptr, false);
        choosePreset(panel, "stub");
        auto* bar = field<QProgressBar>(panel, "progress[0]");
        QCOMPARE(bar->text(), QString("NDR  0/6000"));
        using ndr::ModelState;
        const ndr::ModelStatus training{ModelState::Training, {}};
        panel.setModelProgress(0, 1200, 6000, 105.2, 45.6, training);
        QCOMPARE(bar->text(), QString("NDR  1200/6000  105 steps/s  ETA 0:46"));
        QCOMPARE(bar->value(), 1200);
        panel.setModelProgress(0, 1200, 6000, 105.2, 45.6, training, 0.4);
        QCOMPARE(bar->text(), QString("NDR  1200/6000  evaluating 40%"));
        panel.setModelProgress(1, 6000, 6000, 0, 0, {ModelState::Finished, {}});
        QCOMPARE(field<QProgressBar>(panel, "progress[1]")->text(),
                 QString("Transformer  6000/6000  finished"));
        panel.setModelProgress(1, 300, 6000, 0, 0, {ModelState::Diverged, "loss is NaN at step 300 (100%)"});
        QCOMPARE(field<QProgressBar>(panel, "progress[1]")->text(),
                 QString("Transformer  300/6000  diverged: loss is NaN at step 300 (100%)"));
        panel.setModelProgress(0, 10, 100000, 2.5, 3725, training);
        QCOMPARE(bar->text(), QString("NDR  10/100000  2.5 steps/s  ETA 1:02:05"));
    }

    void settingsPersist() {
        QSettings("NDR Studio", "ndr-studio").remove("experiment/config");
        QVERIFY2(QSettings("NDR Studio", "ndr-studio").fileName().startsWith(configHome_.path()),
                 qPrintable(QSettings("NDR Studio", "ndr-studio").fileName()));
        {
            ExperimentPanel first(nullptr, true);
            EXPECT_SAME_CONFIG(first.config(), ndr::presetConfig("stub")); // nothing remembered yet
            choosePreset(first, "paper-backward");
            typeInto(field<QSpinBox>(first, "train.batchSize"), "96");
            typeInto(field<QSpinBox>(first, "models[0].heads"), "5"); // invalid: not remembered
        }
        ndr::RunConfig want = ndr::presetConfig("paper-backward");
        want.preset = "custom";
        want.train.batchSize = 96;
        {
            ExperimentPanel second(nullptr, true);
            EXPECT_SAME_CONFIG(second.config(), want);
        }
        // Tests and a damaged entry: the default.
        EXPECT_SAME_CONFIG(ExperimentPanel(nullptr, false).config(), ndr::presetConfig("stub"));
        QSettings("NDR Studio", "ndr-studio").setValue("experiment/config", "{not json");
        EXPECT_SAME_CONFIG(ExperimentPanel(nullptr, true).config(), ndr::presetConfig("stub"));
        QSettings("NDR Studio", "ndr-studio").remove("experiment/config");
    }

    // With NDR_SHOT_DIR set, saves pictures of the panel (valid, and with problems) for a person to look at.
    void screenshots() {
        const QString dir = qEnvironmentVariable("NDR_SHOT_DIR");
        if (dir.isEmpty())
            QSKIP("set NDR_SHOT_DIR to write screenshots");
        QDir().mkpath(dir);
        ExperimentPanel panel(nullptr, false);
        panel.resize(440, 900);
        panel.show();
        choosePreset(panel, "paper-forward");
        panel.setModelProgress(0, 1200, 8000, 105, 84, {ndr::ModelState::Training, {}});
        panel.setModelProgress(1, 8000, 8000, 0, 0, {ndr::ModelState::Finished, {}});
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCoreApplication::processEvents(); // let the layouts settle before grabbing
        QVERIFY(panel.grab().save(dir + "/panel-valid.png"));
        typeInto(field<QSpinBox>(panel, "task.trainMinDepth"), "7");
        typeInto(field<QSpinBox>(panel, "models[0].heads"), "5");
        typeInto(field<QDoubleSpinBox>(panel, "train.learningRate"), "0");
        QCoreApplication::processEvents();
        QVERIFY(panel.grab().save(dir + "/panel-problems.png"));
        panel.resize(440, 1500);
        QCoreApplication::processEvents();
        QVERIFY(panel.grab().save(dir + "/panel-problems-tall.png"));
        panel.resize(380, 700); // the narrowest dock
        QCoreApplication::processEvents();
        QVERIFY(panel.grab().save(dir + "/panel-problems-380.png"));
        panel.resize(440, 1500);
        panel.setState(ExperimentPanel::RunState::Paused);
        QCoreApplication::processEvents();
        QVERIFY(panel.grab().save(dir + "/panel-paused-tall.png"));
    }
};

QTEST_MAIN(TestExperimentPanel)
#include "test_experiment_panel.moc"
