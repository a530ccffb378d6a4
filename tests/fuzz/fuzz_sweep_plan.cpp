// libFuzzer target: the sweep plan reader (`sweep.json`, which every runner of a sweep reads), on any
// bytes. It must refuse with FileError carrying a message (any other exception escapes and is a
// finding). A plan it accepts must keep every run inside the sweep folder, in a folder of its own
// that holds no other run's, and read back unchanged from the text it writes.
#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "fuzz_check.h"

#include <filesystem>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ndr::SweepPlan plan;
    if (!acceptsOrRefusesWithMessage<ndr::FileError>("sweepPlanFromText", text,
                                                     [&] { plan = ndr::sweepPlanFromText(text); }))
        return 0;
    std::set<std::string> folders;
    for (const ndr::SweepEntry& e : plan.runs) {
        for (const char c : e.dir)
            if (static_cast<unsigned char>(c) < 0x20)
                fuzzFail("an accepted run folder holds a control character", text);
        const std::filesystem::path dir = std::filesystem::path(e.dir).lexically_normal();
        if (dir.empty() || dir.is_absolute() || *dir.begin() == ".." || *dir.begin() == ".")
            fuzzFail("an accepted run folder '" + e.dir + "' is not inside the sweep folder", text);
        if (!folders.insert(dir.string()).second)
            fuzzFail("two accepted runs share the folder '" + dir.string() + "'", text);
    }
    for (const std::string& folder : folders)
        for (auto p = std::filesystem::path(folder).parent_path(); !p.empty(); p = p.parent_path())
            if (folders.count(p.string()))
                fuzzFail("an accepted run folder '" + folder + "' lies inside another's", text);
    const std::string written = ndr::sweepPlanToText(plan);
    ndr::SweepPlan back;
    mustAccept<ndr::FileError>("an accepted plan is refused as written", text,
                               [&] { back = ndr::sweepPlanFromText(written); });
    if (!(back == plan))
        fuzzFail("an accepted plan reads back different", text);
    return 0;
}
