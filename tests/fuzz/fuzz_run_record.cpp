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
    acceptsOrRefusesWithMessage<ndr::FileError>("runRecordFromText without traces", text, [&] {
        ndr::runRecordFromText(text, ndr::RunFileParts::WithoutTraces);
    });
    if (!acceptsOrRefusesWithMessage<ndr::FileError>("runRecordFromText", text,
                                                     [&] { record = ndr::runRecordFromText(text); }))
        return 0;
    ndr::RunRecord summary;
    mustAccept<ndr::FileError>("an accepted record is refused without its traces", text, [&] {
        summary = ndr::runRecordFromText(text, ndr::RunFileParts::WithoutTraces);
    });
    ndr::RunRecord traceless = record;
    for (auto& m : traceless.models)
        for (auto& e : m.history)
            e.probe = ndr::Trace{};
    if (ndr::runRecordToText(summary) != ndr::runRecordToText(traceless))
        fuzzFail("an accepted record read without its traces differs in more than its traces", text);
    const std::string saved = ndr::runRecordToText(record);
    ndr::RunRecord back;
    mustAccept<ndr::FileError>("an accepted record does not load after saving", text,
                               [&] { back = ndr::runRecordFromText(saved); });
    if (ndr::runRecordToText(back) != saved)
        fuzzFail("an accepted record changes when saved and loaded again", text);
    return 0;
}
