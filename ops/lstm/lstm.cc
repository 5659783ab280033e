#include "ops/lstm/lstm.h"

#include <fmt/format.h>

#include <cmath>

#include "model/status_macros.h"
#include "model/tflite_enums.h"
#include "ops/lstm/lstm_inputs.h"
#include "ops/tflite_io.h"

namespace mgd::ops {
namespace {

std::string InputName(size_t i) { return fmt::format("input {} ({})", i, kInputNames[i]); }

absl::StatusOr<Attributes> DecodeLstm(const DecodeContext& file) {
  MGD_ASSIGN_OR_RETURN(const tflite::LSTMOptions* o, file.OptionsAs<tflite::LSTMOptions>());
  LstmAttributes a;
  if (o != nullptr) {
    if (o->kernel_type() != tflite::LSTMKernelType_FULL) {
      return file.Error("field kernel_type: only FULL is supported (BASIC is the 5-input legacy cell)");
    }
    a.activation = ActivationFromTfl(o->fused_activation_function());
    a.cell_clip = o->cell_clip();
    a.proj_clip = o->proj_clip();
  }
  return a;
}

absl::StatusOr<Attributes> DecodeSequence(const DecodeContext& file) {
  MGD_ASSIGN_OR_RETURN(const tflite::UnidirectionalSequenceLSTMOptions* o,
                       file.OptionsAs<tflite::UnidirectionalSequenceLSTMOptions>());
  LstmAttributes a;
  if (o != nullptr) {
    if (o->diagonal_recurrent_tensors()) return file.Error("field diagonal_recurrent_tensors: not supported");
    a.activation = ActivationFromTfl(o->fused_activation_function());
    a.cell_clip = o->cell_clip();
    a.proj_clip = o->proj_clip();
    a.time_major = o->time_major();
  }
  return a;
}

void EncodeLstm(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<LstmAttributes>(node.attributes);
  file.Set(tflite::CreateLSTMOptions(file.builder, ToTfl(a.activation), a.cell_clip, a.proj_clip));
}

void EncodeSequence(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<LstmAttributes>(node.attributes);
  file.Set(tflite::CreateUnidirectionalSequenceLSTMOptions(file.builder, ToTfl(a.activation), a.cell_clip,
                                                           a.proj_clip, a.time_major));
}

// The inputs present together or not at all, as TFLite's
// CheckInputTensorDimensions asks.
absl::Status Together(const NodeChecker& c, std::initializer_list<size_t> inputs, const char* what) {
  const bool first = c.Present(*inputs.begin());
  for (size_t i : inputs) {
    if (c.Present(i) != first) {
      return c.Fail(fmt::format("{} is {} but {} is {} ({}: all or none)", InputName(*inputs.begin()),
                                first ? "given" : "omitted", InputName(i), first ? "omitted" : "given", what));
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 24, 1));
  const size_t num_inputs = c.node().inputs.size();
  if (num_inputs != 20 && num_inputs != 24) {
    return c.Fail(fmt::format("has {} inputs, expected 20 or 24 (with layer normalization)", num_inputs));
  }
  for (size_t i : {kInputToForgetWeights, kInputToCellWeights, kInputToOutputWeights, kRecurrentToForgetWeights,
                   kRecurrentToCellWeights, kRecurrentToOutputWeights, kForgetGateBias, kCellGateBias,
                   kOutputGateBias, kOutputState, kCellState}) {
    if (!c.Present(i)) return c.Fail(fmt::format("{} is required but omitted", InputName(i)));
  }
  for (size_t i = 0; i < num_inputs; ++i) MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kFloat32}));
  MGD_RETURN_IF_ERROR(c.OutputType(0, DataType::kFloat32));
  if (c.node().inputs[kOutputState] == c.node().inputs[kCellState]) {
    return c.Fail(fmt::format("{} and {} are one tensor; the cell needs two", InputName(kOutputState), InputName(kCellState)));
  }
  for (size_t i : {kOutputState, kCellState}) {
    if (!c.In(i).is_variable) {
      return c.Fail(fmt::format("{} must be a variable tensor (the state the cell keeps between invokes)", InputName(i)));
    }
  }
  for (size_t i = 1; i < num_inputs; ++i) {
    if (i != kOutputState && i != kCellState && c.Present(i) && !c.In(i).is_constant) {
      return c.Fail(fmt::format("{} must be a constant tensor", InputName(i)));
    }
  }
  const Activation activation = AttributesOf<LstmAttributes>(c.node().attributes).activation;
  if (activation != Activation::kNone && activation != Activation::kRelu && activation != Activation::kRelu6 &&
      activation != Activation::kTanh) {
    return c.Fail(fmt::format("field fused_activation_function: {} is not an LSTM activation (NONE, RELU, RELU6 or TANH)",
                              ActivationName(activation)));
  }
  MGD_RETURN_IF_ERROR(Together(c, {kInputToInputWeights, kRecurrentToInputWeights, kInputGateBias}, "the input gate"));
  MGD_RETURN_IF_ERROR(Together(c, {kCellToForgetWeights, kCellToOutputWeights}, "peepholes"));
  const bool cifg = !c.Present(kInputToInputWeights);
  const bool peephole = c.Present(kCellToForgetWeights);
  if (c.Present(kCellToInputWeights) != (peephole && !cifg)) {
    return c.Fail(fmt::format("{} must be given exactly when there are peepholes and an input gate",
                              InputName(kCellToInputWeights)));
  }
  if (c.Present(kProjectionBias) && !c.Present(kProjectionWeights)) {
    return c.Fail(fmt::format("{} is given without {}", InputName(kProjectionBias), InputName(kProjectionWeights)));
  }
  if (num_inputs == 24) {
    MGD_RETURN_IF_ERROR(Together(c, {kForgetLayerNorm, kCellLayerNorm, kOutputLayerNorm}, "layer normalization"));
    const bool layer_norm = c.Present(kForgetLayerNorm);
    if (c.Present(kInputLayerNorm) != (layer_norm && !cifg)) {
      return c.Fail(fmt::format("{} must be given exactly when the gates are layer-normalized and there is an input gate",
                                InputName(kInputLayerNorm)));
    }
  }
  return absl::OkStatus();
}


