// Offline compiled models (mgd compile) through the C++ and C APIs: a model
// loads the code compiled into it and gives the compiling run's outputs bit
// for bit; a model compiled for another API or precision, or with a damaged
// entry, is refused with a message saying why, unless recompiling is allowed;
// the C API's GPU delegate takes a compilation cache and a model token.
#include "delegate/compiled_file.h"

#include <unistd.h>

#include <filesystem>

#include "delegate/serialize.h"
#include "mgd/gpu_delegate.h"
#include "model/reader.h"
#include "model/writer.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kModel[] = "face_detection_short_range";

std::vector<float> Input() { return testing::ReadF32(testing::DataPath(std::string("reference/") + kModel + "/image/input_0.f32")); }
Graph Model() { return *ReadModelFile(testing::DataPath(std::string("models/") + kModel + ".tflite")); }

std::unique_ptr<GpuDelegate> Delegate(gpu::Api api, bool fp16, bool recompile = false,
                                      CompiledEntryCollector* collect = nullptr, bool fusion = true) {
  GpuDelegateOptions options;
  options.fusion = fusion;
  options.api = api;
  options.precision = Precision::Of(fp16);
  options.validation = true;
  options.recompile = recompile;
  if (collect != nullptr) options.observers.push_back(collect);
  auto delegate = GpuDelegate::Create(options);
  EXPECT_TRUE(delegate.ok()) << delegate.status();
  return delegate.ok() ? std::move(*delegate) : nullptr;
}

// The interpreter with `delegate`, or its creation error.
absl::StatusOr<std::vector<std::vector<float>>> RunWith(const Graph& graph, GpuDelegate& delegate) {
  InterpreterOptions options;
  options.delegates.push_back(&delegate);
  auto interpreter = Interpreter::Create(graph, std::move(options));
  if (!interpreter.ok()) return interpreter.status();
  const std::vector<float> input = Input();
  std::memcpy((*interpreter)->input(0).data, input.data(), input.size() * 4);
  if (absl::Status s = (*interpreter)->Invoke(); !s.ok()) return s;
  std::vector<std::vector<float>> outputs;
  for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
    const TensorRef& t = (*interpreter)->output(k);
    outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  return outputs;
}

class CompiledFileTest : public testing::DelegateTest {
 protected:
  // Compiles the model on this test's backend, as mgd compile does.
  Graph Compiled(std::vector<std::vector<float>>* outputs = nullptr) {
    CompiledEntryCollector collected;  // outlives the delegate
    auto delegate = Delegate(GetParam().api, GetParam().fp16, false, &collected);
    Graph model = Model();
    auto ran = RunWith(model, *delegate);
    EXPECT_TRUE(ran.ok()) << ran.status();
    if (outputs != nullptr && ran.ok()) *outputs = *ran;
    EXPECT_EQ(collected.entries().size(), 1u);
    const std::vector<uint8_t> payload = SerializeCompiledFile(delegate->Target(), collected.entries());
    model.metadata[kCompiledMetadataName] = std::string(payload.begin(), payload.end());
    // Through bytes, as a file would go.
    const std::vector<uint8_t> bytes = *WriteModel(model);
    return *ReadModel(bytes.data(), bytes.size(), "compiled.tflite");
  }
  gpu::Api OtherApi() const { return GetParam().api == gpu::Api::kVulkan ? gpu::Api::kGles : gpu::Api::kVulkan; }
};

TEST_P(CompiledFileTest, LoadsWithoutCompilingAndGivesTheSameOutputs) {
  std::vector<std::vector<float>> expected;
  const Graph compiled = Compiled(&expected);
  auto delegate = Delegate(GetParam().api, GetParam().fp16);
  auto outputs = RunWith(compiled, *delegate);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(delegate->cache_events(), std::vector<std::string>{"compiled model: loaded"});
  EXPECT_EQ(*outputs, expected);  // bit for bit
  EXPECT_THAT(delegate->device().validation_messages(), ::testing::IsEmpty());
}

TEST_P(CompiledFileTest, AnotherDeviceOrPrecisionIsRefusedUnlessRecompiling) {
  std::vector<std::vector<float>> expected;
  const Graph compiled = Compiled(&expected);
  for (auto [api, fp16] : {std::pair{OtherApi(), GetParam().fp16}, std::pair{GetParam().api, !GetParam().fp16}}) {
    auto refusing = Delegate(api, fp16);
    auto refused = RunWith(compiled, *refusing);
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("the model was compiled for"));
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--recompile"));
    auto recompiling = Delegate(api, fp16, true);
    auto outputs = RunWith(compiled, *recompiling);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    ASSERT_EQ(recompiling->cache_events().size(), 1u);
    EXPECT_THAT(recompiling->cache_events()[0], HasSubstr("compiled model: recompiling"));
    // Another backend or precision: the model's answer within the fp16 bound.
    ASSERT_EQ(outputs->size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k) EXPECT_LE(testing::RelativeRms((*outputs)[k], expected[k]), 1e-2);
  }
}

