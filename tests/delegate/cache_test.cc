// The compilation cache: a warm start gives bit-identical outputs from the
// entry; every single-byte flip, truncation, swap of two entries and index
// corruption is detected, falls back to a clean compile with correct results
// and leaves a good entry; other options never reuse an entry.
#include "delegate/cache.h"
#include "delegate/serialize.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <fstream>

#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

namespace fs = std::filesystem;
struct Result {
  std::vector<std::vector<float>> outputs;
  std::vector<std::string> events;
};

class CacheTest : public testing::DelegateTest {
 protected:
  // Runs `model` with a new delegate using the cache in `dir_`.
  Result RunCached(const std::string& model, bool fp16 = false, bool fusion = true) const {
    auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
    EXPECT_TRUE(graph.ok()) << graph.status();
    return RunCachedGraph(*graph, model, fp16, fusion);
  }
  // `graph` with the input of `model`.
  Result RunCachedGraph(const Graph& graph, const std::string& model, bool fp16 = false, bool fusion = true) const {
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(fp16);
    options.fusion = fusion;
    options.validation = true;
    options.cache_dir = dir_;
    auto delegate = GpuDelegate::Create(options);
    EXPECT_TRUE(delegate.ok()) << delegate.status();
    const auto input = testing::ReadF32(testing::DataPath("reference/" + model + "/image/input_0.f32"));
    Result r{Run(graph, {input}, delegate->get()), (*delegate)->cache_events()};
    EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
    return r;
  }

  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    testing::DelegateTest::TearDown();
  }

  std::string dir_;
};

std::string TempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("mgd_cache_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir.string();
}

std::vector<uint8_t> Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void Write(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// An entry without what the driver made (pipeline cache data, program
// binaries), which need not come out the same twice.
std::vector<uint8_t> WithoutDriverData(const std::vector<uint8_t>& bytes) {
  auto model = ParseCompiledModel(bytes.data(), bytes.size());
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  model->pipeline_cache.clear();
  for (CompiledDispatch& d : model->dispatches) d.binary.clear();
  return SerializeCompiledModel(*model);
}

// The one entry file of a cache folder holding one entry.
fs::path Entry(const std::string& dir) {
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() == ".mgcm") return f.path();
  }
  return {};
}

TEST_P(CacheTest, WarmStartsAreIdenticalAndEveryCorruptionIsCaught) {
  dir_ = TempDir(std::string("walk_") + gpu::ApiName(GetParam().api));
  const std::string& dir = dir_;
  const Result cold = RunCached("face_detection_short_range");
  EXPECT_EQ(cold.events, (std::vector<std::string>{"miss: no index", "stored"}));
  const Result warm = RunCached("face_detection_short_range");
  EXPECT_EQ(warm.events, (std::vector<std::string>{"hit"}));
  ASSERT_EQ(warm.outputs.size(), cold.outputs.size());
  for (size_t k = 0; k < cold.outputs.size(); ++k) {
    EXPECT_EQ(std::memcmp(warm.outputs[k].data(), cold.outputs[k].data(), cold.outputs[k].size() * 4), 0) << "output " << k;
  }
  const fs::path entry = Entry(dir);
  const std::vector<uint8_t> good = Read(entry);
  ASSERT_GT(good.size(), 1000u);
  auto expect_recovery = [&](const std::string& what) {
    SCOPED_TRACE(what);
    const Result r = RunCached("face_detection_short_range");
    ASSERT_EQ(r.events.size(), 2u);
    EXPECT_THAT(r.events[0], ::testing::StartsWith("miss: "));
    EXPECT_EQ(r.events[1], "stored");
    ASSERT_EQ(r.outputs.size(), cold.outputs.size());
    for (size_t k = 0; k < cold.outputs.size(); ++k) {
      EXPECT_EQ(std::memcmp(r.outputs[k].data(), cold.outputs[k].data(), cold.outputs[k].size() * 4), 0) << "output " << k;
    }
    // Overwritten with a good entry, indexed: the same compiled model (the
    // driver's pipeline cache and program binaries may differ run to run).
    std::string why;
    const auto stored = CompilationCache(dir).Load(entry.stem().string(), why);
    ASSERT_TRUE(stored.has_value()) << why;
    EXPECT_EQ(WithoutDriverData(std::vector<uint8_t>(stored->begin(), stored->end())), WithoutDriverData(good));
  };
  // Single-byte flips spread over the whole entry (the header, the tables,
  // the shader text, the constants, the last byte).
  for (size_t at : {size_t{0}, size_t{5}, size_t{9}, size_t{100}, good.size() / 7, good.size() / 3, good.size() / 2,
                    good.size() - 1}) {
    std::vector<uint8_t> flipped = good;
    flipped[at] ^= 0x40;
    Write(entry, flipped);
    expect_recovery("flip at " + std::to_string(at));
  }
  for (size_t n : {size_t{0}, size_t{7}, good.size() / 2, good.size() - 1}) {
    Write(entry, std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n)));
    expect_recovery("truncated to " + std::to_string(n));
  }
  fs::remove(entry);
  expect_recovery("entry deleted");
  // The index: a changed hash.
  const fs::path index = fs::path(dir) / "index";
  std::vector<uint8_t> text = Read(index);
  text[text.size() - 2] = text[text.size() - 2] == 'a' ? 'b' : 'a';
  Write(index, text);
  expect_recovery("index hash changed");
}

