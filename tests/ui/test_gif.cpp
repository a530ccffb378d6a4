// Animated GIFs written with giflib decode again, with giflib and with Qt: frame count, size, loop; and
// which evaluations an export draws as the training frames.
#include "ui/export/exporter.h"
#include "ui/export/gif_writer.h"

#include <QImageReader>
#include <QPainter>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <functional>

using namespace ndrui;

class TestGif : public QObject {
    Q_OBJECT

private slots:
    // A long history is exported as kMaxTrainingFrames evenly spaced evaluations, first and last
    // included; a short one frame per evaluation.
    void trainingFramesAreBounded() {
        QVERIFY(ndrui::trainingFrameEvaluations(0).empty());
        QCOMPARE(ndrui::trainingFrameEvaluations(4), (std::vector<int>{0, 1, 2, 3}));
        for (int n : {ndrui::kMaxTrainingFrames, ndrui::kMaxTrainingFrames + 1, 1000}) {
            const std::vector<int> f = ndrui::trainingFrameEvaluations(n);
            QCOMPARE(int(f.size()), std::min(n, ndrui::kMaxTrainingFrames));
            QCOMPARE(f.front(), 0);
            QCOMPARE(f.back(), n - 1);
            QVERIFY(std::adjacent_find(f.begin(), f.end(), std::greater_equal<int>()) == f.end());
        }
    }

    void framesDecodeWithGiflibAndQt() {
        std::vector<QImage> frames;
        for (int i = 0; i < 5; ++i) {
            QImage img(120, 80, QImage::Format_RGB32);
            img.fill(QColor::fromHsv(i * 60, 200, 220));
            QPainter p(&img);
            p.fillRect(10 + 20 * i, 10, 20, 60, Qt::black);
            frames.push_back(img);
        }
        frames.push_back(frames[0].scaled(60, 40)); // a smaller frame is scaled to the first one's size
        QTemporaryDir dir;
        const QString path = dir.filePath("anim.gif");
        writeGif(path, frames, 200, 1000);

        const GifInfo info = readGifInfo(path);
        QCOMPARE(info.frames, 6);
        QCOMPARE(info.width, 120);
        QCOMPARE(info.height, 80);
        QVERIFY(info.loops);

        QImageReader reader(path);
        QVERIFY2(reader.canRead(), qPrintable(reader.errorString()));
        QCOMPARE(reader.imageCount(), 6);
        const QImage first = reader.read();
        QCOMPARE(first.size(), QSize(120, 80));
        QCOMPARE(reader.nextImageDelay(), 200);
        // Colours survive quantisation closely (a flat fill and a black bar).
        const QColor want = QColor::fromHsv(0, 200, 220);
        const QColor got = first.pixelColor(100, 5);
        QVERIFY2(std::abs(got.red() - want.red()) < 12 && std::abs(got.green() - want.green()) < 12 &&
                     std::abs(got.blue() - want.blue()) < 12,
                 qPrintable(got.name() + " vs " + want.name()));
        QCOMPARE(first.pixelColor(15, 40), QColor(Qt::black));
    }

    void refusesWhatIsNotAGif() {
        QTemporaryDir dir;
        QFile f(dir.filePath("bad.gif"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GIF89a but not really");
        f.close();
        QVERIFY_THROWS_EXCEPTION(GifError, readGifInfo(f.fileName()));
        QVERIFY_THROWS_EXCEPTION(GifError, encodeGif({}, 100));
        // A failed write leaves an existing file alone.
        QVERIFY_THROWS_EXCEPTION(
            GifError, writeGif(dir.filePath("no/such/dir/x.gif"), {QImage(4, 4, QImage::Format_RGB32)}, 100));
    }
};

QTEST_MAIN(TestGif)
#include "test_gif.moc"
