// The engine's instruction-set level: the level the loader chose is one this CPU runs, NDR_ISA's
// requests are checked, and under ctest's level runs (NDR_EXPECT_ISA, tests/CMakeLists.txt) the engine
// really is the one asked for, so the numerical suites run there do test that level.
#include "core/nn/isa.h"

#include <QtTest>
#include <algorithm>
#include <cstdlib>

class TestIsa : public QObject {
    Q_OBJECT

private slots:
    void levelIsOneThisCpuRuns() {
        const std::vector<std::string> levels = ndr::supportedLevels();
        QCOMPARE(levels.front(), std::string("x86-64"));
        const std::string level = ndr::engineLevel();
        if (!ndr::engineDispatches())
            QSKIP("this build runs one level (no dispatch)");
        QVERIFY2(std::find(levels.begin(), levels.end(), level) != levels.end(), level.c_str());
        if (!std::getenv("NDR_EXPECT_ISA") && !std::getenv("GLIBC_TUNABLES"))
            QCOMPARE(level, levels.back()); // unforced: the highest the CPU has
    }

    void expectedLevelIsTheOneLoaded() {
        const char* expected = std::getenv("NDR_EXPECT_ISA");
        if (!expected)
            QSKIP("not a level run");
        if (!ndr::engineDispatches())
            QSKIP("this build runs one level (no dispatch)");
        const auto levels = ndr::supportedLevels();
        if (std::find(levels.begin(), levels.end(), std::string(expected)) == levels.end())
            QSKIP("this CPU cannot run the level");
        QCOMPARE(std::string(ndr::engineLevel()), std::string(expected));
    }

    void requestsAreChecked() {
        qputenv("NDR_ISA", "x86-64-v9");
        char arg0[] = "test_isa";
        char* argv[] = {arg0, nullptr};
        const std::string unknown = ndr::applyLevelRequest(argv);
        QVERIFY2(unknown.find("no such level") != std::string::npos, unknown.c_str());
        // A level at or above the one running needs nothing (and must not run the program again).
        qputenv("NDR_ISA", "x86-64-v4");
        const std::string same = ndr::applyLevelRequest(argv);
        QVERIFY2(same.empty() || same.find("ignored") != std::string::npos, same.c_str());
        qunsetenv("NDR_ISA");
        QVERIFY(ndr::applyLevelRequest(argv).empty());
        QVERIFY(ndr::describeLevel("x86-64-v4").find("AVX-512") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestIsa)
#include "test_isa.moc"
