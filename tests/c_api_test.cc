// The C API as a C program would use it: models from files and buffers,
// custom ops through MgdRegistration (added and overriding a built-in one),
// C delegates, errors through the reporter, and every misuse a careful user
// tried (NULLs, ranges, sizes): reported, never a crash.
#include "mgd/c_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "mgd/gpu_delegate.h"
#include "model/writer.h"
#include "ops/elementwise/elementwise.h"
#include "ops/lstm/lstm.h"
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
  b.Op(mgd::OpKind::kAdd, mgd::ops::ElementwiseAttributes{}, {x, x}, {y});
  b.Op(mgd::OpKind::kRelu, std::monostate{}, {y}, {z});
  b.Output(z);
  const std::vector<uint8_t> bytes = *mgd::WriteModel(b.Build());
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  AddDelegateState state;
  MgdDelegate delegate = {&state, "c-add", AddSupported, AddPrepare, AddInvoke, nullptr, nullptr};
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsAddDelegate(options, &delegate);
  // A C delegate gives no cost estimates: partitioning by cost keeps its partition.
  MgdInterpreterOptionsSetPartitionByCost(options, 1);
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

// Every function given NULL where it needs an object, an index out of range
// or a size that does not match: no crash, the documented answer, and one
// message naming the function, to the reporter when one is set (issue 18).
TEST(CApiTest, NullArgumentsAreReportedNotCrashes) {
  EXPECT_EQ(MgdModelCreate(nullptr, 10), nullptr);
  EXPECT_EQ(MgdModelCreateFromFile(nullptr), nullptr);
  MgdModelDelete(nullptr);
  EXPECT_EQ(MgdInterpreterCreate(nullptr, nullptr), nullptr);
  MgdInterpreterDelete(nullptr);
  MgdInterpreterOptionsDelete(nullptr);
  EXPECT_EQ(MgdInterpreterGetInputTensorCount(nullptr), 0);
  EXPECT_EQ(MgdInterpreterGetOutputTensorCount(nullptr), 0);
  EXPECT_EQ(MgdInterpreterGetInputTensor(nullptr, 0), nullptr);
  EXPECT_EQ(MgdInterpreterGetOutputTensor(nullptr, 0), nullptr);
  EXPECT_EQ(MgdInterpreterAllocateTensors(nullptr), kMgdError);
  EXPECT_EQ(MgdInterpreterInvoke(nullptr), kMgdError);
  EXPECT_EQ(MgdTensorType(nullptr), kMgdNoType);
  EXPECT_EQ(MgdTensorNumDims(nullptr), -1);
  EXPECT_EQ(MgdTensorDim(nullptr, 0), -1);
  EXPECT_EQ(MgdTensorByteSize(nullptr), 0u);
  EXPECT_EQ(MgdTensorData(nullptr), nullptr);
  EXPECT_EQ(MgdTensorName(nullptr), nullptr);
  float buffer[4] = {};
  EXPECT_EQ(MgdTensorCopyFromBuffer(nullptr, buffer, sizeof buffer), kMgdError);
  EXPECT_EQ(MgdTensorCopyToBuffer(nullptr, buffer, sizeof buffer), kMgdError);
  MgdInterpreterOptionsAddDelegate(nullptr, nullptr);
  MgdInterpreterOptionsSetMaxDelegatedPartitions(nullptr, 1);
  MgdInterpreterOptionsSetPartitionByCost(nullptr, 1);
  MgdInterpreterOptionsSetErrorReporter(nullptr, Collect, nullptr);
  MgdInterpreterOptionsSetCheckFinite(nullptr, 1);
  MgdInterpreterOptionsAddCustomOp(nullptr, "TimesTwo", &kTimesTwo, 1, 1);
  EXPECT_EQ(MgdOpNodeNumInputs(nullptr), 0);
  EXPECT_EQ(MgdOpNodeNumOutputs(nullptr), 0);
  EXPECT_EQ(MgdOpNodeGetInput(nullptr, 0), nullptr);
  EXPECT_EQ(MgdOpNodeGetOutput(nullptr, 0), nullptr);
  EXPECT_EQ(MgdOpNodeGetUserData(nullptr), nullptr);
  EXPECT_EQ(MgdOpContextResizeTensor(nullptr, nullptr, nullptr, 0), kMgdError);
  MgdOpContextReportError(nullptr, "%s", "x");
  MgdGpuDelegateDelete(nullptr);

  // With an interpreter and a reporter: the interpreter's reporter hears of
  // its tensors' misuse too, and the message says what is wrong.
  std::string errors;
  const std::vector<uint8_t> bytes = TimesTwoModel();
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  MgdInterpreterOptionsAddCustomOp(options, "TimesTwo", &kTimesTwo, 1, 1);
  MgdInterpreterOptionsSetMaxDelegatedPartitions(options, -3);
  EXPECT_THAT(errors, HasSubstr("MgdInterpreterOptionsSetMaxDelegatedPartitions: -3 is negative"));
  errors.clear();
  MgdInterpreterOptionsAddCustomOp(options, nullptr, &kTimesTwo, 1, 1);
  EXPECT_THAT(errors, HasSubstr("name is NULL"));
  errors.clear();
  MgdInterpreterOptionsAddCustomOp(options, "TimesTwo", &kTimesTwo, 3, 1);
  EXPECT_THAT(errors, HasSubstr("min_version is above max_version"));
  errors.clear();
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr) << errors;
  EXPECT_EQ(MgdInterpreterGetInputTensor(interpreter, 1), nullptr);
  EXPECT_THAT(errors, HasSubstr("MgdInterpreterGetInputTensor: input 1 is out of range (there are 1)"));
  errors.clear();
  EXPECT_EQ(MgdInterpreterGetOutputTensor(interpreter, -1), nullptr);
  EXPECT_THAT(errors, HasSubstr("MgdInterpreterGetOutputTensor: output -1 is out of range"));
  errors.clear();
  MgdTensor* input = MgdInterpreterGetInputTensor(interpreter, 0);
  EXPECT_EQ(MgdTensorDim(input, 2), -1);
  EXPECT_THAT(errors, HasSubstr("MgdTensorDim: dimension 2 is out of range (there are 2)"));
  errors.clear();
  EXPECT_EQ(MgdTensorCopyFromBuffer(input, nullptr, 12), kMgdError);
  EXPECT_EQ(errors, "MgdTensorCopyFromBuffer: input_data is NULL (tensor 'input0')");
  errors.clear();
  EXPECT_EQ(MgdTensorCopyFromBuffer(input, buffer, 16), kMgdError);
  EXPECT_EQ(errors, "MgdTensorCopyFromBuffer: tensor 'input0' has 12 bytes, input_data has 16");
  errors.clear();
  EXPECT_EQ(MgdTensorCopyToBuffer(MgdInterpreterGetOutputTensor(interpreter, 0), nullptr, 12), kMgdError);
  EXPECT_THAT(errors, HasSubstr("MgdTensorCopyToBuffer: output_data is NULL"));
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// A C delegate without its callbacks is refused when added, with a reason,
// and the interpreter runs without it.
TEST(CApiTest, ADelegateWithNullCallbacksIsRefused) {
  const std::vector<uint8_t> bytes = TimesTwoModel();
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  std::string errors;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  MgdInterpreterOptionsAddCustomOp(options, "TimesTwo", &kTimesTwo, 1, 1);
  MgdDelegate empty = {nullptr, "empty", nullptr, nullptr, nullptr, nullptr, nullptr};
  MgdInterpreterOptionsAddDelegate(options, &empty);
  EXPECT_THAT(errors, HasSubstr("delegate 'empty': is_node_supported, prepare, invoke are NULL (the delegate is not added)"));
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr);
  const float in[3] = {1, 2, 3};
  ASSERT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), in, sizeof in), kMgdOk);
  ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// Errors of a tensor used inside a custom op become the op's error, reported
