// Animated GIFs with giflib: frames quantised to a 256-colour palette each, looping forever, written
// atomically. And the reading back that tests and exports use to check a file.
#pragma once

#include <QImage>
#include <QString>
#include <stdexcept>
#include <vector>

namespace ndrui {

class GifError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Encodes `frames` (each scaled to the first frame's size if it differs) as an animated GIF that loops
// forever, showing each frame `delayMs` and the last one `lastDelayMs` (negative: `delayMs`).
// Throws GifError.
QByteArray encodeGif(const std::vector<QImage>& frames, int delayMs, int lastDelayMs = -1);
// encodeGif, then written atomically to `path` (temporary file, flush, rename). Throws GifError.
void writeGif(const QString& path, const std::vector<QImage>& frames, int delayMs, int lastDelayMs = -1);

struct GifInfo {
    int width = 0, height = 0, frames = 0;
    bool loops = false; // has the NETSCAPE2.0 looping block
};
// Decodes a GIF file with giflib. Throws GifError when it does not decode.
GifInfo readGifInfo(const QString& path);

} // namespace ndrui
