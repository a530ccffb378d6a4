// The LSTM baseline's configuration (docs/design.md §2): one layer over the tokens without [B] and
// [E], with dropout on its token embeddings.
#pragma once

namespace ndr {

struct LstmConfig {
    int hidden = 200, embedding = 16;
    float dropout = 0.5f; // on the token embeddings
    bool operator==(const LstmConfig&) const = default;
};

} // namespace ndr
