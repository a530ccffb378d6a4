// libFuzzer target: the checkpoint loader, on any bytes. It must refuse with FileError, and a
// checkpoint it accepts must fit its own layout and save to bytes that load back to the same bytes.
// Each input is tried as it is and again with its checksum repaired, so mutations reach the checks
// after the checksum too.
#include "core/io/files.h"
#include "fuzz_check.h"

#include <cstring>
#include <string>

namespace {

void check(const std::string& bytes) {
    ndr::CheckpointData d;
    if (!acceptsOrRefusesWithMessage<ndr::FileError>("checkpointFromBytes", bytes,
                                                     [&] { d = ndr::checkpointFromBytes(bytes); }))
        return;
    mustAccept<ndr::FileError>("an accepted checkpoint is refused after saving", bytes, [&] {
        // A checkpoint fits the model and layout it records.
        ndr::checkCheckpointMatches(d, d.model, d.layout);
        const std::string saved = ndr::checkpointToBytes(d);
        if (ndr::checkpointToBytes(ndr::checkpointFromBytes(saved)) != saved)
            fuzzFail("an accepted checkpoint changes when saved and loaded again", bytes);
    });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    check(bytes);
    if (size >= 16 + 8) {
        const uint64_t sum = fuzzFnv1a(bytes, size - 8);
        std::memcpy(bytes.data() + size - 8, &sum, 8);
        check(bytes);
    }
    return 0;
}
