// The fusion planner's state as it walks a partition's nodes in order, and
// the kinds of fusion it tries on each node (one file each). A kind returns
// true when it took the node into an existing group.
#pragma once

#include <map>
#include <set>

#include "delegate/fusion.h"

namespace mgd::fusion {

class Planner {
 public:
  explicit Planner(const Subgraph& subgraph);

  const Graph& graph() const { return *subgraph_.graph; }
  const Tensor& tensor(int t) const { return subgraph_.tensor(t); }
  const Node& node(int n) const { return subgraph_.node(n); }
  int Resolve(int t) const { return subgraph_.Resolve(t); }
  bool IsAlias(int t) const { return subgraph_.aliases.count(t) > 0; }
  // Read by exactly one node of the partition and not outside it.
  bool SingleUse(int t) const;
  // The index of the group whose output is `t` when one node reads `t`
  // and `t` is no alias, so that a fusion may move the group's write
  // elsewhere; -1 otherwise (also when the group writes a part of `t`).
  int SoleWriter(int t) const;
  // Makes node `n`, which reads the output of group `index` alone, the
  // group's head: the group now computes that output inside n's shader
  // (the caller has recorded how) and writes n's outputs.
  void TakeOver(int index, int n);
  // Moves group `index` after every other (its slot left empty, head -1)
  // and returns its new index. The caller knows that no group between
  // reads what it writes.
  int MoveToEnd(int index);
  // Storage buffers a group's shader binds, at most.
  int BindingsOf(const FusedGroup& group) const;

  FusionPlan plan;
  std::map<int, int> group_of;  // tensor -> index of the group that writes it

 private:
  const Subgraph& subgraph_;
  std::map<int, int> consumers_;  // uses through an alias count as uses of its source
  std::set<int> escaping_;
};

bool FuseElementwiseTail(Planner& planner, int node);
bool FuseChannelPadIntoWrite(Planner& planner, int node);
bool FuseSpatialPadIntoRead(Planner& planner, int node);
bool FuseDepthwiseIntoPointwise(Planner& planner, int node);
bool FuseSqueezeExcite(Planner& planner, int node);
bool FuseGateIntoRead(Planner& planner, int node);
bool FuseStoreThrough(Planner& planner, int node);

}  // namespace mgd::fusion
