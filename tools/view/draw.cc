#include "draw.h"

#include <mgd/pipeline.h>

#include <algorithm>
#include <cmath>

#include "stb_easy_font.h"

namespace view {
namespace {

// Both programs' vertices: a position in window pixels and, per program,
// texture coordinates (xy) or a colour.
constexpr const char* kVertex = R"(#version 300 es
layout(location = 0) in vec2 position;
layout(location = 1) in vec4 payload;
uniform vec2 viewport;
out vec4 along;
void main() {
  along = payload;
  gl_Position = vec4(position.x * 2.0 / viewport.x - 1.0, 1.0 - position.y * 2.0 / viewport.y, 0.0, 1.0);
})";

// mode 0: the frame; 1: a mask as a tint; 2: a heat map (a blue-green-red
// ramp) of 8-bit values; 3: the same of float values from lo to hi, of
// the one channel, the second of two, or the largest of more.
constexpr const char* kImageFragment = R"(#version 300 es
precision highp float;
uniform highp sampler2D image;
uniform int mode;
uniform vec4 tint;
uniform float lo, hi;
uniform int channels;
in vec4 along;  // texture coordinates
out vec4 color;
vec4 Ramp(float v) {
  return vec4(clamp(vec3(1.5) - abs(4.0 * v - vec3(3.0, 2.0, 1.0)), 0.0, 1.0), 0.55);
}
void main() {
  vec4 t = texture(image, along.xy);
  if (mode == 0) {
    color = vec4(t.rgb, 1.0);
  } else if (mode == 1) {
    color = vec4(tint.rgb, tint.a * t.r);
  } else if (mode == 2) {
    color = Ramp(t.r);
  } else {
    float v = channels == 1 ? t.r : channels == 2 ? t.g : channels == 3 ? max(t.r, max(t.g, t.b)) : max(max(t.r, t.g), max(t.b, t.a));
    color = Ramp(clamp((v - lo) / (hi - lo), 0.0, 1.0));
  }
})";

constexpr const char* kFlatFragment = R"(#version 300 es
precision mediump float;
in vec4 along;  // the colour
out vec4 color;
void main() { color = along; })";

GLuint Compile(GLenum stage, const char* source, std::string& error) {
  GLuint shader = glCreateShader(stage);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(shader, sizeof(log), nullptr, log);
    error = std::string("a drawing shader does not compile: ") + log;
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

GLuint Link(const char* vertex, const char* fragment, std::string& error) {
  GLuint vs = Compile(GL_VERTEX_SHADER, vertex, error);
  GLuint fs = vs != 0 ? Compile(GL_FRAGMENT_SHADER, fragment, error) : 0;
  if (fs == 0) {
    glDeleteShader(vs);
    return 0;
  }
  GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    error = "a drawing program does not link";
    glDeleteProgram(program);
    return 0;
  }
  return program;
}

GLuint NewTexture(GLint filter = GL_LINEAR) {
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return texture;
}

}  // namespace

Placement Fit(int frame_width, int frame_height, int window_width, int window_height) {
  Placement p;
  p.scale = std::min(static_cast<float>(window_width) / frame_width, static_cast<float>(window_height) / frame_height);
  p.x = std::floor((window_width - frame_width * p.scale) / 2.0f);
  p.y = std::floor((window_height - frame_height * p.scale) / 2.0f);
  return p;
}

Canvas::~Canvas() {
  glDeleteProgram(image_program_);
  glDeleteProgram(flat_program_);
  glDeleteTextures(1, &frame_texture_);
  glDeleteTextures(1, &grid_texture_);
  glDeleteTextures(1, &float_texture_);
  glDeleteBuffers(1, &staging_);
  glDeleteBuffers(1, &vertex_buffer_);
  glDeleteVertexArrays(1, &vertex_array_);
}

bool Canvas::Init(std::string& error) {
  image_program_ = Link(kVertex, kImageFragment, error);
  flat_program_ = image_program_ != 0 ? Link(kVertex, kFlatFragment, error) : 0;
  if (flat_program_ == 0) return false;
  auto image = [&](const char* name) { return glGetUniformLocation(image_program_, name); };
  image_uniforms_ = {image("viewport"), image("mode"), image("tint"), image("lo"), image("hi"), image("channels")};
  flat_viewport_ = glGetUniformLocation(flat_program_, "viewport");
  frame_texture_ = NewTexture();
  grid_texture_ = NewTexture();
  float_texture_ = NewTexture(GL_NEAREST);  // float textures filter only with OES_texture_float_linear
  glGenVertexArrays(1, &vertex_array_);
  glGenBuffers(1, &vertex_buffer_);
  glBindVertexArray(vertex_array_);
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
  glEnableVertexAttribArray(0);
  glEnableVertexAttribArray(1);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  return glGetError() == GL_NO_ERROR || (error = "OpenGL ES failed to set up the drawing", false);
}

