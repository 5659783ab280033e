// CPU reference kernel tests: bad parameters, reported at Interpreter::Create.
#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/pool/pool.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd {
namespace {

// ---------------------------------------------------------------------------
// Bad parameters are reported at Interpreter::Create
// ---------------------------------------------------------------------------

TEST(CreateErrorTest, WrongDeclaredOutputShapeNamesBothShapes) {
  // A 2x2 VALID conv over 3x3 gives [1,2,2,1]; the graph declares [1,3,3,1].
  const absl::Status s = CreateStatus(OpKind::kConv2d, ops::Conv2dAttributes{.padding = Padding::kValid},
                                      {In({1, 3, 3, 1}, {}), Const({1, 2, 2, 1}, {1, 2, 3, 4})}, {{1, 3, 3, 1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("has shape [1,3,3,1]"));
  EXPECT_THAT(s.message(), HasSubstr("but the inputs give [1,2,2,1]"));
}

TEST(CreateErrorTest, WrongDeclaredOutputShapeOfPoolAndConcat) {
  absl::Status s =
      CreateStatus(OpKind::kMaxPool2d, ops::PoolAttributes{.stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2},
                   {In({1, 5, 5, 1}, {})}, {{1, 2, 2, 1}});
  EXPECT_THAT(s.message(), HasSubstr("has shape [1,2,2,1], but the inputs give [1,3,3,1]"));
  s = CreateStatus(OpKind::kConcatenation, ops::ConcatenationAttributes{.axis = 1}, {In({2, 3}, {}), In({2, 4}, {})},
                   {{2, 6}});
  EXPECT_THAT(s.message(), HasSubstr("has shape [2,6], but the inputs give [2,7]"));
}

TEST(CreateErrorTest, UnregisteredCustomOpIsAnError) {
  const absl::Status s = CreateStatus(OpKind::kCustom, CustomAttributes{"NoSuchOp", {}}, {In({1}, {})}, {{1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("custom op 'NoSuchOp'"));
}

TEST(CreateErrorTest, CustomOpBadPaddingIsAnError) {
  const absl::Status s =
      CreateStatus(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", RawInts({0, 2, 2, 2, 2, 0})},
                   {In({1, 4, 4, 1}, {})}, {{1, 2, 2, 1}, {1, 2, 2, 1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("neither SAME (1) nor VALID (2)"));
}

}  // namespace
}  // namespace mgd
