// A fixed batch through every model of a run, forward and backward, written down for checking another
// implementation of the models against the engine: the PyTorch twin (python/ndr_torch.py,
// tests/python/test_twin.py) reads it (docs/design.md §7).
#pragma once

#include "core/io/safetensors.h"
#include "core/train/run.h"

#include <cstdint>

namespace ndr {

// `perDepth` examples of every depth of the run's task, drawn by the task's generator from `seed`, as
// one padded batch, and for each model (tensor names prefixed with its checkpoint stem and '/') one
// training step's forward and backward on it with every dropout off: the logits, the loss and its
// parts, and the gradient of every parameter under its own name. Tensors (all F32):
//   tokens (B, T), lengths (B), targets (B*R)        the batch, token ids padded with the task's [PAD]
//   <stem>/logits (B*R, S)                           the readout's logits, example-major
//   <stem>/loss (4)                                  total, cross-entropy, routing entropy, thought cost
//                                                    (the two last before their coefficients)
//   <stem>/steps (1)                                 the steps the forward ran (the model's training steps)
//   <stem>/grad/<tensor>                             d total / d tensor, shaped as the weights file's
// The run's models are left as they were.
SafetensorsFile referenceBatch(const Run& run, int perDepth, uint64_t seed);

} // namespace ndr