// with its node.
MgdStatus CopyTooMuch(MgdOpContext*, MgdOpNode* node) {
  float big[8] = {};
  return MgdTensorCopyToBuffer(MgdOpNodeGetInput(node, 0), big, sizeof big);
}
const MgdRegistration kCopyTooMuch = {nullptr, nullptr, nullptr, CopyTooMuch};

TEST(CApiTest, TensorErrorsInsideACustomOpAreTheOps) {
  const std::vector<uint8_t> bytes = TimesTwoModel();
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  std::string errors;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  MgdInterpreterOptionsAddCustomOp(options, "TimesTwo", &kCopyTooMuch, 1, 1);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr);
  EXPECT_EQ(MgdInterpreterInvoke(interpreter), kMgdError);
  EXPECT_THAT(errors, HasSubstr("(custom TimesTwo)"));
  EXPECT_THAT(errors, HasSubstr("MgdTensorCopyToBuffer: tensor 'input0' has 12 bytes, output_data has 32"));
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// An invoke leaves its inputs as they were, so a second one without copying
// them again gives the same outputs, on every test model (issue 18: the
// arena used to hand the input's bytes to later tensors).
TEST(CApiTest, InvokesLeaveTheInputsAndRepeat) {
  for (const char* name : {"face_detection_short_range", "face_landmark", "hand_landmark_lite", "palm_detection_lite",
                           "pose_landmark_lite", "selfie_segmentation"}) {
    SCOPED_TRACE(name);
    const std::string path = mgd::testing::DataPath(std::string("models/") + name + ".tflite");
    MgdModel* model = MgdModelCreateFromFile(path.c_str());
    MgdInterpreter* interpreter = MgdInterpreterCreate(model, nullptr);
    MgdModelDelete(model);
    ASSERT_NE(interpreter, nullptr);
    const auto input = mgd::testing::ReadF32(mgd::testing::DataPath(std::string("reference/") + name + "/image/input_0.f32"));
    MgdTensor* in = MgdInterpreterGetInputTensor(interpreter, 0);
    ASSERT_EQ(MgdTensorCopyFromBuffer(in, input.data(), input.size() * 4), kMgdOk);
    std::vector<std::vector<float>> first;
    for (int run = 0; run < 2; ++run) {
      ASSERT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
      EXPECT_EQ(std::memcmp(MgdTensorData(in), input.data(), input.size() * 4), 0) << "run " << run << " changed the input";
      for (int32_t k = 0; k < MgdInterpreterGetOutputTensorCount(interpreter); ++k) {
        const MgdTensor* t = MgdInterpreterGetOutputTensor(interpreter, k);
        const float* v = static_cast<const float*>(MgdTensorData(t));
        std::vector<float> out(v, v + MgdTensorByteSize(t) / 4);
        if (run == 0) first.push_back(out);
        else EXPECT_TRUE(out == first[static_cast<size_t>(k)]) << "output " << k << " differs on the second run";
      }
    }
    MgdInterpreterDelete(interpreter);
  }
}

