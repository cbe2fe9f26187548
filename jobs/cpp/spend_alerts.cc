// A C++ job (issue 4's C++ job API): a user KeyedProcessFunction with keyed state and event-time
// timers, registered under the type name `spend-alert` so YAML jobs can use it too, and the same
// pipeline built with the DataStream-like JobBuilder.
//
//   spend_alerts                    builds the job in C++ and runs it
//   spend_alerts jobs/spend_alerts.yaml   runs the YAML form with `spend-alert` registered
//
// Both print the same alerts: a user whose spending since the last reset reaches `threshold`
// gets one alert row {user, total, at}; the total resets `reset-after` after the user's first
// spend (an event-time timer).

#include <cstdio>
#include <exception>
#include <string>

#include "config/job_loader.h"
#include "operators/job_builder.h"
#include "operators/user_operators.h"
#include "tools/engine/engine.h"

namespace {

using namespace tidemark;  // NOLINT(google-build-using-namespace): a main() file

// A print sink in JSON (every other SinkSpec member at its default).
SinkSpec PrintSink() {
  SinkSpec sink;
  sink.type = "print";
  return sink;
}

class SpendAlert : public KeyedProcessFunction {
 public:
  SpendAlert(int amount_slot, int64_t threshold, int64_t reset_after_ms)
      : amount_slot_(amount_slot), threshold_(threshold), reset_after_ms_(reset_after_ms) {}

  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    const auto slot = static_cast<size_t>(amount_slot_);
    const int64_t amount = record.row.IsNull(slot) ? 0 : record.row.GetInt64(slot);
    const Value* total_state = ctx.State("total");
    if (total_state == nullptr) {
      ctx.RegisterEventTimeTimer(SaturatingAdd(ctx.timestamp(), reset_after_ms_));
    }
    const int64_t before = total_state ? std::get<int64_t>(*total_state) : 0;
    const int64_t total = before + amount;
    ctx.SetState("total", total);
    if (before < threshold_ && total >= threshold_) {
      ctx.Collect(Row{ctx.current_key()[0], total, ctx.timestamp()}, ctx.timestamp());
    }
  }

  void OnTimer(Timestamp /*timestamp*/, ProcessContext& ctx) override { ctx.ClearState("total"); }

 private:
  int amount_slot_;
  int64_t threshold_;
  int64_t reset_after_ms_;
};

/// `type: spend-alert`, `key-by: [user]`, `params: {amount-field, threshold, reset-after}`.
void RegisterSpendAlert(OperatorRegistry& registry) {
  RegisterKeyedProcessType(
      registry, "spend-alert", [](const Schema& input, const OperatorParams& params) {
        params.CheckKeys({"amount-field", "threshold", "reset-after"});
        const std::string field = params.String("amount-field", "amount");
        const int slot = input.IndexOf(field);
        if (slot < 0) {
          params.Fail(
              params.Get("amount-field") ? params.Get("amount-field")->location : SourceLocation{},
              "amount-field", "the input has no field '" + field + "'");
        }
        const std::string threshold_text = params.String("threshold", std::nullopt);
        int64_t threshold = 0;
        try {
          threshold = std::stoll(threshold_text);
        } catch (const std::exception&) {
          params.Fail(params.Get("threshold")->location, "threshold", "expected an integer");
        }
        const int64_t reset_after = params.DurationMs("reset-after", 60000);
        UserFunctionPlan<KeyedProcessFunction> plan;
        plan.output_schema = Schema({{"user", FieldType::kString},
                                     {"total", FieldType::kInt64},
                                     {"at", FieldType::kTimestamp}});
        plan.factory = [slot, threshold, reset_after] {
          return std::make_unique<SpendAlert>(slot, threshold, reset_after);
        };
        return plan;
      });
}

JobSpec BuildInCpp(JobBuilder& builder) {
  builder.pipeline().parallelism = 1;
  builder.pipeline().clock = "virtual";
  SourceSpec source;
  source.type = "sequence";
  source.pacing_ms = 10;
  SequenceSplitSpec alice{
      "alice", 0, 1000, 6, {{"user", std::string("alice")}, {"amount", int64_t{40}}}, {}};
  SequenceSplitSpec bob{
      "bob", 500, 1000, 6, {{"user", std::string("bob")}, {"amount", int64_t{15}}}, {}};
  source.splits = {alice, bob};
  WatermarkStrategySpec watermarks;
  watermarks.max_out_of_orderness_ms = 0;
  watermarks.timestamp_field = "ts";
  builder.Source("spends", source, watermarks)
      .Filter("positive", "amount > 0")
      .KeyBy({"user"})
      .Apply("alerts", "spend-alert",
             Params({{"amount-field", ScalarParam("amount")},
                     {"threshold", ScalarParam("50")},
                     {"reset-after", ScalarParam("3s")}}))
      .Sink("out", PrintSink());
  return builder.spec();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    OperatorRegistry registry = BuiltinRegistry();
    RegisterSpendAlert(registry);
    JobSpec spec;
    if (argc > 1) {
      spec = LoadJobSpecFile(argv[1]);
    } else {
      JobBuilder builder("spend-alerts", registry);
      spec = BuildInCpp(builder);
    }
    auto job = LocalJob::Create(spec, registry);
    job->execution().Start();
    if (job->execution().Wait() != JobState::kFinished) {
      std::fprintf(stderr, "job failed: %s\n", job->execution().failure_cause().c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
