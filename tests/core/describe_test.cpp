// A record described once (core/describe.h): what its description writes, reads back, gives as
// columns and as a JSON Schema.

#include "harness/core/describe.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvbench::describe {
namespace {

using nlohmann::json;

struct Inner {
  std::optional<double> ms;
  int count = 0;
};

struct Row {
  int seq = 0;
  std::string label;
  std::string note;
  std::string loss;
  bool reuse = true;
  std::optional<int> pair;
  int paired = 0;
  std::vector<std::string> flags;
  Inner inner;
};

bool paired(const Row& r) {
  return r.pair.has_value();
}

const std::vector<Field<Row>>& fields() {
  static const std::vector<Field<Row>> kFields = {
      of<Row>("seq", &Row::seq).column("seq").min(0).require().must(),
      of<Row>("label", &Row::label).column("label").omit_empty(),
      of<Row>("note", &Row::note),
      of<Row>("loss", &Row::loss).column("loss").one_of({"capacity"}).null_empty(),
      of<Row>("reuse", &Row::reuse).column("reuse").on_off(),
      of<Row>("pair.id", &Row::pair).only_if(paired),
      of<Row>("pair.n", &Row::paired).only_if(paired),
      of<Row>("flags", &Row::flags).column("flags"),
      group<Row>("inner").require(),
      of<Row>("inner.ms", &Row::inner, &Inner::ms).column("ms", "ms").min(0),
      of<Row>("inner.count", &Row::inner, &Inner::count).column("count"),
  };
  return kFields;
}

TEST(Describe, WritesEachFieldAtItsPathAsItsOptionsSay) {
  Row r;
  r.seq = 3;
  r.inner.ms = 1.5;
  const json j = to_json(fields(), r);
  EXPECT_EQ(j, json::parse(R"({"seq": 3, "note": "", "loss": null, "reuse": "on", "flags": [],
                              "inner": {"ms": 1.5, "count": 0}})"))
      << "an empty label is left out, an empty loss is null, no pair without its id";
  r.label = "a";
  r.loss = "capacity";
  r.reuse = false;
  r.pair = 7;
  r.flags = {"x", "y"};
  const json k = to_json(fields(), r);
  EXPECT_EQ(k["label"], "a");
  EXPECT_EQ(k["reuse"], "off");
  EXPECT_EQ(k["pair"], json::parse(R"({"id": 7, "n": 0})"));
  Row back;
  from_json(fields(), k, back);
  EXPECT_EQ(to_json(fields(), back), k);
}

TEST(Describe, ReadsWhatIsThereAndKeepsDefaultsForTheRest) {
  Row r;
  r.label = "kept";
  from_json(fields(), json::parse(R"({"seq": 2, "loss": null, "inner": {"count": 4}})"), r);
  EXPECT_EQ(r.seq, 2);
  EXPECT_EQ(r.label, "kept");
  EXPECT_EQ(r.loss, "");
  EXPECT_TRUE(r.reuse);
  EXPECT_FALSE(r.inner.ms);
  EXPECT_EQ(r.inner.count, 4);
  EXPECT_THROW(from_json(fields(), json::parse(R"({"label": "no seq"})"), r), json::exception);
  EXPECT_THROW(from_json(fields(), json::parse(R"({"seq": "three"})"), r), json::exception);
}

TEST(Describe, ColumnsGiveTypedValuesAbsentWhereEmpty) {
  Row r;
  r.flags = {"a", "b"};
  const auto& f = fields();
  EXPECT_EQ(std::get<std::int64_t>(f[0].get(r)), 0);
  EXPECT_EQ(f[0].type, Type::integer);
  EXPECT_FALSE(f[0].nullable);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(f[3].get(r))) << "an empty loss";
  EXPECT_TRUE(f[3].nullable);
  EXPECT_EQ(std::get<std::string>(f[4].get(r)), "on");
  EXPECT_EQ(std::get<std::string>(f[7].get(r)), "a;b");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(f[9].get(r)));
  EXPECT_EQ(f[9].type, Type::real);
  EXPECT_EQ(f[9].unit, "ms");
  r.inner.ms = 2;
  EXPECT_EQ(std::get<double>(f[9].get(r)), 2.0);
}

TEST(Describe, TheSchemaNestsObjectsAndNamesWhatIsRequired) {
  const json s = schema(fields());
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["required"], json({"seq", "inner"}));
  EXPECT_EQ(s["properties"]["seq"], json::parse(R"({"type": "integer", "minimum": 0})"));
  EXPECT_EQ(s["properties"]["loss"]["enum"], json({"capacity", nullptr}));
  EXPECT_EQ(s["properties"]["reuse"]["enum"], json({"on", "off"}));
  EXPECT_EQ(s["properties"]["pair"]["type"], "object");
  EXPECT_EQ(s["properties"]["pair"]["properties"]["id"]["type"], "integer");
  EXPECT_EQ(s["properties"]["inner"]["properties"]["ms"],
            json::parse(R"({"type": "number", "minimum": 0})"));
  EXPECT_EQ(s["properties"]["flags"]["items"]["type"], "string");
}

}  // namespace
}  // namespace kvbench::describe
