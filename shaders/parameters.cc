#include "shaders/parameters.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace mgd::shaders {
namespace {

// Everything that must agree for two shaders to become one program: the
// source without its name, every parameter read from the block.
std::string GroupKey(const ShaderCode& code) {
  ShaderCode skeleton = code;
  skeleton.name.clear();
  for (ShaderParam& p : skeleton.params.list) {
    p.member = p.name;
    p.bits = 0;
  }
  return Emit(Dialect::kVulkan, skeleton);
}

// One group's members read the parameters that differ between them from the
// block; false when that would take more than `max_members` members.
bool ShareGroup(const std::vector<ShaderCode*>& members, size_t max_members) {
  const size_t count = members[0]->params.list.size();
  std::vector<int> member_of(count, -1);  // -1: the members agree, it stays inlined
  std::map<std::pair<bool, std::vector<uint32_t>>, int> by_column;  // equal values share a member
  for (size_t j = 0; j < count; ++j) {
    std::vector<uint32_t> column;
    for (const ShaderCode* code : members) column.push_back(code->params.list[j].bits);
    if (std::all_of(column.begin(), column.end(), [&](uint32_t v) { return v == column[0]; })) continue;
    const auto key = std::make_pair(members[0]->params.list[j].is_float, std::move(column));
    const auto [it, fresh] = by_column.emplace(key, static_cast<int>(by_column.size()));
    member_of[j] = it->second;
  }
  if (by_column.empty() || by_column.size() > max_members) return false;
  for (ShaderCode* code : members) {
    for (size_t j = 0; j < count; ++j) {
      if (member_of[j] >= 0) code->params.list[j].member = fmt::format("p{}", member_of[j]);
    }
  }
  return true;
}

}  // namespace

size_t ShareParameters(const std::vector<ShaderCode*>& shaders, size_t max_members) {
  std::map<std::string, std::vector<ShaderCode*>> groups;
  for (ShaderCode* code : shaders) {
    // Shaders already reading a block (a compiled model shared once) stay.
    if (!BlockMembers(*code).empty()) continue;
    groups[GroupKey(*code)].push_back(code);
  }
  size_t shared = 0;
  for (const auto& [key, members] : groups) {
    if (members.size() >= 2 && ShareGroup(members, max_members)) shared += members.size();
  }
  return shared;
}

}  // namespace mgd::shaders
