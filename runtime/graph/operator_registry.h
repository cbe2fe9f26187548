#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/core/row.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

class JobResources;
class VirtualClock;

/// What the compiler learns from one `OperatorSpec`: the shapes it produces and how to make one
/// instance per subtask. Built once per job at compile time; field names are resolved here.
struct CompiledOperator {
  Schema output_schema;
  /// Side outputs this operator can emit (tag -> schema), e.g. {"late": input schema}.
  std::map<std::string, Schema> side_output_schemas;
  /// Makes the operator of subtask `subtask_index`. For sources, the result must derive from
  /// SourceOperatorBase. Called on the job's setup thread before tasks start.
  std::function<std::unique_ptr<StreamOperator>(int subtask_index, int parallelism)> factory;
  bool is_source = false;
  bool is_sink = false;
  int num_inputs = 1;
  /// Forces this parallelism (e.g. an all-records window runs with 1, as Flink's windowAll). 0:
  /// free.
  int forced_parallelism = 0;
  /// Key slots in the *input* schema; non-empty makes the input edge hash-partitioned (keyBy).
  std::vector<int> input_key_slots;
  /// Two-input operators whose inputs have different schemas: key slots per input index
  /// (overrides `input_key_slots` for the edges of that input when non-empty).
  std::vector<std::vector<int>> input_key_slots_per_input;
  /// Hash-partition the input even without key slots (an all-records window: every record goes
  /// to subtask 0 through a channel, as Flink's windowAll keys by a constant).
  bool hash_input = false;
  /// The fields of its (single) input's rows this operator can ever read, as slots of the input
  /// schema, ascending: set only by one-input operators that can bound their field use (a window
  /// without a late-data side output: its key-by fields and its aggregates' fields). Unset: any
  /// field (every other operator: a process, join, sink or late side output may emit or read the
  /// whole row). The exchange into it carries only these fields (JobEdge::fields_read), as Flink's
  /// planner pushes a projection down.
  std::optional<std::vector<int>> input_fields_read;
};

/// Everything an operator compiler sees: its spec, the job, and its inputs' schemas (by input
/// index).
struct CompileContext {
  const OperatorSpec& spec;
  const JobSpec& job;
  std::vector<Schema> input_schemas;
  JobResources& resources;
};

/// Raised by an operator compiler for a semantic error in its spec; the compiler turns it into a
/// diagnostic at the operator's file:line:column.
class CompileError : public std::runtime_error {
 public:
  CompileError(std::string path, const std::string& message)
      : std::runtime_error(message), path_(std::move(path)) {}
  /// With the exact position of the offending YAML node (or of a character inside an
  /// expression); the compiler reports it instead of the operator's position.
  CompileError(std::string path, const std::string& message, SourceLocation location)
      : std::runtime_error(message), path_(std::move(path)), location_(std::move(location)) {}
  /// Key path below the operator, e.g. "window.size" (may be empty).
  const std::string& path() const { return path_; }
  /// line 0: unknown; use the operator's position.
  const SourceLocation& location() const { return location_; }

 private:
  std::string path_;
  SourceLocation location_;
};

using OperatorCompiler = std::function<CompiledOperator(const CompileContext&)>;

/// Maps an operator `type` from YAML (`window`, `sink`, `source`, ...) to its compiler.
/// Filled by explicit `RegisterBuiltins(OperatorRegistry&)` calls (operators/, sources/), never by
/// static initialisers. Not thread-safe to mutate; read-only once jobs are compiled.
class OperatorRegistry {
 public:
  void Register(const std::string& type, OperatorCompiler compiler) {
    compilers_[type] = std::move(compiler);
  }
  const OperatorCompiler* Find(const std::string& type) const {
    auto it = compilers_.find(type);
    return it == compilers_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : compilers_) {
      out.push_back(k);
    }
    return out;
  }

 private:
  std::map<std::string, OperatorCompiler> compilers_;
};

}  // namespace tidemark
