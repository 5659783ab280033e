// The C API as a C program would use it: models from files and buffers,
// custom ops through MgdRegistration (added and overriding a built-in one),
// C delegates, and errors through the reporter.
#include "mgd/c_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "model/writer.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"

namespace {

using ::testing::HasSubstr;

void Collect(void* user_data, const char* message) { static_cast<std::string*>(user_data)->append(message); }

// A custom op "TimesTwo": y = 2x.
MgdStatus TimesTwoPrepare(MgdOpContext* context, MgdOpNode* node) {
  if (MgdOpNodeNumInputs(node) != 1 || MgdOpNodeNumOutputs(node) != 1) {
    MgdOpContextReportError(context, "TimesTwo needs 1 input and 1 output, got %d and %d", MgdOpNodeNumInputs(node),
                            MgdOpNodeNumOutputs(node));
    return kMgdError;
  }
  const MgdTensor* in = MgdOpNodeGetInput(node, 0);
  int32_t dims[8];
  for (int32_t d = 0; d < MgdTensorNumDims(in); ++d) dims[d] = MgdTensorDim(in, d);
  return MgdOpContextResizeTensor(context, MgdOpNodeGetOutput(node, 0), dims, MgdTensorNumDims(in));
}

MgdStatus TimesTwoInvoke(MgdOpContext*, MgdOpNode* node) {
  const MgdTensor* in = MgdOpNodeGetInput(node, 0);
  MgdTensor* out = MgdOpNodeGetOutput(node, 0);
  const float* x = static_cast<const float*>(MgdTensorData(in));
  float* y = static_cast<float*>(MgdTensorData(out));
  const float scale = *static_cast<float*>(MgdOpNodeGetUserData(node));
  for (size_t i = 0; i < MgdTensorByteSize(in) / 4; ++i) y[i] = scale * x[i];
  return kMgdOk;
}

void* TimesTwoInit(MgdOpContext*, const char*, size_t) { return new float(2.0f); }
void TimesTwoFree(MgdOpContext*, void* data) { delete static_cast<float*>(data); }

const MgdRegistration kTimesTwo = {TimesTwoInit, TimesTwoFree, TimesTwoPrepare, TimesTwoInvoke};

std::vector<uint8_t> TimesTwoModel() {
  mgd::testing::GraphBuilder b;
  const int x = b.Input({1, 3});
  const int y = b.Tensor({1, 3});
  b.Op(mgd::OpKind::kCustom, mgd::CustomAttributes{"TimesTwo", {}}, {x}, {y});
  b.Output(y);
  return *mgd::WriteModel(b.Build());
}

TEST(CApiTest, RunsFaceDetectionLikeLiteRt) {
  const std::string model_path = mgd::testing::DataPath("models/face_detection_short_range.tflite");
  MgdModel* model = MgdModelCreateFromFile(model_path.c_str());
  ASSERT_NE(model, nullptr);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, nullptr);
  MgdModelDelete(model);
  ASSERT_NE(interpreter, nullptr);
  ASSERT_EQ(MgdInterpreterGetInputTensorCount(interpreter), 1);
  ASSERT_EQ(MgdInterpreterGetOutputTensorCount(interpreter), 2);
  MgdTensor* input = MgdInterpreterGetInputTensor(interpreter, 0);
  EXPECT_EQ(MgdTensorType(input), kMgdFloat32);
  EXPECT_EQ(MgdTensorNumDims(input), 4);
  EXPECT_EQ(MgdTensorDim(input, 1), 128);
  EXPECT_STREQ(MgdTensorName(input), "input");
  const std::string dir = mgd::testing::DataPath("reference/face_detection_short_range/image/");
  const auto pixels = mgd::testing::ReadF32(dir + "input_0.f32");
  ASSERT_EQ(MgdInterpreterAllocateTensors(interpreter), kMgdOk);
  ASSERT_EQ(MgdTensorCopyFromBuffer(input, pixels.data(), pixels.size() * 4), kMgdOk);
  ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
  const MgdTensor* scores = MgdInterpreterGetOutputTensor(interpreter, 1);
  std::vector<float> actual(MgdTensorByteSize(scores) / 4);
  ASSERT_EQ(MgdTensorCopyToBuffer(scores, actual.data(), actual.size() * 4), kMgdOk);
  EXPECT_LE(mgd::testing::RelativeRms(actual, mgd::testing::ReadF32(dir + "output_1.f32")), 1e-5);
  // Wrong sizes are refused, not truncated.
  EXPECT_EQ(MgdTensorCopyFromBuffer(input, pixels.data(), 12), kMgdError);
  EXPECT_EQ(MgdTensorCopyToBuffer(scores, actual.data(), 8), kMgdError);
  MgdInterpreterDelete(interpreter);
}

TEST(CApiTest, BadModelIsReportedAndReturnsNull) {
  std::string errors;
  const char garbage[] = "this is not a model at all";
  EXPECT_EQ(MgdModelCreateWithErrorReporter(garbage, sizeof garbage, Collect, &errors), nullptr);
  EXPECT_THAT(errors, HasSubstr("not a TFLite model"));
  errors.clear();
  EXPECT_EQ(MgdModelCreateFromFileWithErrorReporter("/no/such/model.tflite", Collect, &errors), nullptr);
  EXPECT_THAT(errors, HasSubstr("/no/such/model.tflite"));
}

