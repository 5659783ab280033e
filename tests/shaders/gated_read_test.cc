// ReadThroughGate: a shader that reads its input through in0_at reads it
// times a per-slice gate; one that reads the buffer otherwise is left as it
// was (the compiler then runs the MUL as a dispatch of its own). The GPU
// results are in tests/delegate/fusion_test.cc.
#include <gtest/gtest.h>

#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

ShaderCode Copy() {
  ShaderCode code;
  code.name = "copy";
  code.buffers = {{"in0", "", BufferAccess::kRead, true}, {"out0", "", BufferAccess::kWrite, true}};
  code.body = "  int i = int(gl_GlobalInvocationID.x);\n  out0_set(i, in0_at(i));\n";
  return code;
}

TEST(ReadThroughGateTest, TheAccessorScalesEachSliceByTheGate) {
  ShaderCode code = Copy();
  ASSERT_TRUE(ReadThroughGate(code, "in0", layout::Bhwc{2, 3, 5, 8}));
  ASSERT_EQ(code.buffers.size(), 3u);
  EXPECT_EQ(code.buffers[0].name, "in0_ungated");  // still binding 0
  EXPECT_EQ(code.buffers[2].name, "in0_gate");
  EXPECT_TRUE(code.buffers[2].activation);
  EXPECT_EQ(code.buffers[2].access, BufferAccess::kRead);
  // Vec4 i lies in slice i / (3 * 5) of its image, counted over the batch
  // as the gate's [2, 1, 1, 8] PHWC4 vec4s are.
  ASSERT_EQ(code.params.list.size(), 1u);
  EXPECT_EQ(code.params.list[0].bits, 15u);
  EXPECT_EQ(code.body.rfind("#define in0_at(i) (in0_ungated_at(i) * in0_gate_at((i) / IN0_PLANE))\n", 0), 0u);
  EXPECT_NE(code.body.find("out0_set(i, in0_at(i));"), std::string::npos);
}

TEST(ReadThroughGateTest, ABufferReadOutsideTheAccessorOrBeforeMainIsLeftAlone) {
  ShaderCode shared = Copy();
  shared.shared = "vec4 first() { return in0_at(0); }\n";
  ShaderCode direct = Copy();
  direct.body = "  out0_set(0, in0[0]);\n";
  ShaderCode none = Copy();
  for (ShaderCode* code : {&shared, &direct, &none}) {
    const std::string body = code->body;
    EXPECT_FALSE(ReadThroughGate(*code, code == &none ? "in1" : "in0", layout::Bhwc{1, 4, 4, 4}));
    EXPECT_EQ(code->buffers.size(), 2u);
    EXPECT_EQ(code->buffers[0].name, "in0");
    EXPECT_EQ(code->body, body);
    EXPECT_TRUE(code->params.list.empty());
  }
}

}  // namespace
}  // namespace mgd::shaders
