// Central-difference gradient checks in double precision and the small models and batches they run on,
// shared by the layer, whole-model and head-routing gradient tests.
#pragma once

#include "core/models/encoder/encoder.h"
#include "testutil.h"

#include <functional>
#include <random>

namespace ndrtest {

using namespace ndr;
using Md = Mat<double>;

inline constexpr double kStep = 1e-6, kAtol = 1e-7, kRtol = 1e-5;

inline Md randomMat(Index r, Index c, std::mt19937_64& rng, double scale = 1.0) {
    std::normal_distribution<double> n(0.0, scale);
    Md m(r, c);
    for (Index i = 0; i < m.size(); ++i)
        m.data()[i] = n(rng);
    return m;
}

// Central differences of `loss` with respect to sampled entries of `values` (at most `perTensor` per
// tensor of `layout`, all of them when fewer), compared with `analytic`.
template <typename Values, typename Grads>
void checkParams(const std::string& label, Values& values, const Grads& analytic,
                 const std::vector<TensorInfo>& layout, const std::function<double()>& loss, int perTensor,
                 std::mt19937_64& rng) {
    size_t offset = 0;
    std::vector<double> got, want;
    std::vector<std::string> names;
    for (const auto& t : layout) {
        const size_t n = size_t(t.rows) * t.cols;
        std::vector<size_t> picks;
        if (n <= size_t(perTensor)) {
            for (size_t i = 0; i < n; ++i)
                picks.push_back(offset + i);
        } else {
            std::uniform_int_distribution<size_t> u(0, n - 1);
            for (int i = 0; i < perTensor; ++i)
                picks.push_back(offset + u(rng));
        }
        for (size_t k : picks) {
            const double keep = values[k];
            values[k] = keep + kStep;
            const double lp = loss();
            values[k] = keep - kStep;
            const double lm = loss();
            values[k] = keep;
            got.push_back(analytic[k]);
            want.push_back((lp - lm) / (2 * kStep));
        }
        std::string report;
        if (!allClose(label + " d/d " + t.name, got.data(), want.data(), got.size(), kAtol, kRtol, &report))
            QFAIL(report.c_str());
        got.clear();
        want.clear();
        offset += n;
    }
}

inline void checkInput(const std::string& label, Md& x, const Md& analytic,
                       const std::function<double()>& loss) {
    Md fd(x.rows(), x.cols());
    for (Index i = 0; i < x.size(); ++i) {
        const double keep = x.data()[i];
        x.data()[i] = keep + kStep;
        const double lp = loss();
        x.data()[i] = keep - kStep;
        const double lm = loss();
        x.data()[i] = keep;
        fd.data()[i] = (lp - lm) / (2 * kStep);
    }
    NDR_EXPECT_CLOSE(label + " d/d input", analytic.data(), fd.data(), size_t(x.size()), kAtol, kRtol);
}

inline ModelConfig smallModel(AttentionKind att, UpdateKind upd, PositionalKind pos, bool shared,
                              GeomNorm norm) {
    ModelConfig m;
    m.as<ndr::EncoderConfig>().attention = att;
    m.as<ndr::EncoderConfig>().update = upd;
    m.as<ndr::EncoderConfig>().positional = pos;
    m.as<ndr::EncoderConfig>().sharedWeights = shared;
    m.as<ndr::EncoderConfig>().geomNorm = norm;
    m.as<ndr::EncoderConfig>().dModel = 8;
    m.as<ndr::EncoderConfig>().heads = 2;
    m.as<ndr::EncoderConfig>().dFF = 12;
    m.as<ndr::EncoderConfig>().steps = 3;
    m.as<ndr::EncoderConfig>().dropout = 0.2f;
    m.as<ndr::EncoderConfig>().attentionDropout = 0.15f;
    m.as<ndr::EncoderConfig>().gateDropout = copyGated(upd) ? 0.25f : 0.f;
    m.as<ndr::EncoderConfig>().gateBiasInit = 0.5f; // gates half open so both branches carry gradient
    return m;
}

inline ModelConfig modelVariant(int variant) {
    switch (variant) {
    case 0:
        return smallModel(AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None, true,
                          GeomNorm::Off);
    case 1:
        return smallModel(AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Sinusoidal, true,
                          GeomNorm::Off);
    case 2:
        return smallModel(AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None, true,
                          GeomNorm::L1);
    case 3:
        return smallModel(AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None, false,
                          GeomNorm::Off);
    case 4:
        return smallModel(AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Sinusoidal, false,
                          GeomNorm::Off);
    case 5: // + rel
        return smallModel(AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Relative, true,
                          GeomNorm::Off);
    case 6: // + rel + gate
        return smallModel(AttentionKind::Softmax, UpdateKind::CopyGateTanh, PositionalKind::Relative, true,
                          GeomNorm::Off);
    case 7: // + abs/rel + gate
        return smallModel(AttentionKind::Softmax, UpdateKind::CopyGateTanh, PositionalKind::AbsRel, true,
                          GeomNorm::Off);
    case 8: // + abs/rel + gate with separate layers
        return smallModel(AttentionKind::Softmax, UpdateKind::CopyGateTanh, PositionalKind::AbsRel, false,
                          GeomNorm::Off);
    default: { // NDR reading its answer at [B]
        ModelConfig m = smallModel(AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None, true,
                                   GeomNorm::Off);
        m.as<ndr::EncoderConfig>().readout = ReadoutColumn::First;
        return m;
    }
    }
}

// Three examples of lengths 5, 4 and 3 (vocabulary 7, 3 symbols), padded to 5.
inline Batch smallBatch() {
    Batch batch;
    batch.batch = 3;
    batch.positions = 5;
    batch.tokens = {4, 0, 3, 3, 5, /**/ 4, 1, 2, 5, 6, /**/ 4, 2, 5, 6, 6};
    batch.lengths = {5, 4, 3};
    batch.targets = {2, 0, 1};
    batch.depths = {2, 1, 0};
    return batch;
}

// Two examples of lengths 6 and 4 in a batch padded to 6 (12 rows), and the same packed (10 rows).
inline const int kLengths[2] = {6, 4};
inline const int kStarts[3] = {0, 6, 10};
inline const BatchShape kShape{2, 6, kLengths};
inline const BatchShape kPackedShape{2, 6, kLengths, kStarts};

} // namespace ndrtest
