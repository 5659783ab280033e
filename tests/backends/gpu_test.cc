// The GPU interface on both APIs, run for real: lavapipe and llvmpipe in CI
// (with the Vulkan validation layer on: any message fails the test), the
// NVIDIA driver on the H200. Devices, buffers and programs here; dispatches,
// recordings and barriers in gpu_dispatch_test.cc.
#include "tests/backends/gpu_fixture.h"

#include <algorithm>

#include "base/parallel.h"

namespace mgd::gpu {
namespace {

using ::testing::HasSubstr;

TEST_P(GpuTest, InfoDescribesTheDevice) {
  const GpuInfo& info = device_->info();
  EXPECT_EQ(info.api, api());
  EXPECT_FALSE(info.device_name.empty());
  EXPECT_FALSE(info.vendor.empty());
  EXPECT_FALSE(info.api_version.empty());
  EXPECT_GE(info.limits.max_workgroup_invocations, 128u);
  EXPECT_GE(info.limits.max_shared_memory_bytes, 16384u);
  EXPECT_GE(info.limits.max_storage_buffers_per_shader, 4u);
  EXPECT_GE(info.limits.max_workgroup_count[0], 65535u);
  EXPECT_FALSE(info.clamped_limits);
}

TEST_P(GpuTest, BufferRoundTripsOddSizes) {
  for (size_t size : {size_t{1}, size_t{3}, size_t{4097}, (size_t{1} << 20) + 5}) {
    auto buffer = device_->CreateBuffer(size);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    EXPECT_EQ((*buffer)->size(), size);
    std::vector<uint8_t> data(size), back(size, 0);
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
    ASSERT_TRUE(device_->Upload(**buffer, data.data(), size).ok());
    ASSERT_TRUE(device_->Download(**buffer, back.data(), size).ok());
    EXPECT_EQ(back, data) << "size " << size;
    if (size > 8) {  // a partial write at an offset leaves the rest alone
      const uint8_t patch[3] = {1, 2, 3};
      ASSERT_TRUE(device_->Upload(**buffer, patch, 3, size - 5).ok());
      uint8_t tail[5];
      ASSERT_TRUE(device_->Download(**buffer, tail, 5, size - 5).ok());
      EXPECT_EQ(tail[0], 1);
      EXPECT_EQ(tail[2], 3);
      EXPECT_EQ(tail[3], data[size - 2]);
    }
  }
}

// Device buffers and constants (written in place where device memory can be
// mapped, through staging elsewhere), megabytes of them (copied on several
// cores) and a few bytes.
TEST_P(GpuTest, UploadAllMatchesUploadsOneByOne) {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::vector<float>> values;
  std::vector<Device::UploadRequest> uploads;
  for (size_t i = 0; i < 6; ++i) {
    values.push_back(std::vector<float>(i == 5 ? size_t{1} << 20 : 3 + i * 1000, -1.0f));
    buffers.push_back(MakeBuffer(*device_, values.back(), i % 2 == 1 ? Device::Use::kConstant : Device::Use::kDevice));
    std::vector<float>& v = values.back();
    for (size_t k = 1; k < v.size(); ++k) v[k] = static_cast<float>(i * 100000 + k);  // element 0 stays: offset 4
    uploads.push_back({buffers.back().get(), v.data() + 1, (v.size() - 1) * 4, 4});
  }
  ASSERT_TRUE(device_->UploadAll(uploads).ok());
  for (size_t i = 0; i < buffers.size(); ++i) EXPECT_EQ(Read(*device_, *buffers[i]), values[i]) << "buffer " << i;
  uploads[2].offset = 8;  // one past the end: refused, naming the sizes
  EXPECT_THAT(std::string(device_->UploadAll(uploads).message()), HasSubstr("bytes at offset 8"));
}

// DownloadAll (an async invoke's outputs) reads what Download reads, each
// request at its offset, zero-byte ones skipped, and refuses one past a
// buffer's end, naming its size and offset.
TEST_P(GpuTest, DownloadAllMatchesDownloadsOneByOne) {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::vector<float>> values, read;
  std::vector<Device::DownloadRequest> downloads;
  for (size_t i = 0; i < 4; ++i) {
    values.push_back(std::vector<float>(5 + i * 700));
    for (size_t k = 0; k < values.back().size(); ++k) values.back()[k] = static_cast<float>(i * 10000 + k);
    buffers.push_back(MakeBuffer(*device_, values.back()));
    read.push_back(std::vector<float>(values.back().size() - 1, -1.0f));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    downloads.push_back({buffers[i].get(), read[i].data(), i == 2 ? 0 : read[i].size() * 4, 4});
  }
  ASSERT_TRUE(device_->DownloadAll(downloads).ok());
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::vector<float> want(values[i].begin() + 1, values[i].end());
    if (i == 2) want.assign(want.size(), -1.0f);  // zero bytes asked: untouched
    EXPECT_EQ(read[i], want) << "buffer " << i;
    std::vector<float> one(read[i].size(), -1.0f);
    ASSERT_TRUE(device_->Download(*buffers[i], one.data(), downloads[i].bytes, 4).ok());
    EXPECT_EQ(one, read[i]) << "buffer " << i << " by Download";
  }
  downloads[3].offset = 8;  // one float past the end
  const absl::Status refused = device_->DownloadAll(downloads);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.message()), HasSubstr("8416 bytes at offset 8"));
}

