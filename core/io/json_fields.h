// Internal to core/: the strict JSON reading helpers shared by serialize.cpp (configurations) and
// serialize_records.cpp (run records). Every error names the field's path.
#pragma once

#include "core/config/task_kinds.h"
#include "core/io/serialize.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ndr::jsonio {

using nlohmann::json;

// Bounds on trace dimensions, checked before any size is computed from them: a damaged file must not
// be able to ask for an absurd allocation or overflow a product.
constexpr int kMaxTracePositions = 4096;
constexpr int kMaxTraceSteps = 1024;
constexpr int kMaxTraceHeads = 256;
constexpr int kMaxTraceSymbols = 64;

// --- Paths and errors ---

inline std::string field(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}
inline std::string item(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path.empty() ? what : path + ": " + what);
}

// nlohmann's message without its internal id ("[json.exception.parse_error.101] ").
inline std::string jsonMessage(const json::exception& e) {
    std::string what = e.what();
    if (const size_t cut = what.find("] "); what.rfind("[json.exception", 0) == 0 && cut != std::string::npos)
        what.erase(0, cut + 2);
    return what;
}

// JSON text is checked before it is parsed: in memory a parsed value takes 16 bytes or more however
// short its text, and each level of nesting a heap allocation, so 16 MB of '[' took 1.2 GB and 12 s
// to refuse. No file NDR Studio writes nests deeper than 8.
constexpr size_t kMaxJsonDepth = 64;

// One past the closing quote of the JSON string whose opening quote is at `i` (escapes skipped), or
// the text's end when it is not closed.
inline size_t stringEnd(std::string_view text, size_t i) {
    for (++i; i < text.size(); ++i) {
        if (text[i] == '\\')
            ++i;
        else if (text[i] == '"')
            return i + 1;
    }
    return text.size();
}

// Refuses JSON text nested deeper than kMaxJsonDepth or holding more than maxValues values (counted
// as commas and openings outside strings, an upper bound), in one pass and without allocating.
inline void checkJsonSize(std::string_view text, size_t maxValues) {
    size_t depth = 0, deepest = 0, values = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            i = stringEnd(text, i) - 1;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            ++values;
        } else if (c == ']' || c == '}') {
            depth -= depth > 0;
        } else if (c == ',') {
            ++values;
        }
    }
    if (deepest > kMaxJsonDepth)
        throw std::runtime_error("JSON nested " + std::to_string(deepest) + " levels deep; at most " +
                                 std::to_string(kMaxJsonDepth) + " levels are read");
    if (values > maxValues)
        throw std::runtime_error("JSON of about " + std::to_string(values) + " values; at most " +
                                 std::to_string(maxValues) + " are read");
}

// Numbers are shown by value ("got 2.5"), anything else by its JSON type ("got string").
inline std::string describe(const json& v) {
    if (v.is_number())
        return v.dump();
    return v.type_name();
}

inline void expectObject(const json& j, const std::string& path) {
    if (!j.is_object())
        fail(path, "expected an object, got " + describe(j));
}
inline void expectArray(const json& j, const std::string& path) {
    if (!j.is_array())
        fail(path, "expected an array, got " + describe(j));
}

inline const json* find(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

inline const json& require(const json& obj, const char* key, const std::string& path) {
    const json* v = find(obj, key);
    if (!v)
        fail(field(path, key), "missing");
    return *v;
}

// --- Scalars ---

// Integral-valued floats (1e4) are accepted: JSON does not distinguish them and people write them.
inline int64_t toInt64(const json& v, const std::string& path) {
    if (v.is_number_integer() && !v.is_number_unsigned())
        return v.get<int64_t>();
    if (v.is_number_unsigned()) {
        if (v.get<uint64_t>() > uint64_t(INT64_MAX))
            fail(path,
                 "expected an integer of at most " + std::to_string(INT64_MAX) + ", got " + describe(v));
        return int64_t(v.get<uint64_t>());
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.2e18)
            return int64_t(d);
    }
    fail(path, "expected an integer, got " + describe(v));
}

inline int toInt(const json& v, const std::string& path) {
    const int64_t x = toInt64(v, path);
    if (x < INT_MIN || x > INT_MAX)
        fail(path, "expected an integer between " + std::to_string(INT_MIN) + " and " +
                       std::to_string(INT_MAX) + ", got " + describe(v));
    return int(x);
}

inline int toIntIn(const json& v, const std::string& path, int lo, int hi) {
    const int x = toInt(v, path);
    if (x < lo || x > hi)
        fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                       std::to_string(x));
    return x;
}

inline uint64_t toUint64(const json& v, const std::string& path) {
    if (v.is_number_unsigned())
        return v.get<uint64_t>();
    if ((v.is_number_integer() && v.get<int64_t>() < 0) || (v.is_number_float() && v.get<double>() < 0))
        fail(path, "expected a non-negative integer, got " + describe(v));
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && d < 1.8e19)
            return uint64_t(d);
    }
    fail(path, "expected a non-negative integer, got " + describe(v));
}

// null stands for NaN where a value may be undefined (the accuracy of an empty split); JSON has no NaN.
inline double toDouble(const json& v, const std::string& path, bool nullIsNaN) {
    if (v.is_number())
        return v.get<double>();
    if (v.is_null() && nullIsNaN)
        return std::numeric_limits<double>::quiet_NaN();
    fail(path, "expected a number, got " + describe(v));
}

inline float toFloat(const json& v, const std::string& path, bool nullIsNaN) {
    return float(toDouble(v, path, nullIsNaN));
}

