// The registry of model kinds (docs/design.md §2): one line per kind. Everything else about a kind is
// in its folder under core/models: its configuration, its description (core/config/model_kind.h) and
// its model.
#pragma once

#include "core/models/kind_list.h"

#include "core/models/act/kind.h"
#include "core/models/encoder/kind.h"
#include "core/models/lstm/kind.h"
#include "core/models/thoughtnet/kind.h"

namespace ndr {

// In the order files and the panel list them; a run file names a kind by its description's id.
using ModelKinds = KindList<EncoderKind, LstmKind, ThoughtNetKind, ActKind>;

} // namespace ndr
