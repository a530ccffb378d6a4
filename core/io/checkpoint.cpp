// The binary checkpoint of a model: a JSON header (configuration, tensor layout, buffer sizes) and the
// raw float buffers, checksummed. The loader bounds every size it reads before allocating from it.
#include "core/io/files.h"

#include "core/io/checkpoint_problems.h"

#include "core/io/file_io.h"
#include "core/io/json_fields.h"
#include "core/io/migrations.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sys/stat.h>

namespace ndr {

using nlohmann::json;
namespace fs = std::filesystem;
using checkpointio::checkpointBufferProblems;
using checkpointio::joinProblems;
using fileio::asFileError;
using fileio::Fd;
using fileio::humanSize;
using fileio::openForReading;
using fileio::quote;
using fileio::readUpTo;

// Buffers are copied to and from disk as they sit in memory.
static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian; add byte swapping");

namespace {

constexpr char kMagic[8] = {'N', 'D', 'R', 'S', 'C', 'K', 'P', 'T'};
constexpr size_t kPreambleBytes = 16; // magic, u32 version, u32 header length
constexpr size_t kChecksumBytes = 8;
constexpr uint32_t kMaxCheckpointHeaderBytes = 16u << 20;
constexpr int kMaxTensorSide = 1 << 20;
constexpr int64_t kMaxParams = int64_t(1) << 28;

// 64-bit FNV-1a, continued from `hash` so a file can be checksummed piece by piece.
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
uint64_t fnv1a(uint64_t hash, const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

template <typename T> void appendRaw(std::string& out, const T& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void appendFloats(std::string& out, const std::vector<float>& xs) {
    out.append(reinterpret_cast<const char*>(xs.data()), xs.size() * sizeof(float));
}

// --- Checkpoint header ---

// Small strict readers for the header; the reason says which header field is wrong.
const json& headerField(const json& h, const char* key) {
    const auto it = h.find(key);
    if (it == h.end())
        throw FileError(std::string("the header has no '") + key + "' field");
    return *it;
}

int64_t headerInt(const json& h, const char* key, int64_t lo, int64_t hi, const std::string& where = "") {
    const json& v = headerField(h, key);
    const std::string name = where.empty() ? key : where + "." + key;
    if (!v.is_number_integer())
        throw FileError("header field " + name + ": expected an integer, got " + v.dump());
    // Non-negative numbers are stored unsigned and may exceed int64.
    const bool tooBig = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX);
    const int64_t x = tooBig ? INT64_MAX : v.get<int64_t>();
    if (tooBig || x < lo || x > hi)
        throw FileError("header field " + name + ": " + v.dump() + " is outside " + std::to_string(lo) +
                        ".." + std::to_string(hi));
    return x;
}

std::string headerString(const json& h, const char* key, const std::string& where = "") {
    const json& v = headerField(h, key);
    if (!v.is_string())
        throw FileError("header field " + (where.empty() ? key : where + "." + key) + ": expected a string");
    return v.get<std::string>();
}

double headerSeconds(const json& h, const char* key, const std::string& where) {
    const json& v = headerField(h, key);
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e15)
        throw FileError("header field " + where + "." + key + ": expected a number of seconds, got " +
                        v.dump());
    return v.get<double>();
}

// The training state: null (weights alone) or the generators, Adam's step and the seconds.
std::optional<TrainingState> headerTraining(const json& h) {
    const json& t = headerField(h, "training");
    if (t.is_null())
        return std::nullopt;
    if (!t.is_object())
        throw FileError("header field training: expected an object or null");
    TrainingState s;
    s.batchRng = headerString(t, "batchRng", "training");
    s.dropoutRng = headerString(t, "dropoutRng", "training");
    s.adamStep = headerInt(t, "adamStep", 0, INT64_MAX, "training");
    s.seconds = headerSeconds(t, "seconds", "training");
    return s;
}

json trainingJson(const std::optional<TrainingState>& s) {
    if (!s)
        return nullptr;
    return {{"batchRng", s->batchRng},
            {"dropoutRng", s->dropoutRng},
            {"adamStep", s->adamStep},
            {"seconds", s->seconds}};
}

struct Counts {
    int64_t params = 0, bestParams = 0, adamM = 0, adamV = 0;
    int64_t total() const { return params + bestParams + adamM + adamV; }
};

// Fills everything but the buffers and returns their lengths, all checked against each other.
Counts parseHeader(const std::string& text, int64_t fileVersion, CheckpointData& d) {
    try {
        jsonio::checkJsonSize(text, SIZE_MAX); // the header's length bounds the number of values
    } catch (const std::runtime_error& e) {
        throw FileError(std::string("the header: ") + e.what());
    }
    json h;
    try {
        h = json::parse(text);
    } catch (const json::parse_error& e) {
        throw FileError("the header is not valid JSON (byte " + std::to_string(e.byte) + ")");
    } catch (const json::exception& e) {
        throw FileError("the header is not valid JSON: " + jsonio::jsonMessage(e));
    }
    if (!h.is_object())
        throw FileError("the header is not a JSON object");
    const std::string format = headerString(h, "format");
    if (format != CheckpointData::kFormat)
        throw FileError("not an NDR Studio checkpoint (header format '" + format + "')");
    const int64_t version = headerInt(h, "version", 0, INT32_MAX);
    if (version != fileVersion)
        throw FileError("header version " + std::to_string(version) + " does not match the file version " +
                        std::to_string(fileVersion));
    migrations::upgradeCheckpointHeader(h, version);
    try {
        from_json(headerField(h, "model"), d.model);
    } catch (const FileError&) {
        throw;
    } catch (const std::exception& e) {
        throw FileError(std::string("header field model: ") + e.what());
    }
    d.vocabSize = int(headerInt(h, "vocabSize", 1, kMaxTensorSide));
    d.symbols = int(headerInt(h, "symbols", 1, kMaxTensorSide));
    d.step = headerInt(h, "step", 0, INT64_MAX);
    d.training = headerTraining(h);

    const json& layout = headerField(h, "layout");
    if (!layout.is_array())
        throw FileError("header field layout: expected an array");
    int64_t total = 0; // at most (16 MiB of header) * 2^40: no overflow
    d.layout.clear();
    for (size_t i = 0; i < layout.size(); ++i) {
        const std::string where = "layout[" + std::to_string(i) + "]";
        if (!layout[i].is_object())
            throw FileError("header field " + where + ": expected an object");
        TensorInfo t;
        t.name = headerString(layout[i], "name", where);
        t.rows = int(headerInt(layout[i], "rows", 1, kMaxTensorSide, where));
        t.cols = int(headerInt(layout[i], "cols", 1, kMaxTensorSide, where));
        total += int64_t(t.rows) * t.cols;
        d.layout.push_back(std::move(t));
    }

    const json& counts = headerField(h, "counts");
    if (!counts.is_object())
        throw FileError("header field counts: expected an object");
    Counts c;
    c.params = headerInt(counts, "params", 0, kMaxParams, "counts");
    c.bestParams = headerInt(counts, "bestParams", 0, kMaxParams, "counts");
    c.adamM = headerInt(counts, "adamM", 0, kMaxParams, "counts");
    c.adamV = headerInt(counts, "adamV", 0, kMaxParams, "counts");
    if (c.params != total)
        throw FileError("the header counts " + std::to_string(c.params) +
                        " parameters but its layout adds up to " + std::to_string(total));
    const std::pair<const char*, int64_t> optional[] = {
        {"bestParams", c.bestParams}, {"adamM", c.adamM}, {"adamV", c.adamV}};
    for (const auto& [name, n] : optional)
        if (n != 0 && n != c.params)
            throw FileError("header field counts." + std::string(name) + ": " + std::to_string(n) +
                            " values, expected 0 or " + std::to_string(c.params));
    return c;
}

// Where a checkpoint's bytes come from: a file read piece by piece, so its buffers go straight into
// their vectors and are never in memory twice, or bytes a caller already holds.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual uint64_t size() const = 0;
    // Up to n bytes into `out`; fewer only at the end. FileError on a read error.
    virtual size_t read(char* out, size_t n) = 0;
};

class FileSource final : public ByteSource {
public:
    FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
    uint64_t size() const override { return size_; }
    size_t read(char* out, size_t n) override {
        const ssize_t r = readUpTo(fd_, out, n);
        if (r < 0)
            throw FileError(std::strerror(errno));
        return size_t(r);
    }

private:
    int fd_;
    uint64_t size_;
};

class MemorySource final : public ByteSource {
public:
    explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
    uint64_t size() const override { return bytes_.size(); }
    size_t read(char* out, size_t n) override {
        n = std::min(n, bytes_.size() - pos_);
        if (n > 0) // an empty vector's data() may be null, which memcpy must not see
            std::memcpy(out, bytes_.data() + pos_, n);
        pos_ += n;
        return n;
    }

private:
    std::string_view bytes_;
    size_t pos_ = 0;
};

// Reads exactly n bytes; the size was checked first, so fewer means the file changed meanwhile.
void readExactly(ByteSource& in, char* out, size_t n) {
    if (in.read(out, n) != n)
        throw FileError("the file changed while it was being read");
}

// Reads n floats into `out`, adding their bytes to the checksum.
void readFloats(ByteSource& in, int64_t n, std::vector<float>& out, uint64_t& hash) {
    out.resize(size_t(n));
    const size_t bytes = size_t(n) * sizeof(float);
    readExactly(in, reinterpret_cast<char*>(out.data()), bytes);
    hash = fnv1a(hash, out.data(), bytes);
}

// The checkpoint format's checks in the order that keeps them cheap: magic and version, the header's
// length against the limit and the actual size, the header's fields against each other, the total
// against the actual size (before any buffer is allocated), and last the checksum.
CheckpointData readCheckpoint(ByteSource& in) {
    const uint64_t fileSize = in.size();
    if (fileSize == 0)
        throw FileError("the file is empty");

    char pre[kPreambleBytes] = {};
    const size_t got = in.read(pre, kPreambleBytes);
    if (std::memcmp(pre, kMagic, std::min(got, sizeof kMagic)) != 0)
        throw FileError("not an NDR Studio checkpoint (it does not start with NDRSCKPT)");
    const auto truncated = [&](uint64_t expected, bool atLeast) {
        return FileError("truncated: expected " + std::string(atLeast ? "at least " : "") +
                         std::to_string(expected) + " bytes, found " + std::to_string(fileSize));
    };
    if (got < kPreambleBytes)
        throw truncated(kPreambleBytes + kChecksumBytes, true);
    uint32_t version = 0, headerBytes = 0;
    std::memcpy(&version, pre + 8, 4);
    std::memcpy(&headerBytes, pre + 12, 4);
    if (version > uint32_t(CheckpointData::kVersion))
        throw FileError("checkpoint version " + std::to_string(version) +
                        " is newer than this NDR Studio understands (" +
                        std::to_string(CheckpointData::kVersion) + "): update NDR Studio");
    if (version < 1)
        throw FileError("checkpoint version 0 is not valid; the file is damaged");
    if (headerBytes > kMaxCheckpointHeaderBytes)
        throw FileError("the header claims " + std::to_string(headerBytes) +
                        " bytes, more than the limit of " + humanSize(kMaxCheckpointHeaderBytes) +
                        "; the file is damaged");
    if (fileSize < kPreambleBytes + headerBytes + kChecksumBytes)
        throw truncated(kPreambleBytes + headerBytes + kChecksumBytes, true);

    std::string header(headerBytes, '\0');
    readExactly(in, header.data(), headerBytes);
    uint64_t hash = fnv1a(fnv1a(kFnvOffset, pre, kPreambleBytes), header.data(), header.size());

    CheckpointData d;
    const Counts counts = parseHeader(header, version, d);
    const uint64_t expected =
        kPreambleBytes + headerBytes + uint64_t(counts.total()) * sizeof(float) + kChecksumBytes;
    if (fileSize < expected)
        throw truncated(expected, false);
    if (fileSize > expected)
        throw FileError("unexpected data after the end: expected " + std::to_string(expected) +
                        " bytes, found " + std::to_string(fileSize));

    readFloats(in, counts.params, d.params, hash);
    readFloats(in, counts.bestParams, d.bestParams, hash);
    readFloats(in, counts.adamM, d.adamM, hash);
    readFloats(in, counts.adamV, d.adamV, hash);
    uint64_t stored = 0;
    readExactly(in, reinterpret_cast<char*>(&stored), kChecksumBytes);
    if (stored != hash)
        throw FileError("checksum mismatch: the file is damaged");
    return d;
}

CheckpointData loadCheckpointOrThrow(const fs::path& path) {
    struct stat st {};
    Fd fd(openForReading(path, st));
    if (!S_ISREG(st.st_mode))
        throw FileError("it is not a regular file");
    FileSource in(fd.get(), uint64_t(st.st_size));
    return readCheckpoint(in);
}

} // namespace

