#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/job_spec.h"
#include "operators/user_operators.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

class JobBuilder;
class KeyedStream;

/// A handle to one operator's output (or one of its side outputs) while a job is being built in
/// C++. Mirrors Flink's DataStream: every method adds an operator to the builder's JobSpec —
/// the same JobSpec a YAML file loads into, so the C++ and YAML forms compile to the same
/// JobGraph. Ids must be unique in the job (they are the operator ids of the YAML form).
/// Cheap to copy; borrows its JobBuilder, which must outlive it. Not thread-safe.
class DataStream {
 public:
  /// `filter: "<condition>"` (an expression, see operators/expression.h).
  DataStream Filter(const std::string& id, const std::string& condition) const;
  /// `map: {set: {name: expression, ...}}`.
  DataStream Map(const std::string& id,
                 const std::vector<std::pair<std::string, std::string>>& set) const;
  /// `type: project` with `name: expression` columns, in order.
  DataStream Project(const std::string& id,
                     const std::vector<std::pair<std::string, std::string>>& columns) const;
  /// `type: assign-timestamps-and-watermarks`.
  DataStream AssignTimestampsAndWatermarks(const std::string& id,
                                           const WatermarkStrategySpec& watermarks) const;
  /// Flink's keyBy: the next operator is keyed by these input fields.
  KeyedStream KeyBy(std::vector<std::string> fields) const;
  /// `type: union` of this stream and `others` (same schema).
  DataStream Union(const std::string& id, const std::vector<DataStream>& others) const;
  /// The side output `tag` of this stream's operator (e.g. a window's late output).
  DataStream SideOutput(const std::string& tag) const;
  /// Any registered operator type with its parameters (the YAML `params:` mapping).
  DataStream Apply(const std::string& id, const std::string& type,
                   std::optional<ParamNode> params = std::nullopt) const;
  /// Connects with `other` into a two-input operator of a registered co-process `type`
  /// (`key_by` names fields present on both sides; `broadcast_other` makes `other` a broadcast
  /// input). See RegisterKeyedCoProcessType.
  DataStream Connect(const std::string& id, const std::string& type, const DataStream& other,
                     std::vector<std::string> key_by, bool broadcast_other = false) const;
  /// A two-input join type (`window-join` / `interval-join`) of this (left) and `right`.
  DataStream Join(const std::string& id, const std::string& type, const DataStream& right,
                  std::vector<std::string> key_by, ParamNode params) const;
  /// `type: sink`.
  void Sink(const std::string& id, const SinkSpec& sink) const;

  const std::string& id() const { return id_; }

 private:
  friend class JobBuilder;
  friend class KeyedStream;
  DataStream(JobBuilder* builder, std::string id, std::string side_output = "")
      : builder_(builder), id_(std::move(id)), side_output_(std::move(side_output)) {}
  InputSpec AsInput() const;
  OperatorSpec& Add(const std::string& id, const std::string& type) const;

  JobBuilder* builder_;
  std::string id_;
  std::string side_output_;
};

/// A stream with key fields chosen (Flink's KeyedStream); the next operator is keyed.
class KeyedStream {
 public:
  /// `type: window` with this key.
  DataStream Window(const std::string& id, const WindowSpec& window) const;
  /// A C++ KeyedProcessFunction, registered in the builder's registry under `cpp:<id>`.
  /// `output` is the schema of the rows the function collects.
  DataStream Process(const std::string& id,
                     std::function<std::unique_ptr<KeyedProcessFunction>()> factory,
                     Schema output) const;
  /// Any registered keyed type (`dedup`, `inactivity`, a user type) with its parameters.
  DataStream Apply(const std::string& id, const std::string& type,
                   std::optional<ParamNode> params = std::nullopt) const;

 private:
  friend class DataStream;
  KeyedStream(DataStream stream, std::vector<std::string> fields)
      : stream_(std::move(stream)), fields_(std::move(fields)) {}
  DataStream stream_;
  std::vector<std::string> fields_;
};

/// Builds a job in C++ (Flink's StreamExecutionEnvironment): a JobSpec plus the operator registry
/// it compiles against (the built-ins plus the C++ functions added with `Process`). Run the
/// result with `LocalJob::Create(builder.spec(), builder.registry())` (tools/engine/engine.h).
/// Not thread-safe; build on one thread.
class JobBuilder {
 public:
  /// `registry`: the types available (usually a copy of BuiltinRegistry()).
  JobBuilder(std::string name, OperatorRegistry registry);

  PipelineSpec& pipeline() { return spec_.pipeline; }
  /// `type: source` with `source` and optional source-level watermarks.
  DataStream Source(const std::string& id, const SourceSpec& source,
                    std::optional<WatermarkStrategySpec> watermarks = std::nullopt);

  const JobSpec& spec() const { return spec_; }
  const OperatorRegistry& registry() const { return registry_; }
  OperatorRegistry& mutable_registry() { return registry_; }

 private:
  friend class DataStream;
  friend class KeyedStream;
  OperatorSpec& Add(const std::string& id, const std::string& type);

  JobSpec spec_;
  OperatorRegistry registry_;
};

/// Small helpers to write `params:` in C++: `Params({{"within", "1h"}})`.
ParamNode ScalarParam(const std::string& text);
ParamNode Params(const std::vector<std::pair<std::string, ParamNode>>& entries);

}  // namespace tidemark
