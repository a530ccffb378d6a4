// Helpers shared by the test suites: comparisons that say what failed (label, first mismatches,
// max abs/rel error).
#pragma once

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace ndrtest {

// Compares two arrays elementwise with |a-b| <= atol + rtol*|b|; on failure reports the label, the
// first few mismatches and the max errors through QFAIL-compatible text. Returns true when close.
template <typename A, typename B>
bool allClose(const std::string& label, const A* got, const B* want, size_t n, double atol, double rtol,
              std::string* report) {
    double maxAbs = 0, maxRel = 0;
    int bad = 0;
    std::ostringstream os;
    for (size_t i = 0; i < n; ++i) {
        double g = double(got[i]), w = double(want[i]);
        double abs = std::abs(g - w), rel = abs / std::max(1e-30, std::abs(w));
        maxAbs = std::max(maxAbs, abs);
        if (std::abs(w) > 1e-12)
            maxRel = std::max(maxRel, rel);
        if (!(abs <= atol + rtol * std::abs(w))) {
            if (bad < 5)
                os << "\n  [" << i << "] got " << g << " want " << w << " (abs err " << abs << ")";
            ++bad;
        }
    }
    if (bad > 0 && report) {
        std::ostringstream head;
        head << label << ": " << bad << " of " << n << " mismatches, max abs err " << maxAbs
             << ", max rel err " << maxRel << " (atol " << atol << ", rtol " << rtol << ")";
        *report = head.str() + os.str();
    }
    return bad == 0;
}

// A wait of `ms` milliseconds for QTRY_*_WITH_TIMEOUT, times NDR_TEST_TIME_SCALE (the sanitizer
// presets set it: their builds run several times slower, and a wait is a bound, not a measurement).
inline int waitMs(int ms) {
    bool ok = false;
    const double scale = qEnvironmentVariable("NDR_TEST_TIME_SCALE").toDouble(&ok);
    return ok && scale > 1 ? int(ms * scale) : ms;
}

} // namespace ndrtest

#define NDR_EXPECT_CLOSE(label, got, want, n, atol, rtol)                                                    \
    do {                                                                                                     \
        std::string ndrReport_;                                                                              \
        if (!ndrtest::allClose(label, got, want, n, atol, rtol, &ndrReport_))                                \
            QFAIL(ndrReport_.c_str());                                                                       \
    } while (0)
