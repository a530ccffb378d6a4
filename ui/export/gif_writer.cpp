// giflib encoding and decoding (see gifwriter.h).
#include "ui/export/gif_writer.h"

#include "core/io/files.h"

#include <gif_lib.h>

#include <cstring>
#include <memory>

namespace ndrui {

namespace {

int appendBytes(GifFileType* gif, const GifByteType* data, int n) {
    static_cast<QByteArray*>(gif->UserData)->append(reinterpret_cast<const char*>(data), n);
    return n;
}

QString gifMessage(int code) {
    const char* s = GifErrorString(code);
    return QString::fromUtf8(s ? s : "unknown giflib error");
}

struct GifCloser {
    void operator()(GifFileType* g) const {
        int err = 0;
        if (g)
            EGifCloseFile(g, &err);
    }
};

void check(int result, GifFileType* gif, const char* what) {
    if (result != GIF_OK)
        throw GifError(
            QStringLiteral("GIF encoding failed (%1): %2").arg(what, gifMessage(gif->Error)).toStdString());
}

} // namespace

QByteArray encodeGif(const std::vector<QImage>& frames, int delayMs, int lastDelayMs) {
    if (frames.empty())
        throw GifError("no frames to encode");
    if (lastDelayMs < 0)
        lastDelayMs = delayMs;
    const QSize size = frames.front().size();
    if (size.isEmpty() || size.width() > 65535 || size.height() > 65535)
        throw GifError("GIF frames must be between 1x1 and 65535x65535 pixels");
    QByteArray out;
    int err = 0;
    std::unique_ptr<GifFileType, GifCloser> gif(EGifOpen(&out, appendBytes, &err));
    if (!gif)
        throw GifError(("cannot start a GIF: " + gifMessage(err)).toStdString());
    EGifSetGifVersion(gif.get(), true);
    check(EGifPutScreenDesc(gif.get(), size.width(), size.height(), 8, 0, nullptr), gif.get(), "screen");
    // NETSCAPE2.0 application block: loop forever.
    const unsigned char app[] = "NETSCAPE2.0";
    const unsigned char loop[] = {1, 0, 0};
    check(EGifPutExtensionLeader(gif.get(), APPLICATION_EXT_FUNC_CODE), gif.get(), "loop block");
    check(EGifPutExtensionBlock(gif.get(), 11, app), gif.get(), "loop block");
    check(EGifPutExtensionBlock(gif.get(), 3, loop), gif.get(), "loop block");
    check(EGifPutExtensionTrailer(gif.get()), gif.get(), "loop block");

    const int w = size.width(), h = size.height();
    std::vector<GifByteType> r(size_t(w) * h), g(r.size()), b(r.size()), indices(r.size());
    for (size_t f = 0; f < frames.size(); ++f) {
        QImage img = frames[f].size() == size
                         ? frames[f]
                         : frames[f].scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        img = img.convertToFormat(QImage::Format_RGB888);
        for (int y = 0; y < h; ++y) {
            const uchar* line = img.constScanLine(y);
            for (int x = 0; x < w; ++x) {
                const size_t i = size_t(y) * w + x;
                r[i] = line[3 * x];
                g[i] = line[3 * x + 1];
                b[i] = line[3 * x + 2];
            }
        }
        int colors = 256;
        std::unique_ptr<ColorMapObject, void (*)(ColorMapObject*)> map(GifMakeMapObject(256, nullptr),
                                                                       GifFreeMapObject);
        if (!map)
            throw GifError("out of memory for a GIF colour map");
        if (GifQuantizeBuffer(unsigned(w), unsigned(h), &colors, r.data(), g.data(), b.data(), indices.data(),
                              map->Colors) != GIF_OK)
            throw GifError("GIF colour quantisation failed");
        GraphicsControlBlock gcb{};
        gcb.DisposalMode = DISPOSE_DO_NOT;
        gcb.DelayTime = (f + 1 == frames.size() ? lastDelayMs : delayMs) / 10; // hundredths of a second
        gcb.TransparentColor = NO_TRANSPARENT_COLOR;
        GifByteType ext[4];
        const size_t n = EGifGCBToExtension(&gcb, ext);
        check(EGifPutExtension(gif.get(), GRAPHICS_EXT_FUNC_CODE, int(n), ext), gif.get(), "frame timing");
        check(EGifPutImageDesc(gif.get(), 0, 0, w, h, false, map.get()), gif.get(), "frame");
        for (int y = 0; y < h; ++y)
            check(EGifPutLine(gif.get(), indices.data() + size_t(y) * w, w), gif.get(), "frame pixels");
    }
    GifFileType* raw = gif.release();
    if (EGifCloseFile(raw, &err) != GIF_OK)
        throw GifError(("cannot finish the GIF: " + gifMessage(err)).toStdString());
    return out;
}

void writeGif(const QString& path, const std::vector<QImage>& frames, int delayMs, int lastDelayMs) {
    const QByteArray bytes = encodeGif(frames, delayMs, lastDelayMs);
    try {
        ndr::writeFileAtomic(path.toStdString(), std::string(bytes.constData(), size_t(bytes.size())));
    } catch (const std::exception& e) {
        throw GifError(e.what());
    }
}

GifInfo readGifInfo(const QString& path) {
    int err = 0;
    GifFileType* gif = DGifOpenFileName(path.toLocal8Bit().constData(), &err);
    if (!gif)
        throw GifError((path + ": not a readable GIF: " + gifMessage(err)).toStdString());
    GifInfo info;
    const int slurp = DGifSlurp(gif);
    const QString why = slurp == GIF_OK ? QString() : gifMessage(gif->Error);
    if (slurp == GIF_OK) {
        info.width = gif->SWidth;
        info.height = gif->SHeight;
        info.frames = gif->ImageCount;
        for (int i = 0; i < gif->ImageCount && !info.loops; ++i)
            for (int k = 0; k < gif->SavedImages[i].ExtensionBlockCount; ++k) {
                const ExtensionBlock& e = gif->SavedImages[i].ExtensionBlocks[k];
                if (e.Function == APPLICATION_EXT_FUNC_CODE && e.ByteCount == 11 &&
                    std::memcmp(e.Bytes, "NETSCAPE2.0", 11) == 0)
                    info.loops = true;
            }
    }
    DGifCloseFile(gif, &err);
    if (slurp != GIF_OK)
        throw GifError((path + ": the GIF does not decode: " + why).toStdString());
    return info;
}

} // namespace ndrui
