#include "tools/mgd/tune_conv_settings.h"

#include <algorithm>
#include <limits>

#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/timed_invokes.h"

namespace mgd::cli {

absl::StatusOr<tuning::ConvSearch> TuneConvSettings(const std::vector<std::string>& models, const RunOptions& run,
                                                    const std::string& backend, const tuning::ConvSettings& start,
                                                    tuning::Table& table) {
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions options, DelegateOptionsFrom(run));
  options.builtin_workgroups = false;
  tuning::Table settings_only = table;
  settings_only.entries.clear();
  std::vector<Graph> graphs;  // read once for every step of the search
  for (const std::string& path : models) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    graphs.push_back(std::move(graph));
  }
  // Each model's candidates prepared together and timed in alternating
  // rounds; a candidate's time is the sum of its models' better rounds.
  auto measure = [&](const std::vector<tuning::ConvSettings>& candidates) -> absl::StatusOr<std::vector<double>> {
    std::vector<double> sums(candidates.size(), 0.0);
    for (size_t k = 0; k < models.size(); ++k) {
      const std::string& path = models[k];
      const Graph& graph = graphs[k];
      std::vector<TimedModel> prepared;
      for (const tuning::ConvSettings& c : candidates) {
        tuning::SetConvSettings(settings_only, c);
        options.workgroups = settings_only;
        MGD_ASSIGN_OR_RETURN(TimedModel m, PrepareTimed(path, graph, options, backend));
        prepared.push_back(std::move(m));
      }
      std::vector<double> best(candidates.size(), std::numeric_limits<double>::infinity());
      for (int round = 0; round < kTimedRounds; ++round) {
        for (size_t i = 0; i < prepared.size(); ++i) {
          MGD_ASSIGN_OR_RETURN(const double ms, MedianInvokeMs(path, *prepared[i].interpreter));
          best[i] = std::min(best[i], ms);
        }
      }
      for (size_t i = 0; i < sums.size(); ++i) sums[i] += best[i];
    }
    return sums;
  };
  MGD_ASSIGN_OR_RETURN(tuning::ConvSearch search, tuning::SearchConvSettings(start, measure));
  tuning::SetConvSettings(table, search.best);
  return search;
}

}  // namespace mgd::cli
