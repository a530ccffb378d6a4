// libFuzzer target: the run-record loader, on any bytes. It must refuse with FileError (any other
// exception escapes and is a finding), and a record it accepts must save and load back unchanged; read
// without the evaluations' traces it must be the same record with those traces empty.
#include "core/io/files.h"
#include "core/io/serialize.h"
#include "fuzz_check.h"

#include <nlohmann/json.hpp>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ndr::RunRecord record;
    try {
        ndr::runRecordFromText(text, ndr::RunFileParts::WithoutTraces);
    } catch (const ndr::FileError& e) {
        if (std::string(e.what()).empty())
            fuzzFail("runRecordFromText without traces: refusal without a message", text);
    }
    try {
        record = ndr::runRecordFromText(text);
    } catch (const ndr::FileError& e) {
        if (std::string(e.what()).empty())
            fuzzFail("runRecordFromText: refusal without a message", text);
        return 0;
    }
    ndr::RunRecord summary;
    try {
        summary = ndr::runRecordFromText(text, ndr::RunFileParts::WithoutTraces);
    } catch (const ndr::FileError& e) {
        fuzzFail(std::string("an accepted record is refused without its traces: ") + e.what(), text);
    }
    ndr::RunRecord traceless = record;
    for (auto& m : traceless.models)
        for (auto& e : m.history)
            e.probe = ndr::Trace{};
    if (ndr::runRecordToText(summary) != ndr::runRecordToText(traceless))
        fuzzFail("an accepted record read without its traces differs in more than its traces", text);
    const std::string saved = ndr::runRecordToText(record);
    ndr::RunRecord back;
    try {
        back = ndr::runRecordFromText(saved);
    } catch (const ndr::FileError& e) {
        fuzzFail(std::string("an accepted record does not load after saving: ") + e.what(), text);
    }
    if (ndr::runRecordToText(back) != saved)
        fuzzFail("an accepted record changes when saved and loaded again", text);
    return 0;
}
