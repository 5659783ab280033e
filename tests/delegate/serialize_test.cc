// The compiled-model format: every test model (fp32 and fp16) round-trips
// byte for byte; every truncation and every kind of corruption is an error
// naming the field, never a crash (the fuzzer goes further).
#include "delegate/serialize.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <fstream>

#include "delegate/cache.h"
#include "delegate/compile_only.h"
#include "delegate/compiled_file.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "shaders/dialect.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

using ::testing::HasSubstr;

std::vector<CompiledModel> Compile(const std::string& model, bool fp16) {
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  CompileOptions options;
  options.precision = Precision::Of(fp16);
  CompileOnlyDelegate delegate(options);
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(&delegate);
  EXPECT_TRUE(Interpreter::Create(std::move(*graph), std::move(interpreter_options)).ok());
  return delegate.compiled();
}

std::string Error(const std::vector<uint8_t>& bytes) {
  auto parsed = ParseCompiledModel(bytes.data(), bytes.size());
  return parsed.ok() ? "parsed" : std::string(parsed.status().message());
}

TEST(CompiledModelFormat, EveryTestModelRoundTrips) {
  for (const char* model : {"face_detection_short_range", "face_landmark", "hand_landmark_lite", "palm_detection_lite",
                            "pose_landmark_lite", "selfie_segmentation"}) {
    for (bool fp16 : {false, true}) {
      SCOPED_TRACE(std::string(model) + (fp16 ? " fp16" : " fp32"));
      const std::vector<CompiledModel> compiled = Compile(model, fp16);
      ASSERT_EQ(compiled.size(), 1u);
      const std::vector<uint8_t> bytes = SerializeCompiledModel(compiled[0]);
      auto parsed = ParseCompiledModel(bytes.data(), bytes.size());
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(SerializeCompiledModel(*parsed), bytes);
      EXPECT_EQ(parsed->dispatches.size(), compiled[0].dispatches.size());
      EXPECT_EQ(parsed->dispatches.back().code.body, compiled[0].dispatches.back().code.body);
    }
  }
}

// A warm start parses its entry in place: the constants are views into the
// bytes read (which they keep alive), the same bytes a copying parse gives.
TEST(CompiledModelFormat, ParsingInPlaceKeepsConstantsInTheEntry) {
  const std::vector<uint8_t> bytes = SerializeCompiledModel(Compile("face_landmark", true)[0]);
  auto copied = ParseCompiledModel(bytes.data(), bytes.size());
  ASSERT_TRUE(copied.ok()) << copied.status();
  auto entry = std::make_shared<const Bytes>(bytes.begin(), bytes.end());
  auto in_place = ParseCompiledModel(entry);
  ASSERT_TRUE(in_place.ok()) << in_place.status();
  ASSERT_EQ(in_place->constants.size(), copied->constants.size());
  ASSERT_FALSE(in_place->constants.empty());
  const uint8_t* begin = entry->data();
  const uint8_t* end = begin + entry->size();
  for (size_t i = 0; i < in_place->constants.size(); ++i) {
    const ConstantBytes& c = in_place->constants[i];
    EXPECT_TRUE(c.data() >= begin && c.data() + c.size() <= end) << "constant " << i << " was copied";
    ASSERT_EQ(c.size(), copied->constants[i].size());
    EXPECT_EQ(std::memcmp(c.data(), copied->constants[i].data(), c.size()), 0) << "constant " << i;
  }
  entry.reset();  // the model holds the entry's bytes on its own
  EXPECT_EQ(SerializeCompiledModel(*in_place), bytes);
  EXPECT_FALSE(ParseCompiledModel(std::make_shared<const Bytes>(bytes.begin(), bytes.end() - 1)).ok());
}

// fp16 stores weights as fp16 too: 2 bytes per value, read through
// weights_at() from uvec2 words; fp32 keeps vec4.
TEST(CompiledModelFormat, Fp16WeightsAreStoredAsHalves) {
  for (bool fp16 : {false, true}) {
    SCOPED_TRACE(fp16 ? "fp16" : "fp32");
    const CompiledModel m = Compile("face_detection_short_range", fp16)[0];
    size_t conv_dispatches = 0;
    for (const CompiledDispatch& d : m.dispatches) {
      const auto weights = std::find_if(d.code.buffers.begin(), d.code.buffers.end(),
                                        [](const shaders::BufferDecl& b) { return b.name == "weights"; });
      if (weights == d.code.buffers.end()) continue;
      ++conv_dispatches;
      const std::string glsl = shaders::Emit(shaders::Dialect::kVulkan, d.code);
      EXPECT_THAT(glsl, HasSubstr(fp16 ? "uvec2 weights[]" : "vec4 weights[]")) << d.code.name;
      EXPECT_THAT(d.code.body, HasSubstr("weights_at(")) << d.code.name;
      EXPECT_THAT(d.code.body, ::testing::Not(HasSubstr("weights["))) << d.code.name;
      // Binding i is buffer declaration i.
      const size_t at = static_cast<size_t>(weights - d.code.buffers.begin());
      ASSERT_LT(at, d.bindings.size()) << d.code.name;
      const CompiledBuffer& buffer = m.buffers[static_cast<size_t>(d.bindings[at].buffer)];
      ASSERT_EQ(buffer.role, BufferRole::kConstant) << d.code.name;
      EXPECT_EQ(buffer.bytes % (fp16 ? 8 : 16), 0u) << d.code.name;  // whole vec4s
      EXPECT_EQ(m.constants[static_cast<size_t>(buffer.constant)].size(), buffer.bytes) << d.code.name;
    }
    EXPECT_GT(conv_dispatches, 10u);
  }
  // Half the bytes in all.
  auto total = [](const CompiledModel& m) {
    size_t bytes = 0;
    for (const ConstantBytes& c : m.constants) bytes += c.size();
    return bytes;
  };
  const size_t fp32 = total(Compile("face_detection_short_range", false)[0]);
  const size_t fp16 = total(Compile("face_detection_short_range", true)[0]);
  EXPECT_LT(fp16 * 10, fp32 * 6) << fp16 << " vs " << fp32;
}

