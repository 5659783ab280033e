// The C API's interpreter options (include/mgd/c_api.h): delegates, custom
// ops, partitioning, in-flight invokes, timing and the error reporter, each setter
// checking its arguments as the rest of the C API does.
#include <fmt/format.h>

#include <string>

#include "interpreter/c_api_parts.h"
#include "mgd/c_api.h"

namespace {

using namespace mgd::c_api;  // NOLINT(google-build-using-namespace): the C API's own parts

bool OptionsGiven(const MgdInterpreterOptions* options, const char* function) {
  if (options != nullptr) return true;
  kStderr(fmt::format("{}: options is NULL", function));
  return false;
}

}  // namespace

MgdInterpreterOptions* MgdInterpreterOptionsCreate(void) { return new MgdInterpreterOptions(); }
void MgdInterpreterOptionsDelete(MgdInterpreterOptions* options) { delete options; }

void MgdInterpreterOptionsAddDelegate(MgdInterpreterOptions* options, MgdDelegate* delegate) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsAddDelegate")) return;
  if (delegate == nullptr) {
    options->reporter("MgdInterpreterOptionsAddDelegate: delegate is NULL");
    return;
  }
  if (const std::string problem = DelegateProblem(*delegate); !problem.empty()) {
    options->reporter("MgdInterpreterOptionsAddDelegate: " + problem + " (the delegate is not added)");
    return;
  }
  options->delegates.push_back(delegate);
}

void MgdInterpreterOptionsSetMaxDelegatedPartitions(MgdInterpreterOptions* options, int32_t max) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetMaxDelegatedPartitions")) return;
  if (max < 0) {
    options->reporter(fmt::format("MgdInterpreterOptionsSetMaxDelegatedPartitions: {} is negative (0 means no limit)", max));
    return;
  }
  options->max_partitions = max;
}

void MgdInterpreterOptionsSetPartitionByCost(MgdInterpreterOptions* options, int32_t by_cost) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetPartitionByCost")) return;
  options->partition_by_cost = by_cost != 0;
}

void MgdInterpreterOptionsSetMaxInFlight(MgdInterpreterOptions* options, int32_t max_in_flight) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetMaxInFlight")) return;
  if (max_in_flight < 1) {
    options->reporter(fmt::format("MgdInterpreterOptionsSetMaxInFlight: {} is less than 1; ignored", max_in_flight));
    return;
  }
  options->max_in_flight = max_in_flight;
}

void MgdInterpreterOptionsSetMeasureTiming(MgdInterpreterOptions* options, int32_t measure) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetMeasureTiming")) return;
  options->measure_timing = measure != 0;
}

void MgdInterpreterOptionsSetCheckFinite(MgdInterpreterOptions* options, int32_t check) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetCheckFinite")) return;
  options->check_finite = check != 0;
}

void MgdInterpreterOptionsAddCustomOp(MgdInterpreterOptions* options, const char* name,
                                      const MgdRegistration* registration, int32_t min_version, int32_t max_version) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsAddCustomOp")) return;
  const char* problem = name == nullptr                 ? "name is NULL"
                        : registration == nullptr       ? "registration is NULL"
                        : registration->invoke == nullptr ? "the registration's invoke is NULL"
                        : min_version > max_version     ? "min_version is above max_version"
                                                        : nullptr;
  if (problem != nullptr) {
    options->reporter(fmt::format("MgdInterpreterOptionsAddCustomOp({}): {} (the op is not added)",
                                  name != nullptr ? name : "NULL", problem));
    return;
  }
  options->resolver.AddCustom(
      name, [registration](const mgd::Node& node) { return NewRegistrationKernel(registration, node); },
      min_version, max_version);
}

void MgdInterpreterOptionsSetErrorReporter(MgdInterpreterOptions* options, MgdErrorReporter reporter, void* user_data) {
  if (!OptionsGiven(options, "MgdInterpreterOptionsSetErrorReporter")) return;
  options->reporter = {reporter, user_data};
}