void Canvas::Begin(int width, int height) {
  width_ = width;
  height_ = height;
  glViewport(0, 0, width, height);
  glClearColor(0.08f, 0.08f, 0.1f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

void Canvas::DrawTexture(GLuint texture, const Frame& frame, const Placement& at, int mode, const Color& tint, float lo,
                         float hi, int channels) {
  const auto [x0, y0] = at(0.0f, 0.0f);
  const auto [x1, y1] = at(static_cast<float>(frame.width), static_cast<float>(frame.height));
  const float quad[] = {x0, y0, 0, 0, x1, y0, 1, 0, x0, y1, 0, 1, x1, y1, 1, 1};
  glUseProgram(image_program_);
  const ImageUniforms& u = image_uniforms_;
  glUniform2f(u.viewport, static_cast<float>(width_), static_cast<float>(height_));
  glUniform1i(u.mode, mode);
  glUniform4fv(u.tint, 1, tint.data());
  glUniform1f(u.lo, lo);
  glUniform1f(u.hi, hi > lo ? hi : lo + 1.0f);
  glUniform1i(u.channels, channels);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, texture);
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
  glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STREAM_DRAW);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), nullptr);
  glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), reinterpret_cast<void*>(2 * sizeof(float)));
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

// `pixels`: host memory, or an offset into the bound GL_PIXEL_UNPACK_BUFFER.
void Canvas::SizeFrameTexture(const Frame& frame, const void* pixels) {
  glBindTexture(GL_TEXTURE_2D, frame_texture_);
  const GLenum format = frame.channels == 4 ? GL_RGBA : GL_RGB;
  if (frame.width != texture_width_ || frame.height != texture_height_ || frame.channels != texture_channels_) {
    glTexImage2D(GL_TEXTURE_2D, 0, frame.channels == 4 ? GL_RGBA8 : GL_RGB8, frame.width, frame.height, 0, format,
                 GL_UNSIGNED_BYTE, pixels);
    texture_width_ = frame.width;
    texture_height_ = frame.height;
    texture_channels_ = frame.channels;
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, frame.width, frame.height, format, GL_UNSIGNED_BYTE, pixels);
  }
}

void Canvas::DrawFrame(const Frame& frame, const Placement& at) {
  SizeFrameTexture(frame, frame.pixels.data());
  DrawTexture(frame_texture_, frame, at, 0, {});
}

void Canvas::UploadFrameBuffer(const Frame& frame, unsigned shared) {
  if (staging_ == 0) glGenBuffers(1, &staging_);
  const auto bytes = static_cast<GLsizeiptr>(frame.pixels.size());
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, staging_);
  glBufferData(GL_PIXEL_UNPACK_BUFFER, bytes, frame.pixels.data(), GL_STREAM_DRAW);
  SizeFrameTexture(frame, nullptr);  // from the buffer, on the GPU
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  // A GPU copy: a shared buffer may be imported memory, which GL cannot
  // respecify or write from the host.
  glBindBuffer(GL_COPY_READ_BUFFER, staging_);
  glBindBuffer(GL_COPY_WRITE_BUFFER, shared);
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, bytes);
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  // The delegate reads it next, in another context or API: finished GL
  // work is what both see.
  glFinish();
}

void Canvas::DrawFrameFromBuffer(const Frame& frame, const Placement& at) { DrawTexture(frame_texture_, frame, at, 0, {}); }

bool Canvas::BufferRange(const GpuGrid& grid, float& lo, float& hi) {
  const size_t count = static_cast<size_t>(grid.width) * grid.height * grid.channels;
  glBindBuffer(GL_COPY_READ_BUFFER, grid.buffer);
  const auto* v = static_cast<const float*>(
      glMapBufferRange(GL_COPY_READ_BUFFER, 0, static_cast<GLsizeiptr>(count * sizeof(float)), GL_MAP_READ_BIT));
  if (v != nullptr) {
    const auto [min, max] = std::minmax_element(v, v + count);
    lo = *min >= 0.0f && *max <= 1.0f ? 0.0f : *min;  // probabilities keep their scale
    hi = *min >= 0.0f && *max <= 1.0f ? 1.0f : *max;
    glUnmapBuffer(GL_COPY_READ_BUFFER);
  }
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  return v != nullptr;
}

void Canvas::DrawHeatFromBuffer(const GpuGrid& grid, const Frame& frame, const Placement& at) {
  static constexpr GLenum kFormats[] = {GL_RED, GL_RG, GL_RGB, GL_RGBA};
  static constexpr GLenum kInternal[] = {GL_R32F, GL_RG32F, GL_RGB32F, GL_RGBA32F};
  const size_t k = static_cast<size_t>(std::clamp(grid.channels, 1, 4) - 1);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, grid.buffer);
  glBindTexture(GL_TEXTURE_2D, float_texture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(kInternal[k]), grid.width, grid.height, 0, kFormats[k], GL_FLOAT, nullptr);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  DrawTexture(float_texture_, frame, at, 3, {}, grid.lo, grid.hi, grid.channels);
}