// A constant buffer (made mapped where GL can) works however it is filled:
// by Upload, or by a dispatch without any upload.
TEST_P(GpuTest, ConstantBuffersWorkWithoutUploadAll) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 7.0f, 0.5f};
  auto uploaded = MakeBuffer(*device_, values, Device::Use::kConstant);
  EXPECT_EQ(Read(*device_, *uploaded), values);
  auto program = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(program, nullptr);
  auto written = device_->CreateBuffer(values.size() * 4, Device::Use::kConstant);
  ASSERT_TRUE(written.ok()) << written.status();
  const uint32_t n = static_cast<uint32_t>(values.size());
  Dispatch d{program.get(), {{uploaded.get(), Access::kRead}, {written->get(), Access::kWrite}}, Params(n, 2.0f), {1, 1, 1}};
  auto recording = device_->Record({d});
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(device_->Run(**recording).ok());
  const std::vector<float> y = Read(*device_, **written);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(y[i], values[i] * 2.0f + static_cast<float>(i)) << "element " << i;
}

TEST_P(GpuTest, BufferMisuseIsAnError) {
  EXPECT_FALSE(device_->CreateBuffer(0).ok());
  auto buffer = device_->CreateBuffer(16);
  ASSERT_TRUE(buffer.ok());
  uint8_t data[32] = {};
  const absl::Status s = device_->Upload(**buffer, data, 17);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("16-byte buffer"));
  const absl::Status past = device_->Download(**buffer, data, 8, 12);
  EXPECT_FALSE(past.ok());
  EXPECT_THAT(std::string(past.message()), HasSubstr("offset 12"));
  // Nothing to copy: done at once (GL: no task for its context thread), yet
  // still checked.
  EXPECT_TRUE(device_->Upload(**buffer, data, 0, 16).ok());
  EXPECT_TRUE(device_->Download(**buffer, data, 0, 16).ok());
  EXPECT_THAT(std::string(device_->Upload(**buffer, data, 0, 20).message()), HasSubstr("offset 20"));
  if (GetParam() == Api::kGles) {  // GL knows each buffer's device (Vulkan's handles do not say)
    auto other = Open();
    ASSERT_NE(other, nullptr);
    const absl::Status foreign = other->Upload(**buffer, data, 4);
    EXPECT_THAT(std::string(foreign.message()), HasSubstr("does not belong to this GL device"));
    EXPECT_FALSE(other->Download(**buffer, data, 4).ok());
  }
}

TEST_P(GpuTest, CompileErrorNamesTheProgramAndLine) {
  const std::string body = "layout(local_size_x = 1) in;\nvoid main() {\n  undeclared_thing = 1;\n}\n";
  auto program = device_->CreateProgram({"broken_kernel", Glsl(api(), body), 0, 0, 0});
  ASSERT_FALSE(program.ok());
  const std::string message(program.status().message());
  EXPECT_THAT(message, HasSubstr("broken_kernel"));
  EXPECT_THAT(message, HasSubstr("undeclared_thing"));
  // The error is on line 3 of the body, after a 2- or 4-line prelude.
  EXPECT_THAT(message, ::testing::ContainsRegex(api() == Api::kVulkan ? ":5" : "[:(]7"));
}

// Programs made together (GL begins all before it waits for any): a broken
// one fails alone, naming itself; the others work, and so do their
// binaries when made again from them.
TEST_P(GpuTest, ProgramsMadeTogetherFailAlone) {
  const std::string broken = "layout(local_size_x = 1) in;\nvoid main() {\n  undeclared_thing = 1;\n}\n";
  std::vector<ProgramSource> sources = {{"affine_a", Glsl(api(), kAffine), 2, 8, 0},
                                        {"broken_kernel", Glsl(api(), broken), 0, 0, 0},
                                        {"affine_b", Glsl(api(), kAffine), 2, 8, 0}};
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "from source" : "from binaries");
    auto built = device_->CreatePrograms(sources, 4);
    ASSERT_EQ(built.size(), 3u);
    ASSERT_FALSE(built[1].ok());
    EXPECT_THAT(std::string(built[1].status().message()), HasSubstr("broken_kernel"));
    for (size_t i : {size_t{0}, size_t{2}}) {
      ASSERT_TRUE(built[i].ok()) << built[i].status();
      EXPECT_EQ((*built[i])->name(), sources[i].name);
      if (api() == Api::kGles) {
        // Compiled on a helper context in round 0 (when the driver has
        // binaries), yet from_binary() speaks of the caller's binaries only.
        const Program& p = **built[i];
        EXPECT_EQ(p.from_binary(), round == 1 && !sources[i].binary.empty());
        const std::vector<Program::BuildFeedback::Phase> phases = p.build_feedback().phases;
        const bool on_helper = std::any_of(phases.begin(), phases.end(),
                                           [](const auto& phase) { return std::string(phase.name).find("helper") != std::string::npos; });
        EXPECT_EQ(on_helper, round == 0 && !p.binary().empty() && MaxThreads() >= 2);
      }
      CheckAffine(*device_, 1000, 2.0f, built[i]->get());
      sources[i].spirv = (*built[i])->spirv();
      sources[i].binary = (*built[i])->binary();
    }
  }
}