TEST(CompiledModelFormat, TruncationsAndCorruptionsAreErrors) {
  const std::vector<uint8_t> good = SerializeCompiledModel(Compile("face_detection_short_range", true)[0]);
  // Every prefix (in steps, through the whole file) fails cleanly.
  for (size_t n = 0; n < good.size(); n += 1 + n / 64) {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
    EXPECT_NE(Error(cut), "parsed") << n << " bytes";
  }
  // Single-byte flips anywhere: parsed or refused, never a crash.
  for (size_t at = 0; at < good.size(); at += 1 + at / 32) {
    std::vector<uint8_t> flipped = good;
    flipped[at] ^= 0xA5;
    (void)Error(flipped);
  }
  std::vector<uint8_t> bad = good;
  bad[0] ^= 1;
  EXPECT_THAT(Error(bad), HasSubstr("bad magic"));
  bad = good;
  bad[4] = 9;
  EXPECT_THAT(Error(bad), HasSubstr(fmt::format("compiled model version 9 (this mgd reads {})", kCompiledModelVersion)));
  bad = good;
  bad.push_back(0);
  EXPECT_THAT(Error(bad), HasSubstr("bytes after the model"));
  // A huge count is refused before anything is allocated.
  bad = good;
  bad[8] = bad[9] = bad[10] = bad[11] = 0xFF;
  EXPECT_THAT(Error(bad), HasSubstr("buffers at byte 12: count 4294967295 exceeds the data"));
}

TEST(CompiledModelFormat, DanglingIndicesAreRefused) {
  CompiledModel m = Compile("face_detection_short_range", false)[0];
  m.dispatches[3].bindings[0].buffer = static_cast<int>(m.buffers.size());
  EXPECT_THAT(Error(SerializeCompiledModel(m)), HasSubstr("binding.buffer"));
  m = Compile("face_detection_short_range", false)[0];
  for (CompiledBuffer& b : m.buffers) {
    if (b.object >= 0) b.offset = m.memory_objects[0];
  }
  EXPECT_THAT(Error(SerializeCompiledModel(m)), HasSubstr("does not fit memory object"));
}

// MGD_WRITE_FUZZ_SEEDS=DIR writes small seeds for the compiled-model fuzzer
// (tests/fuzz/compiled_model_seeds/ holds the committed ones).
TEST(CompiledModelFormat, WritesFuzzSeedsWhenAsked) {
  const char* dir = std::getenv("MGD_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "MGD_WRITE_FUZZ_SEEDS not set";
  CompiledModel m = Compile("face_detection_short_range", true)[0];
  for (auto& c : m.constants) c.truncate(64);  // small seeds mutate faster
  for (CompiledBuffer& b : m.buffers) {
    if (b.role == BufferRole::kConstant) b.bytes = std::min<size_t>(b.bytes, 64);
  }
  m.dispatches.resize(6);
  const std::vector<uint8_t> model = SerializeCompiledModel(m);
  ASSERT_EQ(Error(model), "parsed");  // a seed the reader accepts, for the fuzzer to mutate
  // One seed per reader of the fuzzer, behind its selector byte.
  auto write = [&](const std::string& name, uint8_t reader, const std::vector<uint8_t>& bytes) {
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.put(static_cast<char>(reader));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  write("face_detection_fp16.mgcm", 0, model);
  const std::string hash = ContentHashHex(model.data(), model.size());
  CompiledTarget target{"vulkan", "Mesa", "llvmpipe", "22.3.6", "1.3.230", false, true, "0.1.0+seed"};
  write("face_detection_fp16.mgcf", 1, SerializeCompiledFile(target, {{"k", hash, model}}));
  std::vector<uint8_t> folder;
  const std::string index = "0123abcd 4567 " + hash + "\n";  // token, key, hash
  folder.insert(folder.end(), index.begin(), index.end());
  folder.push_back(0);
  folder.insert(folder.end(), model.begin(), model.end());
  write("face_detection_fp16.cache", 2, folder);
}

}  // namespace
}  // namespace mgd