// Sizes, with errors naming the input whose shape does not fit.
struct CellShape {
  int batch = 0, time = 1, input = 0, cell = 0, output = 0;
};

class LstmKernel : public Kernel {
 public:
  explicit LstmKernel(bool sequence) : sequence_(sequence) {}

  absl::Status Prepare(KernelContext& ctx) override {
    attr_ = AttributesOf<LstmAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(kInput);
    if (x.rank() != (sequence_ ? 3 : 2)) {
      return ctx.Error(fmt::format("{} has shape {}, expected rank {}", InputName(kInput), ShapeToString(x.shape),
                                   sequence_ ? 3 : 2));
    }
    if (sequence_) {
      s_.time = x.dim(attr_.time_major ? 0 : 1);
      s_.batch = x.dim(attr_.time_major ? 1 : 0);
    } else {
      s_.batch = x.dim(0);
    }
    s_.input = x.dim(x.rank() - 1);
    const TensorRef& w = ctx.in(kInputToOutputWeights);
    const TensorRef& r = ctx.in(kRecurrentToOutputWeights);
    if (w.rank() != 2 || r.rank() != 2) {
      return ctx.Error(fmt::format("{} and {} must be matrices", InputName(kInputToOutputWeights),
                                   InputName(kRecurrentToOutputWeights)));
    }
    s_.cell = w.dim(0);
    s_.output = r.dim(1);
    const Shape cell{s_.cell}, by_input{s_.cell, s_.input}, by_output{s_.cell, s_.output};
    const std::pair<size_t, Shape> expected[] = {
        {kInputToInputWeights, by_input},      {kInputToForgetWeights, by_input},
        {kInputToCellWeights, by_input},       {kInputToOutputWeights, by_input},
        {kRecurrentToInputWeights, by_output}, {kRecurrentToForgetWeights, by_output},
        {kRecurrentToCellWeights, by_output},  {kRecurrentToOutputWeights, by_output},
        {kCellToInputWeights, cell},           {kCellToForgetWeights, cell},
        {kCellToOutputWeights, cell},          {kInputGateBias, cell},
        {kForgetGateBias, cell},               {kCellGateBias, cell},
        {kOutputGateBias, cell},               {kProjectionWeights, {s_.output, s_.cell}},
        {kProjectionBias, {s_.output}},        {kInputLayerNorm, cell},
        {kForgetLayerNorm, cell},              {kCellLayerNorm, cell},
        {kOutputLayerNorm, cell},
    };
    for (const auto& [i, shape] : expected) {
      if (i >= ctx.inputs.size() || ctx.inputs[i] == nullptr || ctx.in(i).shape == shape) continue;
      return ctx.Error(fmt::format("{} has shape {}, expected {}", InputName(i), ShapeToString(ctx.in(i).shape),
                                   ShapeToString(shape)));
    }
    if (ctx.inputs[kProjectionWeights] == nullptr && s_.output != s_.cell) {
      return ctx.Error(fmt::format("without projection_weights the output size ({}) must be the cell size ({})",
                                   s_.output, s_.cell));
    }
    const std::pair<size_t, int64_t> state[] = {{kOutputState, int64_t{s_.batch} * s_.output},
                                                {kCellState, int64_t{s_.batch} * s_.cell}};
    for (const auto& [i, elements] : state) {
      if (ctx.in(i).elements() != elements) {
        return ctx.Error(fmt::format("{} has shape {}, expected {} values (batch x size)", InputName(i),
                                     ShapeToString(ctx.in(i).shape), elements));
      }
    }
    cifg_ = ctx.inputs[kInputToInputWeights] == nullptr;
    gates_.assign(static_cast<size_t>(4) * s_.cell, 0.0f);  // the steps' scratch, sized once
    Shape out = x.shape;
    out.back() = s_.output;
    return ctx.ExpectOutputShape(0, out);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const float* x = ctx.in(kInput).as<float>();
    float* y = ctx.out(0).as<float>();
    float* h = ctx.in(kOutputState).as<float>();
    float* c = ctx.in(kCellState).as<float>();
    for (int b = 0; b < s_.batch; ++b) {
      for (int t = 0; t < s_.time; ++t) {
        const int64_t row = attr_.time_major || !sequence_ ? int64_t{t} * s_.batch + b : int64_t{b} * s_.time + t;
        Step(ctx, x + row * s_.input, h + int64_t{b} * s_.output, c + int64_t{b} * s_.cell);
        std::copy_n(h + int64_t{b} * s_.output, s_.output, y + row * s_.output);
      }
    }
    return absl::OkStatus();
  }