TEST_P(GpuTest, SmallKernelIsExact) {
  CheckAffine(*device_, 1000, 2.0f);
  CheckAffine(*device_, 1, -0.5f);
  CheckAffine(*device_, 64 * 70 + 3, 3.0f);
}

// What a compilation cache keeps: GL program binaries load without
// compiling, a binary the driver refuses falls back to the GLSL; Vulkan
// pipeline cache data merges, and data naming another device or driver is
// refused with the field that differs; where the driver has shader module
// identifiers, one names the pipeline on a new device given the pipeline
// cache data, and an identifier it does not know means building from the
// SPIR-V.
TEST_P(GpuTest, KeptBinariesAndPipelineCachesAreReusedOrRefused) {
  auto first = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->from_binary());
  const std::string glsl = Glsl(api(), kAffine);
  if (api() == Api::kGles) {
    std::vector<uint8_t> binary = first->binary();
    if (binary.empty()) GTEST_SKIP() << "the GL driver offers no program binaries (Mesa needs its shader cache on)";
    auto loaded = device_->CreateProgram({"affine", glsl, 2, 8, 0, {}, binary});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_TRUE((*loaded)->from_binary());
    CheckAffine(*device_, 1000, 2.0f, loaded->get());
    binary[0] ^= 0x5a;  // a format tag the driver does not know
    auto refused = device_->CreateProgram({"affine", glsl, 2, 8, 0, {}, binary});
    ASSERT_TRUE(refused.ok()) << refused.status();
    EXPECT_FALSE((*refused)->from_binary());
    CheckAffine(*device_, 1000, 2.0f, refused->get());
    return;
  }
  const std::vector<uint8_t> data = device_->PipelineCacheData();
  ASSERT_GE(data.size(), 32u);  // at least VkPipelineCacheHeaderVersionOne
  EXPECT_TRUE(device_->MergePipelineCacheData(data).ok());
  auto second = device_->CreateProgram({"affine", glsl, 2, 8, 0, first->spirv()});
  ASSERT_TRUE(second.ok()) << second.status();
  CheckAffine(*device_, 1000, 2.0f, second->get());
  auto changed = [&](size_t at) {
    std::vector<uint8_t> d = data;
    d[at] ^= 0x01;
    return std::string(device_->MergePipelineCacheData(d).message());
  };
  EXPECT_THAT(changed(8), HasSubstr("made by device"));      // vendorID
  EXPECT_THAT(changed(12), HasSubstr("made by device"));     // deviceID
  EXPECT_THAT(changed(20), HasSubstr("another driver"));     // pipelineCacheUUID
  EXPECT_THAT(changed(4), HasSubstr("header version"));
  EXPECT_THAT(std::string(device_->MergePipelineCacheData({data.begin(), data.begin() + 10}).message()),
              HasSubstr("shorter than its header"));

  std::vector<uint8_t> identifier = first->binary();
  if (identifier.empty()) return;  // no VK_EXT_shader_module_identifier (lavapipe)
  std::unique_ptr<Device> fresh = Open();
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->MergePipelineCacheData(data).ok());
  auto named = fresh->CreateProgram({"affine", glsl, 2, 8, 0, first->spirv(), identifier});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE((*named)->from_binary());
  CheckAffine(*fresh, 1000, 2.0f, named->get());
  for (size_t at : {size_t{0}, identifier.size() - 1}) {  // the algorithm's UUID, the identifier
    std::vector<uint8_t> unknown = identifier;
    unknown[at] ^= 0x5a;
    auto built = fresh->CreateProgram({"affine", glsl, 2, 8, 0, first->spirv(), unknown});
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_FALSE((*built)->from_binary()) << "byte " << at;
    CheckAffine(*fresh, 1000, 2.0f, built->get());
  }
  EXPECT_THAT(fresh->validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(BothApis, GpuTest, ::testing::Values(Api::kVulkan, Api::kGles),
                         [](const ::testing::TestParamInfo<Api>& info) { return std::string(ApiName(info.param)); });

}  // namespace
}  // namespace mgd::gpu