// An LSTM's state carries from one invoke to the next until
// MgdInterpreterResetVariableTensors, as with TFLite's C API.
TEST(CApiTest, ResetVariableTensorsStartsTheSequenceAgain) {
  mgd::testing::GraphBuilder b;
  const int x = b.Input({1, 2, 1}, "x");
  std::vector<int> in(20, mgd::kNoTensor);
  in[0] = x;
  for (int gate = 0; gate < 4; ++gate) {
    in[static_cast<size_t>(1 + gate)] = b.Constant({1, 1}, {0.5f});
    in[static_cast<size_t>(5 + gate)] = b.Constant({1, 1}, {-1.0f});
    in[static_cast<size_t>(12 + gate)] = b.Constant({1}, {0.25f});
  }
  in[18] = b.Variable({1, 1}, "h");
  in[19] = b.Variable({1, 1}, "c");
  const int y = b.Tensor({1, 2, 1}, mgd::DataType::kFloat32, "y");
  b.Op(mgd::OpKind::kUnidirectionalSequenceLstm, mgd::ops::LstmAttributes{}, in, {y});
  b.Output(y);
  auto bytes = mgd::WriteModel(b.Build());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  MgdModel* model = MgdModelCreate(bytes->data(), bytes->size());
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, nullptr);
  MgdModelDelete(model);
  ASSERT_NE(interpreter, nullptr);
  const float frames[2] = {1.0f, -2.0f};
  ASSERT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), frames, sizeof frames), kMgdOk);
  auto run = [&] {
    EXPECT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk);
    std::vector<float> out(2);
    EXPECT_EQ(MgdTensorCopyToBuffer(MgdInterpreterGetOutputTensor(interpreter, 0), out.data(), 8), kMgdOk);
    return out;
  };
  const std::vector<float> first = run();
  EXPECT_NE(run(), first);  // from the first sequence's state
  ASSERT_EQ(MgdInterpreterResetVariableTensors(interpreter), kMgdOk);
  EXPECT_EQ(run(), first);
  MgdInterpreterDelete(interpreter);
  EXPECT_EQ(MgdInterpreterResetVariableTensors(nullptr), kMgdError);
}

// SetCheckFinite: an invoke fails naming the first NaN or Inf of an input
// (before running) or of an output (after).
TEST(CApiTest, CheckFiniteNamesTheFirstNonFiniteValue) {
  mgd::testing::GraphBuilder b;
  const int x = b.Input({1, 3});
  const int y = b.Tensor({1, 3});
  b.Op(mgd::OpKind::kDiv, mgd::ops::ElementwiseAttributes{}, {x, b.Constant({3}, {1, 0, 1})}, {y});
  b.Output(y);
  const std::vector<uint8_t> bytes = *mgd::WriteModel(b.Build());
  MgdModel* model = MgdModelCreate(bytes.data(), bytes.size());
  std::string errors;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  MgdInterpreterOptionsSetCheckFinite(options, 1);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  ASSERT_NE(interpreter, nullptr);
  MgdTensor* in = MgdInterpreterGetInputTensor(interpreter, 0);
  const float with_nan[3] = {1, 2, std::nanf("")};
  ASSERT_EQ(MgdTensorCopyFromBuffer(in, with_nan, sizeof with_nan), kMgdOk);
  EXPECT_EQ(MgdInterpreterInvoke(interpreter), kMgdError);
  EXPECT_EQ(errors, "input 0 'input0' [1,3]: element 2 is NaN (1 of its 3 values are not finite)");
  errors.clear();
  const float finite[3] = {1, 2, 3};  // 2 / 0 is +Inf
  ASSERT_EQ(MgdTensorCopyFromBuffer(in, finite, sizeof finite), kMgdOk);
  EXPECT_EQ(MgdInterpreterInvoke(interpreter), kMgdError);
  EXPECT_EQ(errors, "output 0 't1' [1,3]: element 1 is +Inf (1 of its 3 values are not finite)");
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
}