std::string checkpointToBytes(const CheckpointData& data) {
    if (const auto problems = checkpointBufferProblems(data); !problems.empty())
        throw FileError(joinProblems(problems));
    json layout = json::array();
    for (const TensorInfo& t : data.layout)
        layout.push_back({{"name", t.name}, {"rows", t.rows}, {"cols", t.cols}});
    const json header = {{"format", CheckpointData::kFormat},
                         {"version", CheckpointData::kVersion},
                         {"model", data.model},
                         {"vocabSize", data.vocabSize},
                         {"symbols", data.symbols},
                         {"step", data.step},
                         {"layout", layout},
                         {"counts",
                          {{"params", data.params.size()},
                           {"bestParams", data.bestParams.size()},
                           {"adamM", data.adamM.size()},
                           {"adamV", data.adamV.size()}}},
                         {"training", trainingJson(data.training)}};
    const std::string headerText = header.dump(-1, ' ', false, json::error_handler_t::replace);
    if (headerText.size() > kMaxCheckpointHeaderBytes)
        throw FileError("its header would be " + humanSize(headerText.size()) + ", more than the limit of " +
                        humanSize(kMaxCheckpointHeaderBytes));

    std::string bytes;
    bytes.reserve(kPreambleBytes + headerText.size() +
                  (data.params.size() + data.bestParams.size() + data.adamM.size() + data.adamV.size()) *
                      sizeof(float) +
                  kChecksumBytes);
    bytes.append(kMagic, sizeof kMagic);
    appendRaw(bytes, uint32_t(CheckpointData::kVersion));
    appendRaw(bytes, uint32_t(headerText.size()));
    bytes += headerText;
    appendFloats(bytes, data.params);
    appendFloats(bytes, data.bestParams);
    appendFloats(bytes, data.adamM);
    appendFloats(bytes, data.adamV);
    appendRaw(bytes, fnv1a(kFnvOffset, bytes.data(), bytes.size()));
    return bytes;
}

void saveCheckpoint(const fs::path& path, const CheckpointData& data) {
    std::string bytes;
    try {
        bytes = checkpointToBytes(data);
    } catch (const FileError& e) {
        throw FileError("cannot save checkpoint " + quote(path) + ": " + e.what());
    }
    writeFileAtomic(path, bytes);
}

CheckpointData loadCheckpoint(const fs::path& path) {
    return asFileError("cannot load checkpoint " + quote(path) + ": ",
                       [&] { return loadCheckpointOrThrow(path); });
}

CheckpointData checkpointFromBytes(std::string_view bytes) {
    return asFileError("", [&] {
        MemorySource in(bytes);
        return readCheckpoint(in);
    });
}

} // namespace ndr
