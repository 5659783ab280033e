// C registrations and C delegates as the interpreter's Kernel and Delegate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interpreter/c_api_parts.h"

namespace mgd::c_api {
namespace {

class RegistrationKernel : public mgd::Kernel {
 public:
  RegistrationKernel(const MgdRegistration* registration, const mgd::Node& node)
      : reg_(registration), options_(std::get<mgd::CustomAttributes>(node.attributes).options) {}
  ~RegistrationKernel() override {
    if (initialized_ && reg_->free != nullptr) {
      MgdOpContext context;
      reg_->free(&context, node_.user_data);
    }
  }

  absl::Status Prepare(mgd::KernelContext& ctx) override {
    MgdOpContext context{&ctx, true, {}};
    Bind(ctx, context);
    const Unbind unbind{reporter_};
    if (!initialized_) {
      if (reg_->init != nullptr) {
        node_.user_data = reg_->init(&context, reinterpret_cast<const char*>(options_.data()), options_.size());
      }
      initialized_ = true;
    }
    if (reg_->prepare != nullptr && reg_->prepare(&context, &node_) != kMgdOk) {
      return ctx.Error(context.error.empty() ? "custom op prepare failed" : context.error);
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(mgd::KernelContext& ctx) override {
    MgdOpContext context{&ctx, false, {}};
    Bind(ctx, context);
    const Unbind unbind{reporter_};
    if (reg_->invoke(&context, &node_) != kMgdOk) {
      return ctx.Error(context.error.empty() ? "custom op invoke failed" : context.error);
    }
    return absl::OkStatus();
  }

 private:
  // After the call its context is gone: a tensor the op kept reports to
  // stderr, not into freed memory.
  struct Unbind {
    Reporter& reporter;
    ~Unbind() { reporter.capture = nullptr; }
  };
  // The node's tensors as this call sees them; their errors become the op's.
  void Bind(mgd::KernelContext& ctx, MgdOpContext& context) {
    reporter_.capture = &context.error;
    auto wrap = [&](const std::vector<mgd::TensorRef*>& refs, std::vector<MgdTensor>& out) {
      out.clear();
      for (mgd::TensorRef* t : refs) out.push_back({t, &reporter_});
    };
    wrap(ctx.inputs, node_.inputs);
    wrap(ctx.outputs, node_.outputs);
  }

  const MgdRegistration* reg_;
  std::vector<uint8_t> options_;
  MgdOpNode node_;
  Reporter reporter_;
  bool initialized_ = false;
};

class CDelegateKernel : public mgd::DelegateKernel {
 public:
  CDelegateKernel(MgdDelegate* delegate, void* kernel, const Reporter* reporter)
      : delegate_(delegate), kernel_(kernel), reporter_(reporter) {}
  ~CDelegateKernel() override {
    if (delegate_->free_kernel != nullptr) delegate_->free_kernel(delegate_->data, kernel_);
  }
  absl::Status Invoke(const std::vector<mgd::TensorRef*>& inputs, const std::vector<mgd::TensorRef*>& outputs) override {
    std::vector<MgdTensor> in, out;
    for (auto* t : inputs) in.push_back({t, reporter_});
    for (auto* t : outputs) out.push_back({t, reporter_});
    std::vector<MgdTensor*> in_ptrs, out_ptrs;
    for (MgdTensor& t : in) in_ptrs.push_back(&t);
    for (MgdTensor& t : out) out_ptrs.push_back(&t);
    if (delegate_->invoke(delegate_->data, kernel_, in_ptrs.data(), static_cast<int32_t>(in_ptrs.size()), out_ptrs.data(),
                          static_cast<int32_t>(out_ptrs.size())) != kMgdOk) {
      return absl::InternalError(fmt::format("delegate {} failed to invoke", delegate_->name ? delegate_->name : "?"));
    }
    return absl::OkStatus();
  }

 private:
  MgdDelegate* delegate_;
  void* kernel_;
  const Reporter* reporter_;
};

class CDelegate : public mgd::Delegate {
 public:
  CDelegate(MgdDelegate* delegate, const Reporter* reporter) : d_(delegate), reporter_(reporter) {}
  std::string name() const override { return d_->name != nullptr ? d_->name : "delegate"; }

  mgd::NodeSupport IsNodeSupported(const mgd::Graph& graph, int node_index) override {
    const mgd::Node& node = graph.nodes[static_cast<size_t>(node_index)];
    const auto* custom = std::get_if<mgd::CustomAttributes>(&node.attributes);
    char reason[256] = "not supported";
    const int ok = d_->is_node_supported(d_->data, node_index, static_cast<int32_t>(node.op),
                                         custom ? custom->name.c_str() : nullptr, reason, sizeof reason);
    reason[sizeof reason - 1] = '\0';
    return {ok != 0, ok != 0 ? "" : reason};
  }

  absl::StatusOr<std::unique_ptr<mgd::DelegateKernel>> Prepare(const mgd::Graph&, const mgd::Partition& p) override {
    char error[512] = "prepare failed";
    std::vector<int32_t> nodes(p.nodes.begin(), p.nodes.end()), ins(p.inputs.begin(), p.inputs.end()),
        outs(p.outputs.begin(), p.outputs.end());
    void* kernel = d_->prepare(d_->data, nodes.data(), static_cast<int32_t>(nodes.size()), ins.data(),
                               static_cast<int32_t>(ins.size()), outs.data(), static_cast<int32_t>(outs.size()), error,
                               sizeof error);
    error[sizeof error - 1] = '\0';
    if (kernel == nullptr) return absl::InternalError(error);
    return std::unique_ptr<mgd::DelegateKernel>(new CDelegateKernel(d_, kernel, reporter_));
  }

 private:
  MgdDelegate* d_;
  const Reporter* reporter_;
};

class BorrowedDelegate : public mgd::Delegate {
 public:
  explicit BorrowedDelegate(mgd::Delegate* d) : d_(d) {}
  std::string name() const override { return d_->name(); }
  mgd::NodeSupport IsNodeSupported(const mgd::Graph& graph, int node_index) override {
    return d_->IsNodeSupported(graph, node_index);
  }
  absl::StatusOr<std::unique_ptr<mgd::DelegateKernel>> Prepare(const mgd::Graph& graph, const mgd::Partition& p) override {
    return d_->Prepare(graph, p);
  }

 private:
  mgd::Delegate* d_;
};

}  // namespace

std::unique_ptr<Kernel> NewRegistrationKernel(const MgdRegistration* registration, const Node& node) {
  return std::make_unique<RegistrationKernel>(registration, node);
}

std::unique_ptr<Delegate> NewCDelegate(MgdDelegate* delegate, const Reporter* reporter) {
  return std::make_unique<CDelegate>(delegate, reporter);
}

std::unique_ptr<Delegate> NewBorrowedDelegate(Delegate* delegate) { return std::make_unique<BorrowedDelegate>(delegate); }

std::string DelegateProblem(const MgdDelegate& d) {
  if (d.native_delegate != nullptr) return "";
  std::vector<std::string> missing;
  if (d.is_node_supported == nullptr) missing.push_back("is_node_supported");
  if (d.prepare == nullptr) missing.push_back("prepare");
  if (d.invoke == nullptr) missing.push_back("invoke");
  if (missing.empty()) return "";
  return fmt::format("delegate '{}': {} {} NULL", d.name != nullptr ? d.name : "(unnamed)", fmt::join(missing, ", "),
                     missing.size() == 1 ? "is" : "are");
}

}  // namespace mgd::c_api
