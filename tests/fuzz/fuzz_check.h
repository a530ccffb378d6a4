// Shared by the fuzz targets: how a broken property is reported. Aborting is what libFuzzer and the
// smoke driver both recognise as a finding; the message says which property and on what input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

[[noreturn]] inline void fuzzFail(const std::string& what, const std::string& input) {
    std::fprintf(stderr, "FUZZ PROPERTY BROKEN: %s\n  input (%zu bytes): ", what.c_str(), input.size());
    for (size_t i = 0; i < input.size() && i < 300; ++i) {
        const unsigned char c = static_cast<unsigned char>(input[i]);
        if (c >= 32 && c < 127 && c != '\\')
            std::fputc(c, stderr);
        else
            std::fprintf(stderr, "\\x%02x", c);
    }
    std::fprintf(stderr, "%s\n", input.size() > 300 ? "..." : "");
    std::abort();
}

// 64-bit FNV-1a, the checkpoint checksum, so a target can repair it after a mutation.
inline uint64_t fuzzFnv1a(const std::string& bytes, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ull;
    return h;
}
