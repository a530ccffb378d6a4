// The sweep plan file (see sweep_plan.h): JSON with a format name and version, checked entry by entry.
#include "core/io/sweep_plan.h"

#include "core/io/files.h"
#include "core/io/json_fields.h"

#include <nlohmann/json.hpp>

#include <set>

namespace ndr {

using jsonio::fail;
using jsonio::item;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxPlanBytes = 64u << 20;
constexpr size_t kMaxPlanValues = 4u << 20;
constexpr size_t kMaxRuns = 100000;

const json& member(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end())
        fail(path, std::string("has no '") + key + "' field");
    return *it;
}

std::string stringMember(const json& j, const char* key, const std::string& path) {
    const json& v = member(j, key, path);
    if (!v.is_string())
        fail(jsonio::field(path, key), "expected a string, got " + v.dump());
    return v.get<std::string>();
}

// A folder inside the sweep folder: relative, without control characters (a NUL would end the name the
// system sees early, so that two entries could share a folder) and without "..", "." or empty parts.
void checkRunDir(const std::string& dir, const std::string& path) {
    if (dir.empty())
        fail(path, "is empty");
    for (const char c : dir)
        if (static_cast<unsigned char>(c) < 0x20)
            fail(path, "must not contain control characters (such as a line break or NUL)");
    const std::filesystem::path p(dir);
    if (p.is_absolute())
        fail(path, "'" + dir + "' must be a folder inside the sweep folder, not an absolute path");
    for (const auto& part : p)
        if (part == ".." || part == "." || part.empty())
            fail(path, "'" + dir + "' must not contain '" + part.string() + "'");
}

// The folder of an earlier run (in `dirs`, normalised) that holds `dir` or that `dir` holds, or "": a
// run's folder inside another's would mix their files (a folder `a/run.json` blocks run `a`'s record).
std::string nestingFolder(const std::set<std::string>& dirs, const std::string& dir) {
    for (auto p = std::filesystem::path(dir).parent_path(); !p.empty(); p = p.parent_path())
        if (dirs.count(p.string()))
            return p.string();
    const std::string inside = dir + "/";
    const auto next = dirs.lower_bound(inside);
    if (next != dirs.end() && next->compare(0, inside.size(), inside) == 0)
        return *next;
    return "";
}

} // namespace

const char* sweepKindName(SweepKind kind) {
    return kind == SweepKind::Table1 ? "table1" : "seeds";
}

std::string sweepPlanToText(const SweepPlan& plan) {
    json runs = json::array();
    for (const SweepEntry& e : plan.runs)
        runs.push_back({{"name", e.name}, {"dir", e.dir}, {"group", e.group}, {"config", e.config}});
    const json j = {{"format", SweepPlan::kFormat},
                    {"version", SweepPlan::kVersion},
                    {"kind", sweepKindName(plan.kind)},
                    {"runs", runs}};
    return j.dump(1) + "\n";
}

SweepPlan sweepPlanFromText(std::string_view text) {
    json j;
    try {
        jsonio::checkJsonSize(text, kMaxPlanValues);
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw FileError("not JSON: " + jsonio::jsonMessage(e));
    } catch (const std::exception& e) {
        throw FileError(e.what());
    }
    try {
        if (!j.is_object())
            fail("", "expected a JSON object");
        if (stringMember(j, "format", "") != SweepPlan::kFormat)
            fail("format", std::string("expected \"") + SweepPlan::kFormat + "\": this is not a sweep plan");
        const json& version = member(j, "version", "");
        if (!version.is_number_integer() || version.get<int64_t>() < 1)
            fail("version", "expected a positive integer, got " + version.dump());
        if (version.get<int64_t>() > SweepPlan::kVersion)
            fail("version", std::to_string(version.get<int64_t>()) + " is newer than this program reads (" +
                                std::to_string(SweepPlan::kVersion) + "); update NDR Studio");
        SweepPlan plan;
        const std::string kind = stringMember(j, "kind", "");
        if (kind == sweepKindName(SweepKind::Seeds))
            plan.kind = SweepKind::Seeds;
        else if (kind == sweepKindName(SweepKind::Table1))
            plan.kind = SweepKind::Table1;
        else
            fail("kind", "expected \"seeds\" or \"table1\", got \"" + kind + "\"");
        const json& runs = member(j, "runs", "");
        if (!runs.is_array())
            fail("runs", "expected an array");
        if (runs.empty())
            fail("runs", "the plan has no runs");
        if (runs.size() > kMaxRuns)
            fail("runs", "more than " + std::to_string(kMaxRuns) + " runs");
        std::set<std::string> dirs;
        for (size_t i = 0; i < runs.size(); ++i) {
            const std::string path = item("runs", i);
            const json& r = runs[i];
            if (!r.is_object())
                fail(path, "expected an object");
            SweepEntry e;
            e.name = stringMember(r, "name", path);
            e.dir = stringMember(r, "dir", path);
            checkRunDir(e.dir, path + ".dir");
            const std::string dir = std::filesystem::path(e.dir).lexically_normal().string();
            if (dirs.count(dir))
                fail(path + ".dir", "'" + e.dir + "' is also the folder of an earlier run");
            if (const std::string other = nestingFolder(dirs, dir); !other.empty())
                fail(path + ".dir", "'" + e.dir + "' and the folder of an earlier run, '" + other +
                                        "', lie one inside the other");
            dirs.insert(dir);
            e.group = stringMember(r, "group", path);
            try {
                e.config = member(r, "config", path).get<RunConfig>();
            } catch (const std::exception& ex) {
                fail(path + ".config", ex.what());
            }
            if (const auto problems = validate(e.config); !problems.empty())
                fail(path + ".config", problems.front().text());
            plan.runs.push_back(std::move(e));
        }
        return plan;
    } catch (const FileError&) {
        throw;
    } catch (const std::exception& e) {
        throw FileError(e.what());
    }
}

SweepPlan loadSweepPlan(const std::filesystem::path& folder) {
    const auto file = folder / SweepPlan::kFileName;
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec))
        throw FileError(folder.string() + " is not a folder");
    if (!std::filesystem::exists(file, ec))
        throw FileError(folder.string() + " is not a sweep folder: it has no " + SweepPlan::kFileName +
                        " (make one with `ndr sweep ... --plan-only --out " + folder.string() + "`)");
    const std::string text = readFileBounded(file, kMaxPlanBytes);
    try {
        return sweepPlanFromText(text);
    } catch (const FileError& e) {
        throw FileError(file.string() + ": " + e.what());
    }
}

void saveSweepPlan(const std::filesystem::path& folder, const SweepPlan& plan) {
    writeFileAtomic(folder / SweepPlan::kFileName, sweepPlanToText(plan));
}

} // namespace ndr
