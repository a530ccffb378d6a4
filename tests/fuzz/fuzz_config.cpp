// libFuzzer target: the config-file reader (`ndr train --config`), on any bytes. It must refuse with a
// std::runtime_error carrying a message (any other exception escapes and is a finding), and a
// configuration it accepts must be valid and read back unchanged from the JSON it writes.
#include "core/config/config.h"
#include "core/io/serialize.h"
#include "fuzz_check.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ndr::RunConfig config;
    if (!acceptsOrRefusesWithMessage<std::runtime_error>("runConfigFromJson", text,
                                                         [&] { config = ndr::runConfigFromJson(text); }))
        return 0;
    const std::vector<ndr::Problem> problems = ndr::validate(config);
    if (!problems.empty())
        fuzzFail("an accepted configuration does not validate: " + problems.front().text(), text);
    const std::string written = nlohmann::json(config).dump();
    ndr::RunConfig back;
    mustAccept<std::runtime_error>("an accepted configuration is refused as written", text,
                                   [&] { back = ndr::runConfigFromJson(written); });
    if (!(back == config))
        fuzzFail("an accepted configuration reads back different: " + written, text);
    return 0;
}