 private:
  static const float* Data(const KernelContext& ctx, size_t i) {
    return i < ctx.inputs.size() && ctx.inputs[i] != nullptr ? ctx.in(i).as<float>() : nullptr;
  }

  // One gate's value for every cell unit, as TFLite's CalculateLstmGateFloat:
  // the bias, the input and recurrent products and the peephole (with the
  // cell state `c` as it stands), layer-normalized where asked, activated.
  void GateValues(const KernelContext& ctx, size_t gate, const float* x, const float* h, const float* c,
                  float* out) const {
    const float* wx = Data(ctx, kInputToInputWeights + gate);
    const float* wh = Data(ctx, kRecurrentToInputWeights + gate);
    const float* peephole = gate == kCellGate ? nullptr : Data(ctx, kCellToInputWeights + (gate == kOutputGate ? 2 : gate));
    const float* bias = Data(ctx, kInputGateBias + gate);
    const float* norm = Data(ctx, kInputLayerNorm + gate);
    for (int j = 0; j < s_.cell; ++j) {
      double sum = norm != nullptr ? 0.0 : bias[j];
      for (int i = 0; i < s_.input; ++i) sum += double{wx[int64_t{j} * s_.input + i]} * x[i];
      for (int i = 0; i < s_.output; ++i) sum += double{wh[int64_t{j} * s_.output + i]} * h[i];
      if (peephole != nullptr) sum += double{peephole[j]} * c[j];
      out[j] = static_cast<float>(sum);
    }
    if (norm != nullptr) {  // TFLite's MeanStddevNormalization, then scale and bias
      double mean = 0.0, variance = 0.0;
      for (int j = 0; j < s_.cell; ++j) mean += out[j];
      mean /= s_.cell;
      for (int j = 0; j < s_.cell; ++j) variance += (out[j] - mean) * (out[j] - mean);
      variance /= s_.cell;
      const double inverse = 1.0 / std::sqrt(variance + 1e-8);
      for (int j = 0; j < s_.cell; ++j) out[j] = static_cast<float>((out[j] - mean) * inverse * norm[j] + bias[j]);
    }
    for (int j = 0; j < s_.cell; ++j) {
      out[j] = gate == kCellGate ? Activate(out[j]) : 1.0f / (1.0f + std::exp(-out[j]));
    }
  }

