// One table of fields per configuration struct (docs/design.md §7): each field's file key, the panel's
// label and help, its type, range and choices, and how to get and set it on the struct. Reading and
// writing files, the defaults, the range checks of validation and the experiment panel's editors all
// come from the table, so a field is declared once. Problems found in a configuration are typed: the
// field's path and what is wrong with it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ndr {

// What is wrong with one field of a configuration: its path ("models[1].heads") and why.
struct Problem {
    std::string field;
    std::string message;
    // "models[1].heads: 3 does not divide d_model 128", as messages are shown in text.
    std::string text() const { return field + ": " + message; }
    bool operator==(const Problem&) const = default;
};

// "%g" of a number, as problems quote values.
inline std::string numberText(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

// Collects problems; the checks shared by every kind of field.
class Problems {
public:
    void add(const std::string& field, const std::string& message) { list_.push_back({field, message}); }

    void intRange(const std::string& field, long long v, long long lo, long long hi) {
        if (v < lo || v > hi)
            add(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                           std::to_string(v));
    }
    void atLeast(const std::string& field, long long v, long long lo) {
        if (v < lo)
            add(field, "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
    }
    // Returns false (after reporting) when v is NaN or infinite, so callers skip range checks.
    bool finite(const std::string& field, double v) {
        if (std::isfinite(v))
            return true;
        add(field, "must be a finite number, got " + numberText(v));
        return false;
    }
    // Dropout probabilities: 1 would drop everything.
    void probability(const std::string& field, double v) {
        if (finite(field, v) && (v < 0 || v >= 1))
            add(field, "must be at least 0 and below 1, got " + numberText(v));
    }

    bool empty() const { return list_.empty(); }
    std::vector<Problem> take() { return std::move(list_); }

private:
    std::vector<Problem> list_;
};

// Every problem's text ("models[1].heads: ..."), in order.
inline std::vector<std::string> problemTexts(const std::vector<Problem>& problems) {
    std::vector<std::string> texts;
    for (const Problem& p : problems)
        texts.push_back(p.text());
    return texts;
}

// Every problem's text, one per line.
inline std::string problemsText(const std::vector<Problem>& problems) {
    std::string s;
    for (const Problem& p : problems)
        s += (s.empty() ? "" : "\n") + p.text();
    return s;
}

enum class FieldType { Int, Real, Bool, Choice, Text };

// A field's value as code that does not know the struct sees it: integers, reals, flags, and choices
// by their name in files.
using FieldValue = std::variant<long long, double, bool, std::string>;

struct FieldChoice {
    std::string name;  // in files: "copy-gate"
    std::string label; // in the panel: "copy gate"
};

// How a numeric field is checked: within [min, max] (or [min, max) for probabilities), or by a check
// of its own that returns the problem's message (empty: fine).
enum class FieldRange { Closed, BelowMax, Custom };

template <typename C> struct Field {
    std::string key;   // in files and problem paths
    std::string label; // the panel's row label
    std::string help;  // the panel's tooltip
    FieldType type = FieldType::Int;
    double min = 0, max = 0, step = 1; // Int and Real: range and the panel's step
    FieldRange range = FieldRange::Closed;
    std::string zeroText;             // what the panel shows at the minimum ("off", "same", "run's")
    bool floatStorage = false;        // a Real held as float: written in its shortest decimal form
    std::vector<FieldChoice> choices; // Choice: in the order of the panel's list
    std::function<FieldValue(const C&)> get;
    std::function<void(C&, const FieldValue&)> set;
    std::function<std::string(const C&)> check; // FieldRange::Custom
    std::function<bool(const C&)> applies;      // the panel enables the editor when true (null: always)

    // The field's problem in `c`, if any, at `path` (its own path).
    void validate(const C& c, const std::string& path, Problems& p) const {
        const FieldValue v = get(c);
        if (range == FieldRange::Custom) {
            if (type == FieldType::Real && !p.finite(path, std::get<double>(v)))
                return;
            if (const std::string m = check(c); !m.empty())
                p.add(path, m);
            return;
        }
        if (type == FieldType::Int)
            p.intRange(path, std::get<long long>(v), (long long)min, (long long)max);
        if (type != FieldType::Real)
            return;
        const double x = std::get<double>(v);
        if (!p.finite(path, x))
            return;
        if (range == FieldRange::BelowMax && (x < min || x >= max))
            p.add(path, "must be at least " + numberText(min) + " and below " + numberText(max) + ", got " +
                            numberText(x));
        else if (range == FieldRange::Closed && (x < min || x > max))
            p.add(path, "must be between " + numberText(min) + " and " + numberText(max) + ", got " +
                            numberText(x));
    }
};

template <typename C> using FieldTable = std::vector<Field<C>>;

// --- Builders: a field from a member of C ---

template <typename C, typename M>
Field<C> intField(std::string key, std::string label, std::string help, M C::*member, long long min,
                  long long max, std::string zeroText = {}) {
    Field<C> f;
    f.key = std::move(key), f.label = std::move(label), f.help = std::move(help);
    f.type = FieldType::Int;
    f.min = double(min), f.max = double(max);
    f.zeroText = std::move(zeroText);
    f.get = [member](const C& c) { return FieldValue((long long)(c.*member)); };
    f.set = [member](C& c, const FieldValue& v) { c.*member = M(std::get<long long>(v)); };
    return f;
}

// The attention heads of a model whose state is `width` wide: at least 1, and a divisor of the width
// (the message names it d_model, as the paper does).
template <typename C> Field<C> headsField(std::string help, int C::*heads, int C::*width) {
    Field<C> f = intField<C>("heads", "heads", std::move(help), heads, 1, 64);
    f.range = FieldRange::Custom;
    f.check = [heads, width](const C& c) {
        if (c.*heads < 1)
            return "must be at least 1, got " + std::to_string(c.*heads);
        if (c.*width >= 1 && c.*width % (c.*heads) != 0)
            return std::to_string(c.*heads) + " does not divide d_model " + std::to_string(c.*width);
        return std::string();
    };
    return f;
}

template <typename C, typename M>
Field<C> realField(std::string key, std::string label, std::string help, M C::*member, double min, double max,
                   double step, FieldRange range = FieldRange::Closed, std::string zeroText = {}) {
    Field<C> f;
    f.key = std::move(key), f.label = std::move(label), f.help = std::move(help);
    f.type = FieldType::Real;
    f.min = min, f.max = max, f.step = step;
    f.range = range;
    f.zeroText = std::move(zeroText);
    f.floatStorage = std::is_same_v<M, float>;
    f.get = [member](const C& c) { return FieldValue(double(c.*member)); };
    f.set = [member](C& c, const FieldValue& v) { c.*member = M(std::get<double>(v)); };
    return f;
}

template <typename C>
Field<C> boolField(std::string key, std::string label, std::string help, bool C::*member) {
    Field<C> f;
    f.key = std::move(key), f.label = std::move(label), f.help = std::move(help);
    f.type = FieldType::Bool;
    f.get = [member](const C& c) { return FieldValue(c.*member); };
    f.set = [member](C& c, const FieldValue& v) { c.*member = std::get<bool>(v); };
    return f;
}

template <typename C>
Field<C> textField(std::string key, std::string label, std::string help, std::string C::*member) {
    Field<C> f;
    f.key = std::move(key), f.label = std::move(label), f.help = std::move(help);
    f.type = FieldType::Text;
    f.get = [member](const C& c) { return FieldValue(c.*member); };
    f.set = [member](C& c, const FieldValue& v) { c.*member = std::get<std::string>(v); };
    return f;
}

// A choice among the values of an enum, each with its name in files and its label in the panel.
template <typename E> struct EnumChoice {
    E value;
    const char* name;
    const char* label;
};

template <typename C, typename E>
Field<C> choiceField(std::string key, std::string label, std::string help, E C::*member,
                     std::vector<EnumChoice<E>> values) {
    Field<C> f;
    f.key = std::move(key), f.label = std::move(label), f.help = std::move(help);
    f.type = FieldType::Choice;
    for (const auto& v : values)
        f.choices.push_back({v.name, v.label});
    f.get = [member, values](const C& c) {
        for (const auto& v : values)
            if (v.value == c.*member)
                return FieldValue(std::string(v.name));
        return FieldValue(std::string("invalid(") + std::to_string(int(c.*member)) + ")");
    };
    f.set = [member, values](C& c, const FieldValue& v) {
        for (const auto& e : values)
            if (e.name == std::get<std::string>(v))
                c.*member = e.value;
    };
    return f;
}

// The name a choice field gives `value` in files (for enums that other code writes too).
template <typename E> const char* choiceName(const std::vector<EnumChoice<E>>& values, E value) {
    for (const auto& v : values)
        if (v.value == value)
            return v.name;
    return "invalid";
}

// The field of a table with this key, or null.
template <typename C> const Field<C>* findField(const FieldTable<C>& table, const std::string& key) {
    for (const Field<C>& f : table)
        if (f.key == key)
            return &f;
    return nullptr;
}

// Every field's range checks, at `at` + "." + key.
template <typename C>
void validateFields(const FieldTable<C>& table, const C& c, const std::string& at, Problems& p) {
    for (const Field<C>& f : table)
        f.validate(c, at.empty() ? f.key : at + "." + f.key, p);
}

} // namespace ndr
