// The architecture's include rules (docs/design.md, "Folders and what they may include"), checked from
// the #include lines of every source file: each folder includes only the folders below it, core/
// includes no Qt, only ui/plots includes QCustomPlot.
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Folder -> the project folders its files may include (besides itself).
const std::map<std::string, std::set<std::string>>& rules() {
    static const std::set<std::string> coreData = {"core/config", "core/task", "core/records"};
    static const std::set<std::string> core = {"core/config", "core/task", "core/records", "core/nn",
                                               "core/models", "core/io",   "core/train"};
    static const std::map<std::string, std::set<std::string>> r = [] {
        std::map<std::string, std::set<std::string>> m;
        m["core/config"] = {};
        m["core/task"] = {"core/config"};
        m["core/records"] = {"core/config", "core/task"};
        m["core/nn"] = coreData;
        m["core/models"] = {"core/config", "core/task", "core/records", "core/nn"};
        m["core/io"] = coreData;
        m["core/train"] = core;
        auto with = [](std::set<std::string> a, std::initializer_list<std::string> b) {
            a.insert(b);
            return a;
        };
        m["ui/common"] = coreData;
        m["ui/plots"] = with(coreData, {"ui/common"});
        m["ui/dashboard"] = with(coreData, {"ui/common", "ui/plots"});
        m["ui/export"] = with(coreData, {"core/io", "ui/common", "ui/plots", "ui/dashboard"});
        m["ui/training"] = with(core, {"ui/common"});
        m["ui/panel"] = with(coreData, {"core/io", "ui/common"});
        m["ui/inspector"] = with(core, {"ui/common", "ui/plots", "ui/export", "ui/training"});
        m["ui/compare"] = with(core, {"ui/common", "ui/plots"});
        m["ui/shell"] = with(core, {"ui/common", "ui/plots", "ui/dashboard", "ui/export", "ui/training",
                                    "ui/panel", "ui/inspector", "ui/compare"});
        m["app/cli"] = with(core, {"ui/common", "ui/export"});
        m["app/studio"] = with(core, {"ui/common", "ui/dashboard", "ui/export", "ui/training", "ui/panel",
                                      "ui/inspector", "ui/compare", "ui/shell"});
        return m;
    }();
    return r;
}

struct Include {
    std::string file;
    int line = 0;
    std::string target; // what is between the quotes or angle brackets
    bool angled = false;
};

std::vector<Include> includesUnder(const fs::path& root, const std::string& top) {
    // Built from pieces: moc's preprocessor trips over an include directive inside a literal.
    static const std::regex directive(std::string("^\\s*") + '#' + "\\s*inc" +
                                      "lude\\s*([<\"])([^>\"]+)[>\"]");
    std::vector<Include> out;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp"))
            continue;
        std::ifstream in(entry.path());
        std::string text;
        int line = 0;
        while (std::getline(in, text)) {
            ++line;
            std::smatch m;
            if (std::regex_search(text, m, directive))
                out.push_back(
                    {fs::relative(entry.path(), root).generic_string(), line, m[2].str(), m[1] == "<"});
        }
    }
    return out;
}

// "core/nn/attention.h" -> "core/nn"; "core/models/encoder/encoder.h" -> "core/models" (the model kinds
// share one rule).
std::string folderOf(const std::string& path) {
    const auto first = path.find('/');
    const auto second = path.find('/', first + 1);
    return path.substr(0, second);
}

// The model kinds' configuration headers (core/models/kinds.h, kind_list.h, <kind>/config.h and
// <kind>/kind.h): core/config holds a model's configuration as one of the kinds', so it may include
// these, and they include nothing of the project but core/config and each other.
bool kindConfigurationHeader(const std::string& path) {
    static const std::regex header("core/models/((kinds|kind_list)\\.h|[a-z_]+/(config|kind)\\.h)");
    return std::regex_match(path, header);
}

} // namespace

class TestIncludeRules : public QObject {
    Q_OBJECT
private slots:
    void everyFolderHasARule() {
        const fs::path root(NDR_SOURCE_DIR);
        int folders = 0;
        for (const char* top : {"core", "ui", "app"})
            for (const auto& entry : fs::directory_iterator(root / top))
                if (entry.is_directory()) {
                    ++folders;
                    const std::string folder = fs::relative(entry.path(), root).generic_string();
                    QVERIFY2(rules().count(folder), (folder + " has no include rule in this test").c_str());
                }
        QVERIFY(folders >= 14);
    }

    void projectIncludesFollowTheRules() {
        const fs::path root(NDR_SOURCE_DIR);
        int checked = 0;
        QStringList broken;
        for (const char* top : {"core", "ui", "app"}) {
            for (const Include& inc : includesUnder(root, top)) {
                const std::string from = folderOf(inc.file);
                const std::string where = inc.file + ":" + std::to_string(inc.line) + ": ";
                if (inc.angled) {
                    // Qt's headers start with Q (and QtTest etc.); qcustomplot.h only in ui/plots.
                    const bool qt = !inc.target.empty() && inc.target[0] == 'Q';
                    if (qt && from.rfind("core/", 0) == 0)
                        broken << QString::fromStdString(where + "core includes Qt <" + inc.target + ">");
                    if (inc.target == "qcustomplot.h" && from != "ui/plots")
                        broken << QString::fromStdString(where + "only ui/plots may include qcustomplot.h");
                    continue;
                }
                ++checked;
                if (inc.target == "qcustomplot.h") {
                    broken << QString::fromStdString(where + "include qcustomplot.h with <>");
                    continue;
                }
                const bool project = inc.target.rfind("core/", 0) == 0 || inc.target.rfind("ui/", 0) == 0;
                if (!project) {
                    // A file of the same folder by its bare name (app/ keeps its local headers so).
                    if (!fs::exists(root / fs::path(inc.file).parent_path() / inc.target))
                        broken << QString::fromStdString(where + "\"" + inc.target +
                                                         "\" is not a root-relative project path");
                    continue;
                }
                const std::string to = folderOf(inc.target);
                if (kindConfigurationHeader(inc.file) && to != "core/config" &&
                    !kindConfigurationHeader(inc.target)) {
                    broken << QString::fromStdString(where +
                                                     "a kind's configuration header may include only "
                                                     "core/config and the kinds' headers (\"" +
                                                     inc.target + "\")");
                    continue;
                }
                if (to == from)
                    continue;
                if (from == "core/config" && kindConfigurationHeader(inc.target))
                    continue;
                if (!rules().at(from).count(to))
                    broken << QString::fromStdString(where + from + " may not include " + to + " (\"" +
                                                     inc.target + "\")");
            }
        }
        QVERIFY(checked > 200);
        QVERIFY2(broken.isEmpty(), qPrintable(broken.join('\n')));
    }

    // The rule set itself has no cycle: a folder's allowed folders never allow it back.
    void rulesHaveNoCycle() {
        for (const auto& [folder, allowed] : rules())
            for (const std::string& other : allowed) {
                if (other == folder)
                    continue;
                QVERIFY2(rules().count(other), (folder + " allows unknown " + other).c_str());
                QVERIFY2(!rules().at(other).count(folder), (folder + " <-> " + other).c_str());
            }
    }
};

QTEST_APPLESS_MAIN(TestIncludeRules)
#include "test_include_rules.moc"
