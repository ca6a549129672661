#pragma once
// A record described once. Each field says where the record's JSON holds it (a dotted path), which
// member it is, and what it adds: a column of the CSV and SQL tables, a bound or a list of values
// in the JSON Schema, how an empty value is written. From that one list a record is written to
// JSON, read back, laid out in columns and its schema generated, so a new field is one line:
//
//   of<CallRecord>("client.ttft_ms", &CallRecord::client, &ClientTiming::ttft_ms)
//       .column("ttft_ms", "ms").min(0),

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::describe {

// A column's value: absent, an integer, a real number or text.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
enum class Type { integer, real, text };

// What a field is, apart from the record it belongs to.
struct FieldInfo {
  std::string path;  // in the JSON: "client.ttft_ms"
  nlohmann::json schema = nlohmann::json::object();
  bool required = false;  // the schema requires it (in its object)
  // Its column (the calls CSV, the history's SQL); empty name: none.
  std::string column_name;
  std::string unit;  // "ms", "tokens", ...
  Type type = Type::text;
  bool nullable = false;  // the column may be empty (NULL)
  // The CSV shows the column only in runs where a call has a value (a setting few runs vary).
  bool where_given = false;
};

// How an empty value (text "", a number 0, false) is written.
enum class Empty { written, omitted, null };

// How a field writes its value.
struct Options {
  Empty empty = Empty::written;
  bool on_off = false;  // a bool written as "on" / "off"
};

template <typename S>
struct Field : FieldInfo {
  std::function<void(const S&, nlohmann::json&, Options)> put;
  std::function<void(const nlohmann::json&, S&, Options)> take;
  std::function<Value(const S&, Options)> value;
  std::function<bool(const S&)> present;  // empty: always written
  Options options;
  bool needed = false;  // reading fails without it

  Field& column(std::string_view name, std::string_view u = "") {
    column_name = name;
    unit = u;
    return *this;
  }
  Field& min(double v) { return bound("minimum", v); }
  Field& above(double v) { return bound("exclusiveMinimum", v); }
  Field& one_of(nlohmann::json values) {
    schema = {{"enum", std::move(values)}};
    return *this;
  }
  Field& require() {
    required = true;
    return *this;
  }
  Field& must() {
    needed = true;
    return *this;
  }
  Field& only_where_given() {
    where_given = true;
    return *this;
  }
  // Written only where `when` holds (a pair's fields, only on a pair's reads).
  Field& only_if(bool (*when)(const S&)) {
    present = when;
    return *this;
  }
  // Empty, it is left out; or written as null, and its column is empty.
  Field& omit_empty() {
    options.empty = Empty::omitted;
    return *this;
  }
  Field& null_empty() {
    options.empty = Empty::null;
    nullable = true;
    if (schema.contains("enum")) {
      schema["enum"].push_back(nullptr);
    } else {
      schema["type"] = {schema.value("type", "string"), "null"};
    }
    return *this;
  }
  Field& on_off() {
    options.on_off = true;
    type = Type::text;
    schema = {{"enum", {"on", "off"}}};
    return *this;
  }

  void write(const S& s, nlohmann::json& root) const {
    if (!present || present(s)) {
      put(s, root, options);
    }
  }
  void read(const nlohmann::json& root, S& s) const { take(root, s, options); }
  Value get(const S& s) const { return value(s, options); }

 private:
  Field& bound(const char* key, double v) {
    if (v == static_cast<double>(static_cast<long long>(v))) {
      schema[key] = static_cast<long long>(v);
    } else {
      schema[key] = v;
    }
    return *this;
  }
};

namespace detail {

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {
  using type = T;
};

nlohmann::json::json_pointer pointer(const std::string& path);
std::string joined(const std::vector<std::string>& items);

// The JSON Schema of a value of type T (optional's: its value's).
template <typename T>
nlohmann::json schema_of() {
  if constexpr (is_optional<T>::value) {
    return schema_of<typename is_optional<T>::type>();
  } else if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return {{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    return {{"type", "array"}, {"items", {{"type", "number"}}}};
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return {{"type", "array"}, {"items", {{"type", "string"}}}};
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return {{"type", "object"}};
  } else if constexpr (std::is_enum_v<T>) {
    return nlohmann::json::object();  // the field names its values (one_of)
  } else {
    return {{"type", "string"}};
  }
}

template <typename T>
Type column_type() {
  if constexpr (is_optional<T>::value) {
    return column_type<typename is_optional<T>::type>();
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return Type::integer;
  } else if constexpr (std::is_floating_point_v<T>) {
    return Type::real;
  } else {
    return Type::text;
  }
}

template <typename T>
bool is_empty(const T& v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return v == T{};
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v.empty();
  } else {
    return false;
  }
}

template <typename T>
nlohmann::json encode(const T& v, bool on_off) {
  if constexpr (std::is_same_v<T, bool>) {
    if (on_off) {
      return v ? "on" : "off";
    }
  }
  return nlohmann::json(v);
}

template <typename T>
T decode(const nlohmann::json& j, bool on_off) {
  if constexpr (std::is_same_v<T, bool>) {
    if (on_off) {
      return j.get<std::string>() != "off";
    }
  }
  return j.get<T>();
}

template <typename T>
Value column_value(const T& v, bool on_off) {
  if constexpr (is_optional<T>::value) {
    return v ? column_value(*v, on_off) : Value{};
  } else if constexpr (std::is_same_v<T, bool>) {
    return std::string(v ? (on_off ? "on" : "true") : (on_off ? "off" : "false"));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return joined(v);
  } else if constexpr (std::is_enum_v<T>) {
    return std::string(to_string(v));
  } else {
    return Value{};  // lists of numbers and objects have no column
  }
}

}  // namespace detail

// The field at `path` of the member reached from S through `members` (one, or a chain into a
// nested struct: &CallRecord::client, &ClientTiming::ttft_ms).
template <typename S, typename... M>
Field<S> of(std::string path, M... members) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype((std::declval<S&>().*....*members))>>;
  Field<S> f;
  f.path = std::move(path);
  f.schema = detail::schema_of<T>();
  f.type = detail::column_type<T>();
  f.nullable = detail::is_optional<T>::value;
  const auto at = detail::pointer(f.path);
  f.put = [=](const S& s, nlohmann::json& root, Options o) {
    const T& v = (s.*....*members);
    bool blank = false;
    if constexpr (detail::is_optional<T>::value) {
      blank = !v.has_value();
      if (!blank) {
        root[at] = detail::encode(*v, o.on_off);
        return;
      }
    } else {
      blank = o.empty != Empty::written && detail::is_empty(v);
      if (!blank) {
        root[at] = detail::encode(v, o.on_off);
        return;
      }
    }
    if (o.empty == Empty::null) {
      root[at] = nullptr;
    }
  };
  f.take = [=](const nlohmann::json& root, S& s, Options o) {
    if (!root.contains(at)) {
      return;
    }
    const nlohmann::json& x = root.at(at);
    T& v = (s.*....*members);
    if (x.is_null()) {
      v = T{};
    } else if constexpr (detail::is_optional<T>::value) {
      v = x.get<typename detail::is_optional<T>::type>();
    } else {
      v = detail::decode<T>(x, o.on_off);
    }
  };
  f.value = [=](const S& s, Options o) {
    const T& v = (s.*....*members);
    if (o.empty == Empty::null && detail::is_empty(v)) {
      return Value{};
    }
    return detail::column_value(v, o.on_off);
  };
  return f;
}

