// Running other programs: finding them on PATH, capturing their output, quoting for a shell.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ndrcli {

// The program named `name` on PATH, or "".
std::string findOnPath(const std::string& name);
// Runs a command and returns its standard output; nullopt when it cannot run or exits non-zero
// (its standard error is kept in *error).
std::optional<std::string> capture(const std::vector<std::string>& argv, std::string* error = nullptr);
// `s` in single quotes for a POSIX shell.
std::string quoteShell(const std::string& s);
// This executable's path (for child processes and job scripts), "ndr" when it cannot be read.
std::string selfExe();

} // namespace ndrcli
