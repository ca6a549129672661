#include "harness/report/table.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::report {

namespace {

using nlohmann::json;

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string tsv_cell(std::string_view text) {
  std::string out(text);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return out;
}

// Display width of UTF-8 text: code points, not bytes (the tables hold "±" and the like).
std::size_t width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) {
    n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  }
  return n;
}

json cell_json(const std::string& cell, bool numeric) {
  if (cell.empty() || cell == "-") {
    return nullptr;
  }
  if (numeric) {
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (end != nullptr && *end == '\0') {
      const auto as_int = static_cast<long long>(v);
      if (static_cast<double>(as_int) == v && cell.find_first_of(".eE") == std::string::npos) {
        return as_int;
      }
      return v;
    }
  }
  return cell;
}

template <typename Cell>
void write_separated(std::ostream& out, const Table& t, char sep, Cell cell) {
  const auto line = [&](const auto& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out << (i == 0 ? "" : std::string(1, sep)) << cell(cells[i]);
    }
    out << "\n";
  };
  std::vector<std::string> header;
  for (const auto& c : t.columns()) {
    header.push_back(c.name);
  }
  line(header);
  for (const auto& row : t.rows()) {
    line(row);
  }
}

}  // namespace

std::string csv_cell(std::string_view text) {
  const bool quote = text.find_first_of(",\"\n\r") != std::string_view::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) {
    return std::string(text);
  }
  std::string out = "\"";
  for (const char c : text) {
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return out + "\"";
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void Table::write_markdown(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& c : columns_) {
    widths.push_back(std::max<std::size_t>(3, width(markdown_cell(c.name))));
  }
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], width(markdown_cell(row[i])));
    }
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string text = markdown_cell(cells[i]);
      const std::string pad(widths[i] - width(text), ' ');
      out << " " << (columns_[i].numeric ? pad + text : text + pad) << " |";
    }
    out << "\n";
  };
  std::vector<std::string> header;
  for (const auto& c : columns_) {
    header.push_back(c.name);
  }
  line(header);
  out << "|";
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    out << (columns_[i].numeric ? std::string(widths[i] + 1, '-') + ":|"
                                : std::string(widths[i] + 2, '-') + "|");
  }
  out << "\n";
  for (const auto& row : rows_) {
    line(row);
  }
}

void Table::write_csv(std::ostream& out) const {
  write_separated(out, *this, ',', [](const std::string& c) { return csv_cell(c); });
}

void Table::write_tsv(std::ostream& out) const {
  write_separated(out, *this, '\t', [](const std::string& c) { return tsv_cell(c); });
}

json Table::to_json() const {
  json out = json::array();
  for (const auto& row : rows_) {
    json o = json::object();
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      o[columns_[i].name] = cell_json(row[i], columns_[i].numeric);
    }
    out.push_back(std::move(o));
  }
  return out;
}

void Table::write_jsonl(std::ostream& out) const {
  for (const auto& o : to_json()) {
    out << o.dump() << "\n";
  }
}

const std::vector<std::string>& Table::formats() {
  static const std::vector<std::string> kFormats{"md", "csv", "tsv", "json", "jsonl"};
  return kFormats;
}

void Table::write(std::ostream& out, std::string_view format) const {
  if (format == "md") {
    write_markdown(out);
  } else if (format == "csv") {
    write_csv(out);
  } else if (format == "tsv") {
    write_tsv(out);
  } else if (format == "json") {
    out << to_json().dump(2) << "\n";
  } else if (format == "jsonl") {
    write_jsonl(out);
  } else {
    throw Error(fmt::format("a table has no format '{}'", format));
  }
}

}  // namespace kvbench::report