TEST(CApiTest, CustomOpRegisteredThroughTheCApi) {
  const std::vector<uint8_t> bytes = TimesTwoModel();
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);

  std::string errors;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  EXPECT_EQ(MgdInterpreterCreate(model, options), nullptr);  // not registered yet
  EXPECT_THAT(errors, HasSubstr("custom op 'TimesTwo' (version 1) is not registered"));

  MgdInterpreterOptionsAddCustomOp(options, "TimesTwo", &kTimesTwo, 1, 1);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr) << errors;
  const float in[3] = {1.5f, -2.0f, 0.25f};
  ASSERT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), in, sizeof in), kMgdOk);
  ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
  const float* out = static_cast<const float*>(MgdTensorData(MgdInterpreterGetOutputTensor(interpreter, 0)));
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], -4.0f);
  EXPECT_EQ(out[2], 0.5f);
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// A user's registration replaces mgd's built-in MediaPipe op.
MgdStatus ZeroPrepare(MgdOpContext*, MgdOpNode*) { return kMgdOk; }
MgdStatus ZeroInvoke(MgdOpContext*, MgdOpNode* node) {
  MgdTensor* out = MgdOpNodeGetOutput(node, 0);
  std::memset(MgdTensorData(out), 0, MgdTensorByteSize(out));
  return kMgdOk;
}
const MgdRegistration kZero = {nullptr, nullptr, ZeroPrepare, ZeroInvoke};

TEST(CApiTest, UserRegistrationOverridesBuiltInCustomOp) {
  const std::string path = mgd::testing::DataPath("models/selfie_segmentation.tflite");
  MgdModel* model = MgdModelCreateFromFile(path.c_str());
  ASSERT_NE(model, nullptr);
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsAddCustomOp(options, "Convolution2DTransposeBias", &kZero, 1, 1000);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr);
  const auto pixels = mgd::testing::ReadF32(mgd::testing::DataPath("reference/selfie_segmentation/image/input_0.f32"));
  ASSERT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), pixels.data(), pixels.size() * 4), kMgdOk);
  ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
  // The transposed conv feeds the final sigmoid: zeros in give 0.5 everywhere.
  const MgdTensor* mask = MgdInterpreterGetOutputTensor(interpreter, 0);
  const float* m = static_cast<const float*>(MgdTensorData(mask));
  for (size_t i = 0; i < MgdTensorByteSize(mask) / 4; i += 997) ASSERT_FLOAT_EQ(m[i], 0.5f);
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// A C delegate that claims every ADD, and runs them itself.
struct AddDelegateState {
  int prepared = 0, invoked = 0;
};
int AddSupported(void*, int32_t, int32_t code, const char*, char* reason, size_t size) {
  if (code == 0) return 1;
  std::snprintf(reason, size, "only ADD");
  return 0;
}
void* AddPrepare(void* data, const int32_t*, int32_t num_nodes, const int32_t*, int32_t num_inputs, const int32_t*,
                 int32_t, char* error, size_t size) {
  if (num_nodes != 1 || num_inputs != 1) {
    std::snprintf(error, size, "expected one ADD of one input, got %d nodes", num_nodes);
    return nullptr;
  }
  ++static_cast<AddDelegateState*>(data)->prepared;
  return data;
}
MgdStatus AddInvoke(void* data, void*, MgdTensor* const* inputs, int32_t, MgdTensor* const* outputs, int32_t) {
  const float* x = static_cast<const float*>(MgdTensorData(inputs[0]));
  float* y = static_cast<float*>(MgdTensorData(outputs[0]));
  for (size_t i = 0; i < MgdTensorByteSize(inputs[0]) / 4; ++i) y[i] = x[i] + x[i];
  ++static_cast<AddDelegateState*>(data)->invoked;
  return kMgdOk;
}

TEST(CApiTest, CDelegateTakesTheNodesItClaims) {
  mgd::testing::GraphBuilder b;
  const int x = b.Input({1, 3});
  const int y = b.Tensor({1, 3});
  const int z = b.Tensor({1, 3});
  b.Op(mgd::OpKind::kAdd, mgd::ElementwiseAttributes{}, {x, x}, {y});
  b.Op(mgd::OpKind::kRelu, std::monostate{}, {y}, {z});
  b.Output(z);
  const std::vector<uint8_t> bytes = *mgd::WriteModel(b.Build());
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  AddDelegateState state;
  MgdDelegate delegate = {&state, "c-add", AddSupported, AddPrepare, AddInvoke, nullptr, nullptr};
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsAddDelegate(options, &delegate);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr);
  EXPECT_EQ(state.prepared, 1);
  const float in[3] = {1, -2, 3};
  ASSERT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), in, sizeof in), kMgdOk);
  ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
  EXPECT_EQ(state.invoked, 1);
  const float* out = static_cast<const float*>(MgdTensorData(MgdInterpreterGetOutputTensor(interpreter, 0)));
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 6.0f);
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

}  // namespace
