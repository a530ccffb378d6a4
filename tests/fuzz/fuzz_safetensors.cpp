// libFuzzer target: the safetensors reader (weights from PyTorch, `ndr import-weights`), on any bytes.
// It must refuse with FileError carrying a message (any other exception escapes and is a finding). A
// file it accepts holds as many values as its shapes say, writes back to bytes that read back to the
// same tensors and metadata, and writing those again gives the same bytes.
#include "core/io/files.h"
#include "core/io/safetensors.h"
#include "fuzz_check.h"

#include <algorithm>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    ndr::SafetensorsFile file;
    if (!acceptsOrRefusesWithMessage<ndr::FileError>("safetensorsFromBytes", bytes,
                                                     [&] { file = ndr::safetensorsFromBytes(bytes); }))
        return 0;
    size_t values = 0;
    for (const ndr::SafetensorsTensor& t : file.tensors) {
        if (ndr::shapeElements(t.shape) != int64_t(t.values.size()))
            fuzzFail("an accepted tensor '" + t.name + "' holds another number of values than its shape",
                     bytes);
        values += t.values.size();
    }
    if (values * sizeof(float) > bytes.size())
        fuzzFail("an accepted file holds more values than bytes", bytes);
    std::string written;
    mustAccept<ndr::FileError>("an accepted file cannot be written", bytes,
                               [&] { written = ndr::safetensorsToBytes(file); });
    ndr::SafetensorsFile back;
    mustAccept<ndr::FileError>("an accepted file is refused as written", bytes,
                               [&] { back = ndr::safetensorsFromBytes(written); });
    // NaN payloads compare unequal as floats: the tensors are compared by their bytes.
    bool same = back.metadata == file.metadata && back.tensors.size() == file.tensors.size();
    for (size_t i = 0; same && i < file.tensors.size(); ++i) {
        const ndr::SafetensorsTensor &a = file.tensors[i], &b = back.tensors[i];
        same = a.name == b.name && a.shape == b.shape && a.values.size() == b.values.size() &&
               std::equal(reinterpret_cast<const char*>(a.values.data()),
                          reinterpret_cast<const char*>(a.values.data() + a.values.size()),
                          reinterpret_cast<const char*>(b.values.data()));
    }
    if (!same)
        fuzzFail("an accepted file reads back different once written", bytes);
    if (ndr::safetensorsToBytes(back) != written)
        fuzzFail("writing an accepted file twice gives different bytes", bytes);
    return 0;
}
