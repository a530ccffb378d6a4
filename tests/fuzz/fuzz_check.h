// Shared by the fuzz targets: how a broken property is reported, and the properties every loader has
// (a refusal carries a message; what was accepted loads again). Aborting is what libFuzzer and the
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

// The refusal property of every loader target: `load` accepts its input, or throws an Error whose
// message is not empty (any other exception escapes and is a finding). Returns whether it accepted.
template <typename Error, typename Load>
bool acceptsOrRefusesWithMessage(const std::string& loader, const std::string& input, Load&& load) {
    try {
        load();
    } catch (const Error& e) {
        if (std::string(e.what()).empty())
            fuzzFail(loader + ": refusal without a message", input);
        return false;
    }
    return true;
}

// `load` must accept: a refusal (an Error) is a finding, reported as `what` and the refusal's message.
template <typename Error, typename Load>
void mustAccept(const std::string& what, const std::string& input, Load&& load) {
    try {
        load();
    } catch (const Error& e) {
        fuzzFail(what + ": " + e.what(), input);
    }
}

// 64-bit FNV-1a, the checkpoint checksum, so a target can repair it after a mutation.
inline uint64_t fuzzFnv1a(const std::string& bytes, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ull;
    return h;
}
