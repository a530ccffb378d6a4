// The inspector on tiny arithmetic, ListOps and multi-digit runs, driven through its widgets: a typed
// expression shows each subexpression's value (or each position's answer digit) under its tokens and
// both models' answers over ten digits (or nine answer digits), a bad token is named, a random example
// of each depth parses back with that depth, and ThoughtNet's column shows its operator choices.
#include "testutil.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/inspector.h"
#include "ui/inspector/model_step_view.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/training/training_session.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>

using namespace ndrui;

namespace {

ndr::RunConfig tinyRun(ndr::TaskKind kind) {
    const bool digits = kind == ndr::TaskKind::MultiDigit;
    ndr::RunConfig c = ndr::presetConfig(kind == ndr::TaskKind::Arith ? "arith"
                                         : digits                     ? "thoughtnet"
                                                                      : "listops");
    c.task.evalExamplesPerDepth = 8;
    c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
    if (digits)
        c.models[1] = ndr::thoughtNetModel(16, 2, 16, 2, 4);
    c.train.batchSize = 8;
    c.train.steps = 20;
    c.train.evalInterval = 20;
    c.train.seed = 4;
    return c;
}

QString textAt(const QTableWidget* table, int row, int column) {
    const QTableWidgetItem* i = table ? table->item(row, column) : nullptr;
    return i ? i->text() : QString();
}

} // namespace

class TestInspectorTasks : public QObject {
    Q_OBJECT

    // Trains the tiny run of `kind`, types `text` into a fresh inspector and checks the tokens table:
    // the token names in row 0 and the true values in row 1 ("" where none).
    void check(ndr::TaskKind kind, const QString& text, const QStringList& tokens, const QStringList& values,
               const QString& badText, const QString& badMessage, int answerRows = 10) {
        TrainingSession session;
        QString error;
        QVERIFY2(session.start(tinyRun(kind), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        Inspector inspector(session);
        inspector.resize(1300, 850);
        inspector.show();
        auto* field = inspector.findChild<QLineEdit*>("inspector.expression");
        QVERIFY(field);
        field->setText(text);
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete(), ndrtest::waitMs(10000));
        QVERIFY2(inspector.input()->problem().isEmpty(), qPrintable(inspector.input()->problem()));
        const auto* table = inspector.findChild<QTableWidget*>("inspector.tokens");
        QVERIFY(table);
        QCOMPARE(table->columnCount(), int(tokens.size()));
        for (int p = 0; p < tokens.size(); ++p) {
            QCOMPARE(textAt(table, 0, p), tokens[p]);
            QCOMPARE(textAt(table, 1, p), values[p]);
        }
        // Every model answers with a probability for each of the ten digits, or for each answer digit.
        const auto* distribution = inspector.findChild<QTableWidget*>("inspector.distribution");
        QVERIFY(distribution);
        QCOMPARE(distribution->rowCount(), answerRows);
        if (kind == ndr::TaskKind::MultiDigit) {
            QVERIFY(!textAt(distribution, 0, 1).isEmpty());
            // ThoughtNet's column: the zero operator and its two learned ones over the nine tokens.
            auto* slider = inspector.findChild<QSlider*>();
            QVERIFY(slider);
            slider->setValue(2);
            const ModelStepView* view = inspector.modelView(1);
            QVERIFY(view && view->operatorMap()->isVisible());
            QVERIFY(!inspector.modelView(0)->operatorMap()->isVisible());
            QCOMPARE(ndrui::selectionAt(*view->trace(), 2).size(), size_t(3 * 9));
        }

        // The steps-needed table names the task's depths: problem sizes for multi-digit arithmetic.
        const auto* needed = inspector.findChild<QTableWidget*>("inspector.stepsNeeded");
        const auto* count = inspector.findChild<QSpinBox*>("inspector.stepsNeeded.count");
        QVERIFY(needed && count);
        const bool sizes = kind == ndr::TaskKind::MultiDigit;
        QCOMPARE(needed->horizontalHeaderItem(0)->text(), sizes ? QString("size") : QString("depth"));
        QCOMPARE(count->suffix(), sizes ? QString(" per size") : QString(" per depth"));
        QCOMPARE(textAt(needed, 1, 0), sizes ? QString("1+1") : QString("2"));

        field->setText(badText);
        QVERIFY2(inspector.input()->problem().contains(badMessage), qPrintable(inspector.input()->problem()));
        QVERIFY(!inspector.input()->example());

        // A random example of each depth reads back with that depth.
        auto* depth = inspector.findChild<QComboBox*>("inspector.depth");
        auto* random = inspector.findChild<QPushButton*>("inspector.random");
        QVERIFY(depth && random);
        for (int i = 0; i < depth->count(); ++i) {
            depth->setCurrentIndex(i);
            QTest::mouseClick(random, Qt::LeftButton);
            const ndr::ParseResult r = session.task()->parseQuestion(field->text().toStdString());
            QVERIFY2(r.example, qPrintable(field->text()));
            QCOMPARE(r.example->depth(), depth->currentData().toInt());
        }
    }

private slots:
    void arithmetic() {
        check(ndr::TaskKind::Arith, "((3*4)+7)", {"[B]", "(", "(", "3", "*", "4", ")", "+", "7", ")", "[E]"},
              {"", "", "", "3", "", "4", "2", "", "7", "9", "9"}, "(3x4)", "unknown token 'x' at position 3");
    }

    void listOps() {
        check(ndr::TaskKind::ListOps, "[MAX 2 [MIN 4 7] 0]",
              {"[B]", "[MAX", "2", "[MIN", "4", "7", "]", "0", "]", "[E]"},
              {"", "", "2", "", "4", "7", "4", "0", "4", "4"}, "[MAX 2 ]", "an operation takes at least 2");
    }

    void multiDigit() {
        check(ndr::TaskKind::MultiDigit, "23+123", {"0", "0", "2", "3", "+", "0", "1", "2", "3"},
              {"0", "0", "0", "0", "0", "0", "1", "4", "6"}, "12a+3", "'a' is not a digit", 9);
    }
};

QTEST_MAIN(TestInspectorTasks)
#include "test_inspector_tasks.moc"