// The grid's values mapped lo..hi to 0..255, as an 8-bit texture (linear
// filtering of 8-bit textures is in every GLES 3.0).
void Canvas::UploadGrid(const Grid& grid) {
  std::vector<uint8_t> bytes(grid.values.size());
  const float scale = 255.0f / (grid.hi - grid.lo);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(std::clamp((grid.values[i] - grid.lo) * scale + 0.5f, 0.0f, 255.0f));
  }
  glBindTexture(GL_TEXTURE_2D, grid_texture_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, grid.width, grid.height, 0, GL_RED, GL_UNSIGNED_BYTE, bytes.data());
}

void Canvas::DrawMask(const Grid& mask, const Frame& frame, const Placement& at, const Color& tint) {
  UploadGrid(mask);
  DrawTexture(grid_texture_, frame, at, 1, tint);
}

void Canvas::DrawHeat(const Grid& heat, const Frame& frame, const Placement& at) {
  UploadGrid(heat);
  DrawTexture(grid_texture_, frame, at, 2, {});
}

void Canvas::Rect(float x, float y, float w, float h, const Color& c) {
  const float corners[6][2] = {{x, y}, {x + w, y}, {x, y + h}, {x + w, y}, {x + w, y + h}, {x, y + h}};
  for (const auto& p : corners) triangles_.insert(triangles_.end(), {p[0], p[1], c[0], c[1], c[2], c[3]});
}

void Canvas::Line(float x0, float y0, float x1, float y1, float width, const Color& c) {
  const float dx = x1 - x0, dy = y1 - y0, length = std::hypot(dx, dy);
  if (length == 0.0f) return;
  const float nx = -dy / length * width / 2.0f, ny = dx / length * width / 2.0f;
  const float corners[6][2] = {{x0 + nx, y0 + ny}, {x1 + nx, y1 + ny}, {x0 - nx, y0 - ny},
                               {x1 + nx, y1 + ny}, {x1 - nx, y1 - ny}, {x0 - nx, y0 - ny}};
  for (const auto& p : corners) triangles_.insert(triangles_.end(), {p[0], p[1], c[0], c[1], c[2], c[3]});
}

void Canvas::Outline(float x, float y, float w, float h, float width, const Color& c) {
  Rect(x, y, w, width, c);
  Rect(x, y + h - width, w, width, c);
  Rect(x, y + width, width, h - 2 * width, c);
  Rect(x + w - width, y + width, width, h - 2 * width, c);
}

void Canvas::Dot(float x, float y, float radius, const Color& c) { Rect(x - radius, y - radius, 2 * radius, 2 * radius, c); }

float Canvas::Text(float x, float y, const std::string& text, float scale, const Color& c) {
  // stb_easy_font writes quads of 4 vertices (x, y, z, then 4 colour bytes).
  struct Vertex {
    float x, y, z;
    unsigned char rgba[4];
  };
  std::vector<Vertex> quads(text.size() * 4 * 16 + 64);
  std::string copy = text;
  const int count = stb_easy_font_print(0.0f, 0.0f, copy.data(), nullptr, quads.data(),
                                        static_cast<int>(quads.size() * sizeof(Vertex)));
  for (int q = 0; q < count; ++q) {
    const Vertex* v = &quads[static_cast<size_t>(q) * 4];
    for (int k : {0, 1, 2, 0, 2, 3}) {
      triangles_.insert(triangles_.end(), {x + v[k].x * scale, y + v[k].y * scale, c[0], c[1], c[2], c[3]});
    }
  }
  return stb_easy_font_width(copy.data()) * scale;
}

void Canvas::Flush() {
  if (triangles_.empty()) return;
  glUseProgram(flat_program_);
  glUniform2f(flat_viewport_, static_cast<float>(width_), static_cast<float>(height_));
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(triangles_.size() * sizeof(float)), triangles_.data(),
               GL_STREAM_DRAW);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, 6 * sizeof(float), reinterpret_cast<void*>(2 * sizeof(float)));
  glDrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(triangles_.size() / 6));
  triangles_.clear();
}

namespace {
void Collect(void* error, const char* message) { *static_cast<std::string*>(error) = message; }
}  // namespace

bool Canvas::Save(const std::string& path, std::string& error) const {
  std::vector<uint8_t> rgba(static_cast<size_t>(width_) * height_ * 4);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  // GL's rows run bottom to top; a PNG's top to bottom. Alpha is dropped.
  std::vector<uint8_t> rgb(static_cast<size_t>(width_) * height_ * 3);
  for (int y = 0; y < height_; ++y) {
    const uint8_t* in = &rgba[static_cast<size_t>(height_ - 1 - y) * width_ * 4];
    uint8_t* out = &rgb[static_cast<size_t>(y) * width_ * 3];
    for (int x = 0; x < width_; ++x) std::copy(in + 4 * x, in + 4 * x + 3, out + 3 * x);
  }
  const MgdImage image{width_, height_, 3, rgb.data()};
  return MgdImageWritePng(&image, path.c_str(), Collect, &error) == kMgdOk;
}

}  // namespace view