  float Activate(float v) const {
    switch (attr_.activation) {
      case Activation::kRelu: return std::max(v, 0.0f);
      case Activation::kRelu6: return std::clamp(v, 0.0f, 6.0f);
      case Activation::kTanh: return std::tanh(v);
      default: return v;
    }
  }

  static float Clip(float v, float clip) { return clip > 0.0f ? std::clamp(v, -clip, clip) : v; }

  // One time step of one batch row: reads input `x`, updates h and c.
  void Step(const KernelContext& ctx, const float* x, float* h, float* c) {
    const int n = s_.cell;
    float* input_gate = gates_.data();
    float* forget_gate = input_gate + n;
    float* cell_gate = forget_gate + n;
    float* output_gate = cell_gate + n;
    if (!cifg_) GateValues(ctx, kInputGate, x, h, c, input_gate);
    GateValues(ctx, kForgetGate, x, h, c, forget_gate);
    GateValues(ctx, kCellGate, x, h, c, cell_gate);
    for (int j = 0; j < n; ++j) {
      const float in = cifg_ ? 1.0f - forget_gate[j] : input_gate[j];
      c[j] = Clip(forget_gate[j] * c[j] + cell_gate[j] * in, attr_.cell_clip);
    }
    GateValues(ctx, kOutputGate, x, h, c, output_gate);  // its peephole sees the new cell state
    for (int j = 0; j < n; ++j) output_gate[j] *= Activate(c[j]);
    const float* projection = Data(ctx, kProjectionWeights);
    if (projection == nullptr) {
      std::copy_n(output_gate, n, h);
      return;
    }
    const float* bias = Data(ctx, kProjectionBias);
    for (int o = 0; o < s_.output; ++o) {
      double sum = bias != nullptr ? bias[o] : 0.0;
      for (int j = 0; j < n; ++j) sum += double{projection[int64_t{o} * n + j]} * output_gate[j];
      h[o] = Clip(static_cast<float>(sum), attr_.proj_clip);
    }
  }

  bool sequence_;
  LstmAttributes attr_;
  CellShape s_;
  bool cifg_ = false;  // no input gate: it is 1 - the forget gate
  std::vector<float> gates_;
};

}  // namespace

std::vector<OpDefinition> LstmOps() {
  return {{.op = OpKind::kLstm,
           .decode = DecodeLstm,
           .encode = EncodeLstm,
           .validate = Validate,
           .cpu_kernel = MakeKernel<LstmKernel, false>,
           .gpu = {LstmShader}},
          {.op = OpKind::kUnidirectionalSequenceLstm,
           .decode = DecodeSequence,
           .encode = EncodeSequence,
           .validate = Validate,
           .cpu_kernel = MakeKernel<LstmKernel, true>,
           .gpu = {LstmShader}}};
}

}  // namespace mgd::ops
