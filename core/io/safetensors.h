// The safetensors format, the weights file users take to PyTorch and back (docs/design.md §7): an
// 8-byte little-endian header length, a JSON header giving each tensor's dtype, shape and byte range,
// then the raw little-endian data. NDR Studio writes and reads float32 ("F32") tensors only.
#pragma once

#include "core/io/files.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ndr {

struct SafetensorsTensor {
    std::string name;
    std::vector<int64_t> shape; // empty: a scalar, one value
    std::vector<float> values;  // row-major, the product of `shape` values

    bool operator==(const SafetensorsTensor&) const = default;
};

struct SafetensorsFile {
    std::vector<SafetensorsTensor> tensors;      // in the order of their data in the file
    std::map<std::string, std::string> metadata; // the header's "__metadata__"

    // The tensor of that name, or null.
    const SafetensorsTensor* find(const std::string& name) const;
    bool operator==(const SafetensorsFile&) const = default;
};

// The number of values a shape holds (1 for a scalar).
int64_t shapeElements(const std::vector<int64_t>& shape);
// "[3, 4]", for messages.
std::string shapeText(const std::vector<int64_t>& shape);

// The bytes of a safetensors file: the header's keys in name order, the data in the order of
// `file.tensors`, the header padded with spaces to a multiple of 8 bytes so that the data is aligned.
// FileError (without a file name) when a tensor's values do not fit its shape or a name is empty,
// repeated or "__metadata__".
std::string safetensorsToBytes(const SafetensorsFile& file);
// The file held in `bytes`, every size and offset checked before anything is allocated from it:
// FileError (without a file name) naming what is wrong (truncated, a header length beyond the file, a
// header that is not JSON, a dtype other than F32, a shape that does not match its byte range, byte
// ranges that overlap, leave a gap or run past the data).
SafetensorsFile safetensorsFromBytes(std::string_view bytes);

void saveSafetensors(const std::filesystem::path& path, const SafetensorsFile& file);
// FileError "cannot load weights '<path>': <what is wrong>".
SafetensorsFile loadSafetensors(const std::filesystem::path& path);

} // namespace ndr