// An object in the record's JSON that its fields fill ("client"): for its schema (required).
template <typename S>
Field<S> group(std::string path) {
  Field<S> f;
  f.path = std::move(path);
  f.schema = {{"type", "object"}};
  f.put = [](const S&, nlohmann::json&, Options) {};
  f.take = [](const nlohmann::json&, S&, Options) {};
  f.value = [](const S&, Options) { return Value{}; };
  return f;
}

template <typename S>
nlohmann::json to_json(const std::vector<Field<S>>& fields, const S& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : fields) {
    f.write(s, j);
  }
  return j;
}

// Reads every field `j` holds into `s` (a field `j` lacks keeps its default). Throws
// nlohmann::json's errors for a value of another type or a missing needed field.
template <typename S>
void from_json(const std::vector<Field<S>>& fields, const nlohmann::json& j, S& s) {
  for (const auto& f : fields) {
    if (f.needed) {
      static_cast<void>(j.at(detail::pointer(f.path)));
    }
    f.read(j, s);
  }
}

// The JSON Schema of an object whose fields are `fields` (their paths relative to it).
nlohmann::json schema(const std::vector<const FieldInfo*>& fields);

template <typename S>
nlohmann::json schema(const std::vector<Field<S>>& fields) {
  std::vector<const FieldInfo*> infos;
  for (const auto& f : fields) {
    infos.push_back(&f);
  }
  return schema(infos);
}

}  // namespace kvbench::describe
