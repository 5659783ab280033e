#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "shaders/ops.h"

namespace mgd::shaders::glsl {

std::string OutputPrologue(const layout::Bhwc& o) {
  return fmt::format(
      "  int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);\n"
      "  if (x >= {W} || y >= {H} || z >= {Z}) return;\n"
      "  int b = z / {S}, s = z - (z / {S}) * {S};\n"
      "  int out_index = (z * {H} + y) * {W} + x;\n",
      fmt::arg("W", o.width), fmt::arg("H", o.height), fmt::arg("Z", o.batch * o.slices()), fmt::arg("S", o.slices()));
}

std::string Index(const layout::Bhwc& t, const std::string& b, const std::string& slice, const std::string& yy,
                  const std::string& xx) {
  return fmt::format("((({} * {} + {}) * {} + {}) * {} + {})", b, t.slices(), slice, t.height, yy, t.width, xx);
}

std::string Float(float value) {
  if (std::isinf(value)) return value > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
  // Exact round trip: 9 significant digits, always with a decimal point or exponent.
  std::string s = fmt::format("{:.9g}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Activation(mgd::Activation a, const std::string& v) {
  switch (a) {
    case mgd::Activation::kNone: return "";
    case mgd::Activation::kRelu: return fmt::format("  {0} = max({0}, vec4(0.0));\n", v);
    case mgd::Activation::kRelu6: return fmt::format("  {0} = clamp({0}, vec4(0.0), vec4(6.0));\n", v);
    case mgd::Activation::kReluN1To1: return fmt::format("  {0} = clamp({0}, vec4(-1.0), vec4(1.0));\n", v);
    case mgd::Activation::kTanh: return fmt::format("  {0} = tanh({0});\n", v);
    case mgd::Activation::kSignBit: return "";
  }
  return "";
}

std::string ConstVec4Array(const std::string& name, const std::vector<float>& padded) {
  std::string s = fmt::format("  const vec4 {}[{}] = vec4[](", name, padded.size() / 4);
  for (size_t i = 0; i < padded.size(); i += 4) {
    s += fmt::format("{}vec4({}, {}, {}, {})", i ? ", " : "", Float(padded[i]), Float(padded[i + 1]),
                     Float(padded[i + 2]), Float(padded[i + 3]));
  }
  return s + ");\n";
}

}  // namespace mgd::shaders::glsl

namespace mgd::shaders {

void AddElementwiseGenerators(std::map<OpKind, Generator>& g);
void AddConvolutionGenerators(std::map<OpKind, Generator>& g);

std::map<OpKind, Generator> OpGenerators() {
  std::map<OpKind, Generator> g;
  AddElementwiseGenerators(g);
  AddConvolutionGenerators(g);
  return g;
}

}  // namespace mgd::shaders
