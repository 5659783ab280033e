#include "shaders/parameters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>

namespace mgd::shaders {
namespace {

struct Literal {
  size_t begin = 0, end = 0;  // its characters in the body
  bool is_float = false;
};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The end of the number that starts at `i`: digits, a fraction, an exponent.
size_t NumberEnd(const std::string& s, size_t i, bool* is_float) {
  auto digits = [&](size_t j) {
    while (j < s.size() && IsDigit(s[j])) ++j;
    return j;
  };
  size_t j = digits(i);
  *is_float = false;
  if (j < s.size() && s[j] == '.') {
    *is_float = true;
    j = digits(j + 1);
  }
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (k < s.size() && IsDigit(s[k])) {
      *is_float = true;
      j = digits(k);
    }
  }
  return j;
}

// Whether a parameter holds the literal's value exactly: an int32, or a
// finite float (the generators print floats with 9 significant digits, which
// round-trip).
bool FitsParameter(const std::string& spelling, bool is_float) {
  errno = 0;
  if (is_float) {
    const float v = std::strtof(spelling.c_str(), nullptr);
    return errno == 0 && std::isfinite(v);
  }
  const long long v = std::strtoll(spelling.c_str(), nullptr, 10);
  return errno == 0 && v <= std::numeric_limits<int32_t>::max();
}

bool DeclaresConst(const std::string& line) {
  for (size_t at = line.find("const "); at != std::string::npos; at = line.find("const ", at + 1)) {
    if (at == 0 || !IsIdentifierChar(line[at - 1])) return true;
  }
  return false;
}

// The numbers in `body` that could be read from parameters instead: not part
// of an identifier, without a suffix, outside comments and outside `const`
// declarations (whose initializers must be constant expressions).
std::vector<Literal> LiftableLiterals(const std::string& body) {
  std::vector<Literal> literals;
  for (size_t line = 0; line < body.size();) {
    const size_t line_end = std::min(body.find('\n', line), body.size());
    const size_t end = std::min(body.find("//", line), line_end);
    if (!DeclaresConst(body.substr(line, end - line))) {
      for (size_t i = line; i < end;) {
        if (IsIdentifierChar(body[i]) && !IsDigit(body[i])) {
          while (i < end && IsIdentifierChar(body[i])) ++i;
          continue;
        }
        if (!IsDigit(body[i])) {
          ++i;
          continue;
        }
        bool is_float = false;
        const size_t j = std::min(NumberEnd(body, i, &is_float), end);
        const bool suffixed = j < end && (IsIdentifierChar(body[j]) || body[j] == '.');
        if (!suffixed && FitsParameter(body.substr(i, j - i), is_float)) literals.push_back({i, j, is_float});
        for (i = j; i < end && IsIdentifierChar(body[i]);) ++i;
      }
    }
    line = line_end + 1;
  }
  return literals;
}

// Everything that must agree for two shaders to become one program: the code
// without its name, its body's literals replaced by their kinds.
std::string ShapeKey(const ShaderCode& code, const std::vector<Literal>& literals) {
  ShaderCode skeleton = code;
  skeleton.name.clear();
  skeleton.body.clear();
  size_t at = 0;
  for (const Literal& l : literals) {
    skeleton.body += code.body.substr(at, l.begin - at);
    skeleton.body += l.is_float ? "\x01" "f" : "\x01" "i";
    at = l.end;
  }
  skeleton.body += code.body.substr(at);
  return Emit(Dialect::kVulkan, skeleton);
}

void AppendValue(const std::string& spelling, bool is_float, std::vector<uint8_t>& bytes) {
  uint32_t bits;
  if (is_float) {
    const float v = std::strtof(spelling.c_str(), nullptr);
    std::memcpy(&bits, &v, 4);
  } else {
    const int32_t v = static_cast<int32_t>(std::strtoll(spelling.c_str(), nullptr, 10));
    std::memcpy(&bits, &v, 4);
  }
  const size_t at = bytes.size();
  bytes.resize(at + 4);
  std::memcpy(bytes.data() + at, &bits, 4);
}

// One group's rewrite; false when it would need too many parameters.
bool LiftGroup(const std::vector<ParameterizedShader>& shaders, const std::vector<std::vector<Literal>>& literals,
               const std::vector<size_t>& members, size_t max_params) {
  const size_t count = literals[members[0]].size();
  std::vector<int> param_of(count, -1);  // -1: the members agree, it stays inlined
  std::map<std::vector<std::string>, int> by_column;  // literals with the same values share a parameter
  std::vector<std::vector<std::string>> columns;
  std::vector<bool> is_float;
  for (size_t j = 0; j < count; ++j) {
    std::vector<std::string> column;
    for (size_t m : members) {
      const Literal& l = literals[m][j];
      column.push_back(shaders[m].code->body.substr(l.begin, l.end - l.begin));
    }
    if (std::all_of(column.begin(), column.end(), [&](const std::string& s) { return s == column[0]; })) continue;
    const auto [it, fresh] = by_column.emplace(column, static_cast<int>(columns.size()));
    if (fresh) {
      columns.push_back(column);
      is_float.push_back(literals[members[0]][j].is_float);
    }
    param_of[j] = it->second;
  }
  const size_t base = shaders[members[0]].code->params.size();
  if (columns.empty() || base + columns.size() > max_params) return false;
  for (size_t k = 0; k < members.size(); ++k) {
    ShaderCode& code = *shaders[members[k]].code;
    const std::vector<Literal>& own = literals[members[k]];
    std::string body;
    size_t at = 0;
    for (size_t j = 0; j < count; ++j) {
      body += code.body.substr(at, own[j].begin - at);
      body += param_of[j] < 0 ? code.body.substr(own[j].begin, own[j].end - own[j].begin)
                              : fmt::format("params.mgd_p{}", base + static_cast<size_t>(param_of[j]));
      at = own[j].end;
    }
    code.body = body + code.body.substr(at);
    for (size_t p = 0; p < columns.size(); ++p) {
      code.params.push_back(fmt::format("highp {} mgd_p{}", is_float[p] ? "float" : "int", base + p));
      AppendValue(columns[p][k], is_float[p], *shaders[members[k]].params);
    }
  }
  return true;
}

}  // namespace

size_t LiftDifferingLiterals(const std::vector<ParameterizedShader>& shaders, size_t max_params) {
  std::vector<std::vector<Literal>> literals;
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < shaders.size(); ++i) {
    literals.push_back(LiftableLiterals(shaders[i].code->body));
    groups[ShapeKey(*shaders[i].code, literals.back())].push_back(i);
  }
  size_t rewritten = 0;
  for (const auto& [key, members] : groups) {
    if (members.size() >= 2 && LiftGroup(shaders, literals, members, max_params)) rewritten += members.size();
  }
  return rewritten;
}

}  // namespace mgd::shaders
