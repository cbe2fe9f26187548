#include "operators/job_builder.h"

namespace tidemark {

ParamNode ScalarParam(const std::string& text) {
  ParamNode n;
  n.kind = ParamNode::Kind::kScalar;
  n.scalar = text;
  return n;
}

ParamNode Params(const std::vector<std::pair<std::string, ParamNode>>& entries) {
  ParamNode n;
  n.kind = ParamNode::Kind::kMap;
  for (const auto& [k, v] : entries) {
    n.keys.push_back(k);
    n.key_locations.emplace_back();
    n.items.push_back(v);
  }
  return n;
}

JobBuilder::JobBuilder(std::string name, OperatorRegistry registry)
    : registry_(std::move(registry)) {
  spec_.name = std::move(name);
  spec_.file = "<c++:" + spec_.name + ">";
}

OperatorSpec& JobBuilder::Add(const std::string& id, const std::string& type) {
  OperatorSpec op;
  op.id = id;
  op.type = type;
  spec_.operators.push_back(std::move(op));
  return spec_.operators.back();
}

DataStream JobBuilder::Source(const std::string& id, const SourceSpec& source,
                              std::optional<WatermarkStrategySpec> watermarks) {
  OperatorSpec& op = Add(id, "source");
  op.source = source;
  op.watermarks = std::move(watermarks);
  return DataStream(this, id);
}

InputSpec DataStream::AsInput() const {
  InputSpec in;
  in.from = id_;
  in.side_output = side_output_;
  return in;
}

OperatorSpec& DataStream::Add(const std::string& id, const std::string& type) const {
  OperatorSpec& op = builder_->Add(id, type);
  op.inputs.push_back(AsInput());
  return op;
}

DataStream DataStream::Filter(const std::string& id, const std::string& condition) const {
  OperatorSpec& op = Add(id, "filter");
  FilterSpec f;
  f.condition = ExpressionSpec{condition, {}};
  op.filter = f;
  return DataStream(builder_, id);
}

DataStream DataStream::Map(const std::string& id,
                           const std::vector<std::pair<std::string, std::string>>& set) const {
  OperatorSpec& op = Add(id, "map");
  MapSpec m;
  for (const auto& [name, expression] : set) {
    m.set.emplace_back(name, ExpressionSpec{expression, {}});
  }
  op.map = m;
  return DataStream(builder_, id);
}

DataStream DataStream::Project(
    const std::string& id, const std::vector<std::pair<std::string, std::string>>& columns) const {
  std::vector<std::pair<std::string, ParamNode>> entries;
  entries.reserve(columns.size());
  for (const auto& [name, expression] : columns) {
    entries.emplace_back(name, ScalarParam(expression));
  }
  return Apply(id, "project", Params(entries));
}

DataStream DataStream::AssignTimestampsAndWatermarks(
    const std::string& id, const WatermarkStrategySpec& watermarks) const {
  OperatorSpec& op = Add(id, "assign-timestamps-and-watermarks");
  op.watermarks = watermarks;
  return DataStream(builder_, id);
}

KeyedStream DataStream::KeyBy(std::vector<std::string> fields) const {
  return KeyedStream(*this, std::move(fields));
}

DataStream DataStream::Union(const std::string& id, const std::vector<DataStream>& others) const {
  OperatorSpec& op = Add(id, "union");
  for (const DataStream& o : others) {
    op.inputs.push_back(o.AsInput());
  }
  return DataStream(builder_, id);
}

DataStream DataStream::SideOutput(const std::string& tag) const {
  return DataStream(builder_, id_, tag);
}

DataStream DataStream::Apply(const std::string& id, const std::string& type,
                             std::optional<ParamNode> params) const {
  OperatorSpec& op = Add(id, type);
  op.params = std::move(params);
  return DataStream(builder_, id);
}

DataStream DataStream::Connect(const std::string& id, const std::string& type,
                               const DataStream& other, std::vector<std::string> key_by,
                               bool broadcast_other) const {
  OperatorSpec& op = Add(id, type);
  InputSpec in = other.AsInput();
  if (broadcast_other) {
    in.partitioning = Partitioning::kBroadcast;
  }
  op.inputs.push_back(in);
  op.key_by = std::move(key_by);
  return DataStream(builder_, id);
}

DataStream DataStream::Join(const std::string& id, const std::string& type, const DataStream& right,
                            std::vector<std::string> key_by, ParamNode params) const {
  OperatorSpec& op = Add(id, type);
  op.inputs.push_back(right.AsInput());
  op.key_by = std::move(key_by);
  op.params = std::move(params);
  return DataStream(builder_, id);
}

void DataStream::Sink(const std::string& id, const SinkSpec& sink) const {
  OperatorSpec& op = Add(id, "sink");
  op.sink = sink;
}

DataStream KeyedStream::Window(const std::string& id, const WindowSpec& window) const {
  OperatorSpec& op = stream_.Add(id, "window");
  op.key_by = fields_;
  op.window = window;
  if (op.window->aggregates.empty()) {
    AggregateSpec count;
    count.function = "count";
    count.as = "count";
    op.window->aggregates.push_back(count);
  }
  return DataStream(stream_.builder_, id);
}

DataStream KeyedStream::Process(const std::string& id,
                                std::function<std::unique_ptr<KeyedProcessFunction>()> factory,
                                Schema output) const {
  const std::string type = "cpp:" + id;
  RegisterKeyedProcessType(stream_.builder_->mutable_registry(), type,
                           [factory = std::move(factory), output = std::move(output)](
                               const Schema&, const OperatorParams& params) {
                             params.CheckKeys({});
                             UserFunctionPlan<KeyedProcessFunction> plan;
                             plan.output_schema = output;
                             plan.factory = factory;
                             return plan;
                           });
  return Apply(id, type);
}

DataStream KeyedStream::Apply(const std::string& id, const std::string& type,
                              std::optional<ParamNode> params) const {
  OperatorSpec& op = stream_.Add(id, type);
  op.key_by = fields_;
  op.params = std::move(params);
  return DataStream(stream_.builder_, id);
}

}  // namespace tidemark
