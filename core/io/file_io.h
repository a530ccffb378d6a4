// Low-level file helpers shared by the run-record and checkpoint code (core/files.cpp,
// core/checkpoint.cpp): not part of the core's interface.
#pragma once

#include "core/io/files.h"

#include <cstdint>
#include <filesystem>
#include <new>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace ndr::fileio {

// 'path', for messages.
std::string quote(const std::filesystem::path& p);
// "512 MB", "3.2 GB": sizes as a user reads them (binary units, like file managers).
std::string humanSize(uint64_t bytes);

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    // Gives up ownership without closing.
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    // Closes now and reports the error: on some filesystems a failed write only shows here.
    int close() {
        const int rc = ::close(fd_);
        fd_ = -1;
        return rc;
    }

private:
    int fd_;
};

// Writes all n bytes; false on error (errno set).
bool writeAll(int fd, const char* data, size_t n);
// Reads up to n bytes; fewer only at end of file. -1 on error (errno set).
ssize_t readUpTo(int fd, char* data, size_t n);
// Opens `path` for reading and fills `st`; FileError (without the path) when it cannot be opened or
// is a folder. Returns the descriptor for the caller's Fd.
int openForReading(const std::filesystem::path& path, struct stat& st);

// Runs `load`, turning any failure into a FileError whose message starts with `prefix`.
template <typename Load> auto asFileError(const std::string& prefix, Load&& load) -> decltype(load()) {
    try {
        return load();
    } catch (const std::bad_alloc&) {
        throw FileError(prefix + "not enough memory");
    } catch (const std::exception& e) {
        throw FileError(prefix + e.what());
    }
}

} // namespace ndr::fileio
