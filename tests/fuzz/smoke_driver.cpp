// The fuzz targets without libFuzzer (g++ builds, CTest): replays a target's seed corpus, then a fixed
// number of seeded random mutations of it, so every test run checks the targets' properties on a few
// thousand damaged inputs. Deterministic for a given seed; a time limit only cuts a slow machine short.
//
//   fuzz_<target>_smoke <corpus-folder> [--runs N] [--seed S] [--seconds T]
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void run(const std::string& input) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

// Values that tend to sit on a boundary of some check: as bytes, as text and as 32-bit integers.
const unsigned char kBytes[] = {0,   1,   0x7f, 0x80, 0xff, '"', '{', '}', '[',  ']',  ',',  ':',
                                ' ', '-', '.',  'e',  '0',  '1', '9', 'a', '\n', '\t', 0xc3, 0xe2};
const char* const kTokens[] = {"0",
                               "-1",
                               "1e400",
                               "99999999999999999999",
                               "2147483648",
                               "1099511627776",
                               "null",
                               "true",
                               "\"\"",
                               "[]",
                               "{}",
                               "1.5",
                               "NaN",
                               " ",
                               "\xe2\x80\x83",
                               "\xf0\x9f\x98\x80",
                               "[B]",
                               "000",
                               "z"};
const uint32_t kWords[] = {0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 1u << 20, 1u << 28, 16u << 20};

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
    const auto below = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
    const int count = 1 + int(rng() % 4);
    for (int k = 0; k < count; ++k) {
        const size_t at = below(s.size() + 1);
        switch (rng() % 10) {
        case 0: // flip one bit
            if (!s.empty())
                s[below(s.size())] ^= char(1 << (rng() % 8));
            break;
        case 1: // a random byte
            if (!s.empty())
                s[below(s.size())] = char(rng());
            break;
        case 2: // a boundary byte
            if (!s.empty())
                s[below(s.size())] = char(kBytes[below(sizeof kBytes)]);
            break;
        case 3: // delete a range
            s.erase(at, 1 + below(std::min<size_t>(64, s.size() - std::min(at, s.size()) + 1)));
            break;
        case 4: // insert random bytes
            for (size_t n = 1 + below(8); n > 0; --n)
                s.insert(s.begin() + std::ptrdiff_t(std::min(at, s.size())), char(rng()));
            break;
        case 5: // duplicate a range
            if (!s.empty()) {
                const size_t from = below(s.size());
                s.insert(std::min(at, s.size()), s.substr(from, 1 + below(64)));
            }
            break;
        case 6: // truncate
            s.resize(below(s.size() + 1));
            break;
        case 7: // splice with another input
            if (!corpus.empty()) {
                const std::string& other = corpus[below(corpus.size())];
                s = s.substr(0, at) + other.substr(below(other.size() + 1));
            }
            break;
        case 8: // a boundary 32-bit integer, in place
            if (s.size() >= 4) {
                const uint32_t w = kWords[below(std::size(kWords))];
                const size_t p = below(s.size() - 3);
                for (int b = 0; b < 4; ++b)
                    s[p + b] = char(w >> (8 * b));
            }
            break;
        default: { // a boundary token in place of a run of digits or letters, or inserted
            const std::string token = kTokens[below(std::size(kTokens))];
            size_t end = std::min(at, s.size());
            while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '.'))
                ++end;
            s.replace(std::min(at, s.size()), end - std::min(at, s.size()), token);
            break;
        }
        }
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <corpus-folder> [--runs N] [--seed S] [--seconds T]\n", argv[0]);
        return 2;
    }
    long runs = 10000;
    uint64_t seed = 1;
    double seconds = 10;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--runs")
            runs = std::atol(argv[i + 1]);
        else if (flag == "--seed")
            seed = std::strtoull(argv[i + 1], nullptr, 10);
        else if (flag == "--seconds")
            seconds = std::atof(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }

    // Sorted by name: the same corpus gives the same mutations.
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1], ec))
        if (entry.is_regular_file())
            files.push_back(entry.path());
    if (ec || files.empty()) {
        std::fprintf(stderr, "no seed inputs in %s\n", argv[1]);
        return 2;
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> corpus;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        run(corpus.back());
    }

    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::mt19937_64 rng(seed);
    long done = 0;
    for (; done < runs; ++done) {
        if (done % 64 == 0 && elapsed() > seconds)
            break;
        run(mutate(corpus[size_t(rng() % corpus.size())], corpus, rng));
    }
    std::printf("%zu seed inputs, %ld mutated inputs (seed %llu) in %.2f s%s\n", corpus.size(), done,
                static_cast<unsigned long long>(seed), elapsed(),
                done < runs ? " (stopped by the time limit)" : "");
    return 0;
}
