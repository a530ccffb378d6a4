// Reading and writing safetensors files (see safetensors.h). The reader is untrusted-input code: the
// fuzz target fuzz_safetensors drives it.
#include "core/io/safetensors.h"

#include "core/io/file_io.h"
#include "core/io/json_fields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

namespace ndr {

using nlohmann::json;
namespace fs = std::filesystem;

// Values are copied to and from disk as they sit in memory.
static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; add byte swapping");

namespace {

constexpr size_t kLengthBytes = 8;
// The header of a model's weights is a few hundred bytes per tensor; the format's own limit is 100 MB.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 16u << 20;
constexpr int64_t kMaxSide = int64_t(1) << 31;
constexpr int64_t kMaxValues = int64_t(1) << 28; // as a checkpoint's buffers
constexpr uint64_t kMaxFileBytes =
    kLengthBytes + kMaxSafetensorsHeaderBytes + uint64_t(kMaxValues) * sizeof(float);
constexpr const char* kMetadataKey = "__metadata__";

// The dtypes of the format, so that a file of another dtype is told apart from a damaged one.
const std::set<std::string>& knownDtypes() {
    static const std::set<std::string> d = {"BOOL", "U8",  "I8",  "I16", "U16", "F16",     "BF16",   "I32",
                                            "U32",  "F32", "F64", "I64", "U64", "F8_E4M3", "F8_E5M2"};
    return d;
}

std::string inQuotes(const std::string& name) {
    return "'" + name + "'";
}

// A non-negative integer of the header, bounded.
int64_t headerInteger(const json& v, int64_t hi, const std::string& what) {
    // Non-negative numbers are stored unsigned.
    if (!v.is_number_integer() || !v.is_number_unsigned())
        throw FileError(what + ": expected a non-negative integer, got " + v.dump());
    const uint64_t x = v.get<uint64_t>();
    if (x > uint64_t(hi))
        throw FileError(what + ": " + v.dump() + " is beyond the limit of " + std::to_string(hi));
    return int64_t(x);
}

struct Entry {
    std::string name;
    std::vector<int64_t> shape;
    int64_t begin = 0, end = 0;
};

Entry readEntry(const std::string& name, const json& v, uint64_t dataBytes) {
    const std::string where = "tensor " + inQuotes(name);
    if (!v.is_object())
        throw FileError(where + ": expected an object with dtype, shape and data_offsets");
    for (const auto& [key, value] : v.items())
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            throw FileError(where + ": unknown field '" + key +
                            "' (a tensor has dtype, shape and data_offsets)");
    const auto need = [&](const char* key) -> const json& {
        const auto it = v.find(key);
        if (it == v.end())
            throw FileError(where + " has no '" + key + "'");
        return *it;
    };
    const json& dtype = need("dtype");
    if (!dtype.is_string())
        throw FileError(where + ": dtype is not a string");
    const std::string d = dtype.get<std::string>();
    if (d != "F32")
        throw FileError(where + " has dtype " + d +
                        (knownDtypes().count(d) ? "" : " (not a safetensors dtype)") +
                        "; NDR Studio reads F32 (float32) weights only: save them as float32");
    Entry e;
    e.name = name;
    const json& shape = need("shape");
    if (!shape.is_array())
        throw FileError(where + ": shape is not an array");
    if (shape.size() > 8)
        throw FileError(where + ": shape has " + std::to_string(shape.size()) + " dimensions, more than 8");
    int64_t count = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        const int64_t side = headerInteger(shape[i], kMaxSide, where + ": shape[" + std::to_string(i) + "]");
        e.shape.push_back(side);
        // Bounded at every factor, so the product cannot overflow.
        count = count * side;
        if (count > kMaxValues)
            throw FileError(where + ": shape " + shapeText(e.shape) + "... holds more than " +
                            std::to_string(kMaxValues) + " values");
    }
    const json& offsets = need("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2)
        throw FileError(where + ": data_offsets is not a pair [begin, end]");
    e.begin = headerInteger(offsets[0], INT64_MAX, where + ": data_offsets[0]");
    e.end = headerInteger(offsets[1], INT64_MAX, where + ": data_offsets[1]");
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.begin > e.end)
        throw FileError(where + ": data_offsets " + range + " end before they begin");
    if (uint64_t(e.end) > dataBytes)
        throw FileError(where + ": data_offsets " + range + " run past the end of the data (" +
                        std::to_string(dataBytes) + " bytes)");
    if (e.end - e.begin != count * int64_t(sizeof(float)))
        throw FileError(where + ": shape " + shapeText(e.shape) + " needs " +
                        std::to_string(count * int64_t(sizeof(float))) + " bytes of F32 but data_offsets " +
                        range + " hold " + std::to_string(e.end - e.begin));
    return e;
}

} // namespace

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
    for (const SafetensorsTensor& t : tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

int64_t shapeElements(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return n;
}

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string safetensorsToBytes(const SafetensorsFile& file) {
    json header = json::object();
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const SafetensorsTensor& t : file.tensors) {
        if (t.name.empty() || t.name == kMetadataKey)
            throw FileError("a tensor cannot be named '" + t.name + "'");
        if (!names.insert(t.name).second)
            throw FileError("two tensors are named " + inQuotes(t.name));
        for (int64_t s : t.shape)
            if (s < 0)
                throw FileError("tensor " + inQuotes(t.name) + " has a negative side in " +
                                shapeText(t.shape));
        if (shapeElements(t.shape) != int64_t(t.values.size()))
            throw FileError("tensor " + inQuotes(t.name) + " has " + std::to_string(t.values.size()) +
                            " values for shape " + shapeText(t.shape));
        const uint64_t bytes = t.values.size() * sizeof(float);
        header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    if (!file.metadata.empty())
        header[kMetadataKey] = file.metadata;
    std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
    text.append((kLengthBytes - (kLengthBytes + text.size()) % kLengthBytes) % kLengthBytes, ' ');
    std::string bytes;
    bytes.reserve(kLengthBytes + text.size() + offset);
    const uint64_t length = text.size();
    bytes.append(reinterpret_cast<const char*>(&length), kLengthBytes);
    bytes += text;
    for (const SafetensorsTensor& t : file.tensors)
        bytes.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    return bytes;
}

SafetensorsFile safetensorsFromBytes(std::string_view bytes) {
    if (bytes.size() < kLengthBytes)
        throw FileError("truncated: " + std::to_string(bytes.size()) +
                        " bytes, but a safetensors file starts with an 8-byte header length");
    uint64_t headerBytes = 0;
    std::memcpy(&headerBytes, bytes.data(), kLengthBytes);
    const uint64_t rest = bytes.size() - kLengthBytes;
    if (headerBytes > rest)
        throw FileError("the header length " + std::to_string(headerBytes) +
                        " runs beyond the end of the file (" + std::to_string(rest) +
                        " bytes follow the length): the file is truncated or not safetensors");
    if (headerBytes > kMaxSafetensorsHeaderBytes)
        throw FileError("the header length " + std::to_string(headerBytes) + " is beyond the limit of " +
                        fileio::humanSize(kMaxSafetensorsHeaderBytes));
    if (headerBytes < 2)
        throw FileError("the header is " + std::to_string(headerBytes) +
                        " bytes, too short for a JSON object");
    const std::string_view text = bytes.substr(kLengthBytes, headerBytes);
    const uint64_t dataBytes = rest - headerBytes;
    try {
        jsonio::checkJsonSize(text, SIZE_MAX);
    } catch (const std::runtime_error& e) {
        throw FileError(std::string("the header: ") + e.what());
    }
    // nlohmann keeps the last of repeated keys; a repeated tensor name is refused instead.
    std::string repeated;
    std::set<std::string> keys;
    const json::parser_callback_t noteKeys = [&](int depth, json::parse_event_t event, json& parsed) {
        if (depth == 1 && event == json::parse_event_t::key && parsed.is_string() &&
            !keys.insert(parsed.get<std::string>()).second && repeated.empty())
            repeated = parsed.get<std::string>();
        return true;
    };
    json header;
    try {
        header = json::parse(text.begin(), text.end(), noteKeys);
    } catch (const json::parse_error& e) {
        throw FileError("the header is not valid JSON (byte " + std::to_string(e.byte) + " of " +
                        std::to_string(headerBytes) + ")");
    } catch (const json::exception& e) {
        throw FileError("the header is not valid JSON: " + jsonio::jsonMessage(e));
    }
    if (!header.is_object())
        throw FileError("the header is not a JSON object");
    if (!repeated.empty())
        throw FileError("the header names " + inQuotes(repeated) + " twice");

    SafetensorsFile file;
    std::vector<Entry> entries;
    for (const auto& [name, value] : header.items()) {
        if (name == kMetadataKey) {
            if (!value.is_object())
                throw FileError("__metadata__ is not an object of strings");
            for (const auto& [key, v] : value.items()) {
                if (!v.is_string())
                    throw FileError("__metadata__ field '" + key + "' is not a string");
                file.metadata[key] = v.get<std::string>();
            }
            continue;
        }
        if (name.empty())
            throw FileError("a tensor has an empty name");
        entries.push_back(readEntry(name, value, dataBytes));
    }
    // The byte ranges tile the data: in order, each starts where the one before ends.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    int64_t at = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (e.begin < at)
            throw FileError("tensors " + inQuotes(entries[i - 1].name) + " and " + inQuotes(e.name) +
                            " overlap (bytes " + std::to_string(e.begin) + ".." + std::to_string(at) + ")");
        if (e.begin > at)
            throw FileError("bytes " + std::to_string(at) + ".." + std::to_string(e.begin) +
                            " of the data belong to no tensor (before " + inQuotes(e.name) + ")");
        at = e.end;
    }
    if (uint64_t(at) != dataBytes)
        throw FileError(std::to_string(dataBytes - uint64_t(at)) +
                        " bytes after the last tensor's data belong to no tensor");

    const char* data = bytes.data() + kLengthBytes + headerBytes;
    for (const Entry& e : entries) {
        SafetensorsTensor t;
        t.name = e.name;
        t.shape = e.shape;
        t.values.resize(size_t((e.end - e.begin) / int64_t(sizeof(float))));
        if (!t.values.empty())
            std::memcpy(t.values.data(), data + e.begin, size_t(e.end - e.begin));
        file.tensors.push_back(std::move(t));
    }
    return file;
}

void saveSafetensors(const fs::path& path, const SafetensorsFile& file) {
    std::string bytes;
    try {
        bytes = safetensorsToBytes(file);
    } catch (const FileError& e) {
        throw FileError("cannot save weights " + fileio::quote(path) + ": " + e.what());
    }
    writeFileAtomic(path, bytes);
}

SafetensorsFile loadSafetensors(const fs::path& path) {
    const std::string prefix = "cannot load weights " + fileio::quote(path) + ": ";
    // readFileBounded's refusal names the file itself.
    const std::string bytes = readFileBounded(path, kMaxFileBytes);
    return fileio::asFileError(prefix, [&] { return safetensorsFromBytes(bytes); });
}

} // namespace ndr
