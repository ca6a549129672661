#pragma once
// One table, many formats: the same rows rendered as an aligned Markdown table (`|` in a cell
// escaped), CSV (RFC 4180: a cell with a comma, quote, line break or edge space is quoted, its
// quotes doubled), TSV (tabs and line breaks in a cell become spaces), JSON (an array of objects,
// one per row) and JSON Lines (one object per line). In JSON a numeric column's cells are numbers,
// and an empty or "-" cell is null. Pure.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::report {

class Table {
 public:
  struct Column {
    std::string name;
    bool numeric = false;  // right-aligned; a number in JSON
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // A row of cells, one per column (a short row is padded with empty cells).
  void add_row(std::vector<std::string> cells);

  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  void write_markdown(std::ostream& out) const;
  void write_csv(std::ostream& out) const;
  void write_tsv(std::ostream& out) const;
  nlohmann::json to_json() const;
  void write_jsonl(std::ostream& out) const;
  // "md", "csv", "tsv", "json" or "jsonl"; throws kvbench::Error for another name.
  void write(std::ostream& out, std::string_view format) const;

  // The formats write() takes.
  static const std::vector<std::string>& formats();

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// A CSV cell as RFC 4180 writes it.
std::string csv_cell(std::string_view text);

}  // namespace kvbench::report