TEST_P(CacheTest, SwappedEntriesAndOtherOptionsAreNotReused) {
  dir_ = TempDir(std::string("swap_") + gpu::ApiName(GetParam().api));
  const std::string& dir = dir_;
  const Result fp32 = RunCached("face_detection_short_range", false);
  const Result fp16 = RunCached("face_detection_short_range", true);  // another token: another entry
  EXPECT_EQ(fp16.events, (std::vector<std::string>{"miss: no entry", "stored"}));
  const Result unfused = RunCached("face_detection_short_range", false, /*fusion=*/false);
  EXPECT_EQ(unfused.events, (std::vector<std::string>{"miss: no entry", "stored"}));
  std::vector<fs::path> entries;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() == ".mgcm") entries.push_back(f.path());
  }
  ASSERT_EQ(entries.size(), 3u);
  // Swap two entries' files: each hash now names the other's bytes.
  const auto a = Read(entries[0]), b = Read(entries[1]);
  Write(entries[0], b);
  Write(entries[1], a);
  for (bool fp16_run : {false, true}) {
    const Result r = RunCached("face_detection_short_range", fp16_run);
    ASSERT_FALSE(r.events.empty());
    // The swapped pair misses (and is repaired); the third entry was not touched.
    if (r.events[0] != "hit") {
      EXPECT_THAT(r.events[0], ::testing::HasSubstr("SHA-256 does not match"));
    }
    const Result again = RunCached("face_detection_short_range", fp16_run);
    EXPECT_EQ(again.events, (std::vector<std::string>{"hit"}));
    const auto& reference = fp16_run ? fp16.outputs : fp32.outputs;
    for (size_t k = 0; k < reference.size(); ++k) {
      EXPECT_EQ(std::memcmp(r.outputs[k].data(), reference[k].data(), reference[k].size() * 4), 0);
    }
  }
}

// The token names every weight the partition reads: one bit of one weight
// changed is another entry (and a correct run), under the same key; each
// model again finds its own entry among the two.
TEST_P(CacheTest, OneChangedWeightIsAnotherEntry) {
  dir_ = TempDir(std::string("weight_") + gpu::ApiName(GetParam().api));
  const std::string model = "face_detection_short_range";
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(RunCachedGraph(*graph, model).events, (std::vector<std::string>{"miss: no index", "stored"}));
  Tensor* largest = nullptr;
  for (Tensor& t : graph->tensors) {
    if (t.is_constant && (largest == nullptr || t.data.size() > largest->data.size())) largest = &t;
  }
  ASSERT_TRUE(largest != nullptr && largest->data.size() > 32);
  largest->data.mutable_data()[32] ^= 1;  // a low bit of one weight
  const Result changed = RunCachedGraph(*graph, model);
  EXPECT_EQ(changed.events, (std::vector<std::string>{"miss: no entry for these weights", "stored"}));
  largest->data.mutable_data()[32] ^= 1;
  const Result original = RunCachedGraph(*graph, model);
  EXPECT_EQ(original.events, (std::vector<std::string>{"hit"}));
  largest->data.mutable_data()[32] ^= 1;
  const Result changed_again = RunCachedGraph(*graph, model);
  EXPECT_EQ(changed_again.events, (std::vector<std::string>{"hit"}));
  ASSERT_EQ(changed_again.outputs.size(), changed.outputs.size());
  for (size_t k = 0; k < changed.outputs.size(); ++k) {
    EXPECT_EQ(std::memcmp(changed_again.outputs[k].data(), changed.outputs[k].data(), changed.outputs[k].size() * 4), 0);
  }
}

// A changed driver version, GPU, API, mgd build, format, table, option,
// partition or model gives another key, hence token, so no entry is ever
// reused across them (an entry is used only under its token).
TEST(CacheTokenTest, EveryPartChangesTheToken) {
  const TokenParts base{"0.1.0+abc", 3, "vulkan", "NVIDIA H200", "NVIDIA", "550.54.15", "1.3.277", false,
                        "tables", "fp16 1 fusion 1 nodes 1,2,3", "model-hash"};
  std::set<std::string> tokens{CacheKey(base)};
  EXPECT_EQ(CacheKey(base), CacheKey(TokenParts(base)));  // deterministic
  const std::vector<std::function<void(TokenParts&)>> changes = {
      [](TokenParts& p) { p.build_id = "0.1.0+abd"; },     [](TokenParts& p) { p.format = 4; },
      [](TokenParts& p) { p.api = "gl"; },                 [](TokenParts& p) { p.device = "NVIDIA H100"; },
      [](TokenParts& p) { p.vendor = "Mesa"; },            [](TokenParts& p) { p.driver = "550.54.16"; },
      [](TokenParts& p) { p.api_version = "1.3.278"; },    [](TokenParts& p) { p.clamped_limits = true; },
      [](TokenParts& p) { p.tables = "tables2"; },          [](TokenParts& p) { p.partition = "fp16 0 fusion 1 nodes 1,2,3"; },
      [](TokenParts& p) { p.model = "model-hash2"; },
      // Moving text from one field to the next is another set of parts too.
      [](TokenParts& p) { p.device = "NVIDIA"; p.vendor = "H200NVIDIA"; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    TokenParts changed = base;
    changes[i](changed);
    EXPECT_TRUE(tokens.insert(CacheKey(changed)).second) << "change " << i << " kept the key";
  }
  // The constants' hashes: each set another token; none (an app's model
  // token) the key itself.
  const std::string key = CacheKey(base);
  EXPECT_EQ(CacheToken(key, {}), key);
  for (const std::vector<std::string>& hashes : std::vector<std::vector<std::string>>{{"a"}, {"b"}, {"a", "b"}, {"a b"}, {"ab"}}) {
    EXPECT_TRUE(tokens.insert(CacheToken(key, hashes)).second) << "constants " << ::testing::PrintToString(hashes);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CacheTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, false}),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