// Not a device mismatch: a partition the file has no entry for (other
// options, or one that fell back to the CPU when compiling) is compiled.
TEST_P(CompiledFileTest, OtherOptionsCompileWithoutRefusing) {
  std::vector<std::vector<float>> expected;
  const Graph compiled = Compiled(&expected);
  auto unfused = Delegate(GetParam().api, GetParam().fp16, false, nullptr, false);
  auto outputs = RunWith(compiled, *unfused);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(unfused->cache_events().size(), 1u);
  EXPECT_THAT(unfused->cache_events()[0], HasSubstr("compiled model: compiling (none of its 1 entries"));
  for (size_t k = 0; k < expected.size(); ++k) EXPECT_LE(testing::RelativeRms((*outputs)[k], expected[k]), 1e-2);
}

TEST_P(CompiledFileTest, DamagedEntriesAndHeadersAreRefused) {
  const Graph compiled = Compiled();
  const std::string& payload = compiled.metadata.at(kCompiledMetadataName);
  // A byte inside the entry (the entries come last): its SHA-256 no longer matches.
  Graph damaged = compiled;
  damaged.metadata[kCompiledMetadataName][payload.size() - 100] ^= 0x10;
  auto delegate = Delegate(GetParam().api, GetParam().fp16);
  auto refused = RunWith(damaged, *delegate);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("does not match (the file is damaged)"));
  // A truncated container: named as such, and recompiling still works.
  damaged.metadata[kCompiledMetadataName] = payload.substr(0, payload.size() / 2);
  auto truncated = RunWith(damaged, *Delegate(GetParam().api, GetParam().fp16));
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(std::string(truncated.status().message()), HasSubstr("exceed the data"));
  EXPECT_TRUE(RunWith(damaged, *Delegate(GetParam().api, GetParam().fp16, true)).ok());
}

void Collect(void* user_data, const char* message) { static_cast<std::string*>(user_data)->append(message); }

// Runs `model` (bytes) through the C API with a GPU delegate made from `o`;
// returns the first output, or empty with `error` set.
std::vector<float> RunC(const std::vector<uint8_t>& bytes, const MgdGpuDelegateOptions& o, std::string& error) {
  MgdModel* model = MgdModelCreateWithErrorReporter(bytes.data(), bytes.size(), Collect, &error);
  EXPECT_NE(model, nullptr) << error;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&o, Collect, &error);
  EXPECT_NE(gpu, nullptr) << error;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &error);
  MgdInterpreterOptionsAddDelegate(options, gpu);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  std::vector<float> out;
  if (interpreter != nullptr) {
    const std::vector<float> input = Input();
    EXPECT_EQ(MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), input.data(), input.size() * 4), kMgdOk);
    EXPECT_EQ(MgdInterpreterInvoke(interpreter), kMgdOk) << error;
    const MgdTensor* t = MgdInterpreterGetOutputTensor(interpreter, 0);
    out.resize(MgdTensorByteSize(t) / 4);
    EXPECT_EQ(MgdTensorCopyToBuffer(t, out.data(), out.size() * 4), kMgdOk);
    MgdInterpreterDelete(interpreter);
  }
  MgdInterpreterOptionsDelete(options);
  MgdGpuDelegateDelete(gpu);
  MgdModelDelete(model);
  return out;
}

MgdGpuDelegateOptions COptions(gpu::Api api, bool fp16) {
  MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
  o.api = api == gpu::Api::kVulkan ? kMgdGpuApiVulkan : kMgdGpuApiGles;
  o.precision_loss_allowed = fp16;
  return o;
}

TEST_P(CompiledFileTest, TheCApiLoadsCompiledModelsAndUsesTheCache) {
  std::vector<std::vector<float>> expected;
  const std::vector<uint8_t> compiled = *WriteModel(Compiled(&expected));
  std::string error;
  EXPECT_EQ(RunC(compiled, COptions(GetParam().api, GetParam().fp16), error), expected[0]) << error;
  error.clear();
  EXPECT_TRUE(RunC(compiled, COptions(OtherApi(), GetParam().fp16), error).empty());
  EXPECT_THAT(error, HasSubstr("the model was compiled for"));
  MgdGpuDelegateOptions recompile = COptions(OtherApi(), GetParam().fp16);
  recompile.allow_recompile = 1;
  error.clear();
  EXPECT_EQ(RunC(compiled, recompile, error).size(), expected[0].size()) << error;

  // The cache, with and without a model token: cold and warm agree bit for bit.
  const std::string dir = (fs::temp_directory_path() / ("mgd_c_cache_" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  const std::vector<uint8_t> plain = *WriteModel(Model());
  MgdGpuDelegateOptions cached = COptions(GetParam().api, GetParam().fp16);
  cached.cache_dir = dir.c_str();
  const std::vector<float> cold = RunC(plain, cached, error);
  const size_t entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator{});
  EXPECT_EQ(RunC(plain, cached, error), cold);
  cached.model_token = "face_detection_short_range-v1";
  EXPECT_EQ(RunC(plain, cached, error), cold);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), static_cast<long>(entries) + 1)
      << "the model token names a new entry";
  EXPECT_EQ(RunC(plain, cached, error), cold);
  // Shared programs: other code, so another entry, and the same results
  // within the op bounds.
  cached.share_programs = 1;
  const std::vector<float> shared = RunC(plain, cached, error);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), static_cast<long>(entries) + 2)
      << "share_programs names a new entry";
  ASSERT_EQ(shared.size(), cold.size()) << error;
  for (size_t i = 0; i < cold.size(); ++i) {
    ASSERT_LE(std::abs(shared[i] - cold[i]), testing::OpBound(cold[i], GetParam().fp16, 4.0)) << "element " << i;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Backends, CompiledFileTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