// A cache folder the GPU delegate cannot use is said once, through the
// reporter, and the delegate works without a cache.
TEST(CApiTest, AnUnusableCacheFolderIsSaidOnce) {
  std::string errors;
  const std::string file = ::testing::TempDir() + "/mgd_c_api_plain_file";
  { std::FILE* f = std::fopen(file.c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  const std::string cache = file + "/cache";  // a folder under a file
  MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
  o.cache_dir = cache.c_str();
  MgdDelegate* gpu = MgdGpuDelegateCreate(&o, Collect, &errors);
  if (gpu == nullptr) {
    if (mgd::testing::GpuBackendsRequired()) FAIL() << errors;
    GTEST_SKIP() << "no GPU: " << errors;
  }
  EXPECT_EQ(errors, "compilation cache: " + cache + ": cannot use the folder (Not a directory); running without a cache");
  errors.clear();
  const std::string path = mgd::testing::DataPath("models/face_detection_short_range.tflite");
  MgdModel* model = MgdModelCreateFromFile(path.c_str());
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &errors);
  MgdInterpreterOptionsAddDelegate(options, gpu);
  for (int start = 0; start < 2; ++start) {
    MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
    ASSERT_NE(interpreter, nullptr) << errors;
    MgdInterpreterDelete(interpreter);
  }
  EXPECT_EQ(errors, "");  // not again at each prepare
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
  MgdGpuDelegateDelete(gpu);
}

// Measured once (NNAPI's capabilities), then the same numbers again; the
// interop handles name the delegate's API.
TEST(CApiTest, GpuDelegateCapabilitiesAreMeasuredAndKept) {
  std::string errors;
  MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
  o.api = kMgdGpuApiGles;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&o, Collect, &errors);
  if (gpu == nullptr) {
    if (mgd::testing::GpuBackendsRequired()) FAIL() << errors;
    GTEST_SKIP() << "no GPU: " << errors;
  }
  MgdGpuCapabilities first{}, second{};
  ASSERT_EQ(MgdGpuDelegateGetCapabilities(gpu, &first), kMgdOk);
  EXPECT_GT(first.fp32_ms, 0);
  EXPECT_GT(first.fp16_ms, 0);
  EXPECT_NEAR(first.fp32_gflops, 0.083492864 / first.fp32_ms * 1e3, 1e-6 * first.fp32_gflops);
  ASSERT_EQ(MgdGpuDelegateGetCapabilities(gpu, &second), kMgdOk);
  EXPECT_EQ(first.fp32_ms, second.fp32_ms);
  MgdGpuInterop interop{};
  ASSERT_EQ(MgdGpuDelegateGetInterop(gpu, &interop), kMgdOk);
  EXPECT_EQ(interop.api, kMgdGpuApiGles);
  EXPECT_NE(interop.egl_context, 0u);
  EXPECT_EQ(interop.vk_device, 0u);
  const char* device = MgdGpuDelegateGetDeviceName(gpu);
  ASSERT_NE(device, nullptr);
  EXPECT_GT(std::string(device).size(), 3u);
  EXPECT_EQ(MgdGpuDelegateGetCapabilities(gpu, nullptr), kMgdError);
  MgdGpuDelegateDelete(gpu);
  o.priority = static_cast<MgdGpuPriority>(7);
  EXPECT_EQ(MgdGpuDelegateCreate(&o, Collect, &errors), nullptr);
  EXPECT_THAT(errors, HasSubstr("priority 7 is not an MgdGpuPriority"));
  o.priority = kMgdGpuPriorityMedium;
  o.wait = static_cast<MgdGpuWait>(5);
  EXPECT_EQ(MgdGpuDelegateCreate(&o, Collect, &errors), nullptr);
  EXPECT_THAT(errors, HasSubstr("wait 5 is not an MgdGpuWait"));
}

}  // namespace
