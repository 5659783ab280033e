// docs/ops.md's table of what mgd has is the registry's: every builtin op
// registered (ops/registry.cc) has its row, and no row names an op that is
// not registered.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "model/op_kind.h"
#include "ops/registry.h"

namespace mgd {
namespace {

std::string ReadDoc() {
  std::ifstream in(std::string(MGD_SOURCE_DIR) + "/docs/ops.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OpsDocTest, TheTableListsEveryRegisteredBuiltinOp) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/ops.md is missing";
  const std::string table = doc.substr(0, doc.find("## In TFLite's GPU list"));
  std::set<std::string> rows;
  const std::regex row(R"(\n\| ([A-Z0-9_]+) \| yes \|)");
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it) rows.insert((*it)[1]);
  std::set<std::string> registered;
  for (int32_t code = 0; code < 256; ++code) {
    const OpKind op = static_cast<OpKind>(code);
    if (op == OpKind::kCustom || ops::FindBuiltin(op) == nullptr) continue;
    registered.insert(OpName(op));
  }
  for (const std::string& name : registered) EXPECT_TRUE(rows.count(name)) << name << " has no row in docs/ops.md";
  for (const std::string& name : rows) EXPECT_TRUE(registered.count(name)) << name << " is in docs/ops.md, not registered";
  EXPECT_GT(registered.size(), 40u);
}

}  // namespace
}  // namespace mgd