inline bool toBool(const json& v, const std::string& path) {
    if (!v.is_boolean())
        fail(path, "expected true or false, got " + describe(v));
    return v.get<bool>();
}

inline std::string toString(const json& v, const std::string& path) {
    if (!v.is_string())
        fail(path, "expected a string, got " + describe(v));
    return v.get<std::string>();
}

// A float written through its shortest decimal form ("0.1", not "0.10000000149011612"), which reads
// back to the same float.
inline json floatJson(float f) {
    if (!std::isfinite(f))
        return nullptr;
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, f).ptr;
    double d = 0;
    std::from_chars(buf, end, d);
    return d;
}

inline json doubleJson(double d) {
    if (!std::isfinite(d))
        return nullptr;
    return d;
}

template <typename T, typename Convert>
inline std::vector<T> toArray(const json& v, const std::string& path, Convert convert) {
    expectArray(v, path);
    std::vector<T> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        out.push_back(convert(v[i], item(path, i)));
    return out;
}

inline json floatArrayJson(const std::vector<float>& xs) {
    json a = json::array();
    for (float x : xs)
        a.push_back(floatJson(x));
    return a;
}

inline json doubleArrayJson(const std::vector<double>& xs) {
    json a = json::array();
    for (double x : xs)
        a.push_back(doubleJson(x));
    return a;
}

// --- Enums as strings ---

template <typename E> struct EnumName {
    E value;
    const char* name;
};

constexpr EnumName<Order> kOrders[] = {{Order::Forward, "forward"}, {Order::Backward, "backward"}};
constexpr EnumName<GateMeaning> kGateMeanings[] = {{GateMeaning::CopyGate, "copy-gate"},
                                                   {GateMeaning::OperatorWeight, "operator-weight"},
                                                   {GateMeaning::HaltingWeight, "halting-weight"}};
// The task kinds by their names in files, from the one list of task kinds (core/config/task_kinds.h).
inline const std::vector<EnumName<TaskKind>>& taskKindNames() {
    static const std::vector<EnumName<TaskKind>> names = [] {
        std::vector<EnumName<TaskKind>> out;
        for (const TaskKindFacts& f : taskKinds())
            out.push_back({f.kind, f.name});
        return out;
    }();
    return names;
}

// `Names`: an array or vector of EnumName.
template <typename E, typename Names> std::string enumName(E value, const Names& names) {
    for (const auto& n : names)
        if (n.value == value)
            return n.name;
    return "invalid(" + std::to_string(int(value)) + ")";
}

template <typename Names>
inline auto toEnum(const json& v, const std::string& path, const Names& names)
    -> decltype(std::begin(names)->value) {
    const size_t N = std::size(names);
    std::string expected;
    for (size_t i = 0; i < N; ++i)
        expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i].name;
    if (!v.is_string())
        fail(path, "expected one of " + expected + ", got " + describe(v));
    const std::string s = v.get<std::string>();
    for (const auto& n : names)
        if (s == n.name)
            return n.value;
    fail(path, "unknown value '" + s + "'; expected " + expected);
}

// The fields of one object. With required = false (overrides of a preset) absent fields keep their
// current value; present ones are always checked.
class Fields {
public:
    Fields(const json& j, std::string path, bool required)
        : j_(j), path_(std::move(path)), required_(required) {
        expectObject(j_, path_);
    }

    std::string path(const char* key) const { return field(path_, key); }
    const json* get(const char* key) const {
        const json* v = find(j_, key);
        if (!v && required_)
            fail(path(key), "missing");
        return v;
    }

    void read(const char* key, int& out) const {
        if (const json* v = get(key))
            out = toInt(*v, path(key));
    }
    void read(const char* key, int64_t& out) const {
        if (const json* v = get(key))
            out = toInt64(*v, path(key));
    }
    void read(const char* key, uint64_t& out) const {
        if (const json* v = get(key))
            out = toUint64(*v, path(key));
    }
    void read(const char* key, double& out, bool nullIsNaN = false) const {
        if (const json* v = get(key))
            out = toDouble(*v, path(key), nullIsNaN);
    }
    void read(const char* key, float& out) const {
        if (const json* v = get(key))
            out = toFloat(*v, path(key), false);
    }
    void read(const char* key, bool& out) const {
        if (const json* v = get(key))
            out = toBool(*v, path(key));
    }
    void read(const char* key, std::string& out) const {
        if (const json* v = get(key))
            out = toString(*v, path(key));
    }
    template <typename E, typename Names> void readEnum(const char* key, E& out, const Names& names) const {
        if (const json* v = get(key))
            out = toEnum(*v, path(key), names);
    }

    // A field a configuration may leave out: absent, `out` keeps its value (the default).
    template <typename T, typename... Options>
    void readOptional(const char* key, T& out, Options... options) const {
        if (find(j_, key))
            read(key, out, options...);
    }
    template <typename E, typename Names>
    void readEnumOptional(const char* key, E& out, const Names& names) const {
        if (find(j_, key))
            readEnum(key, out, names);
    }

private:
    const json& j_;
    std::string path_;
    bool required_;
};

// Readers of the configuration sections (serialize.cpp), also used for the config inside a run record.
void readTask(const json& j, TaskConfig& c, const std::string& path, bool required);
void readModel(const json& j, ModelConfig& c, const std::string& path, bool required);
void readTrain(const json& j, TrainConfig& c, const std::string& path, bool required);
std::vector<ModelConfig> readModels(const json& j, const std::string& path);
void readRunConfig(const json& j, RunConfig& c, const std::string& path);

} // namespace ndr::jsonio
