// Small pieces every task's reading of typed text uses: whitespace, quoting user text in a message,
// the names of the special tokens, and recording a parse error at a token.
#pragma once

#include <string>

namespace ndr {

inline bool isAsciiSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Quotes user text for a message, cut at a UTF-8 boundary so a pasted paragraph stays readable.
inline std::string quoted(const std::string& token) {
    constexpr size_t kMax = 32;
    size_t cut = token.size();
    if (cut > kMax) {
        cut = kMax;
        while (cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xC0) == 0x80)
            --cut;
    }
    return "'" + token.substr(0, cut) + (cut < token.size() ? "...'" : "'");
}

// "[B]", "[E]" or "[PAD]" for the three tokens after a task's own (begin, begin+1, begin+2); empty for
// any other token.
inline std::string specialTokenName(int token, int begin) {
    if (token == begin)
        return "[B]";
    if (token == begin + 1)
        return "[E]";
    if (token == begin + 2)
        return "[PAD]";
    return {};
}

} // namespace ndr
