#include "operators/operator_params.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/job_loader.h"

namespace tidemark {

std::string FieldNames(const Schema& schema) {
  std::string names;
  for (const Field& f : schema.fields()) {
    names += (names.empty() ? "" : ", ") + f.name;
  }
  return names;
}

Expression CompileExpressionSpec(const ExpressionSpec& expression, const std::string& path,
                                 const Schema& schema) {
  try {
    return Expression::Compile(expression.text, schema);
  } catch (const ExpressionError& e) {
    SourceLocation at = expression.location;
    // Count lines inside the text so a multi-line scalar still points at the right character.
    size_t line_start = 0;
    for (size_t i = 0; i < e.offset() && i < expression.text.size(); ++i) {
      if (expression.text[i] == '\n') {
        ++at.line;
        line_start = i + 1;
        at.column = 1;
      }
    }
    at.column += static_cast<int>(e.offset() - line_start);
    // Long expressions are shown by their start only: the position says where the fault is.
    constexpr size_t kShown = 60;
    const std::string shown = expression.text.size() > kShown
                                  ? expression.text.substr(0, kShown) + "..."
                                  : expression.text;
    throw CompileError(path, fmt::format("in expression \"{}\": {}", shown, e.what()), at);
  }
}

std::vector<int> ResolveKeyBy(const OperatorSpec& spec, const Schema& schema) {
  std::vector<int> slots;
  for (size_t i = 0; i < spec.key_by.size(); ++i) {
    const int slot = schema.IndexOf(spec.key_by[i]);
    if (slot < 0) {
      const SourceLocation at =
          i < spec.key_by_locations.size() ? spec.key_by_locations[i] : spec.location;
      throw CompileError(fmt::format("key-by[{}]", i),
                         fmt::format("the input has no field '{}' (fields: {})", spec.key_by[i],
                                     FieldNames(schema)),
                         at);
    }
    slots.push_back(slot);
  }
  return slots;
}

OperatorParams::OperatorParams(const OperatorSpec& spec) : spec_(spec), prefix_(spec.type) {}

const ParamNode* OperatorParams::Get(const std::string& key) const {
  return spec_.params ? spec_.params->Find(key) : nullptr;
}

void OperatorParams::Fail(const SourceLocation& at, const std::string& key,
                          const std::string& message) const {
  throw CompileError(key.empty() ? prefix_ : prefix_ + "." + key, message,
                     at.line > 0 ? at : spec_.location);
}

void OperatorParams::CheckKeys(std::initializer_list<std::string_view> allowed) const {
  if (!spec_.params) {
    return;
  }
  if (spec_.params->kind != ParamNode::Kind::kMap) {
    Fail(spec_.params->location, "", "expected a mapping of parameters");
  }
  for (size_t i = 0; i < spec_.params->keys.size(); ++i) {
    bool ok = false;
    std::string names;
    for (std::string_view a : allowed) {
      ok = ok || a == spec_.params->keys[i];
      names += (names.empty() ? "" : ", ") + std::string(a);
    }
    if (!ok) {
      Fail(spec_.params->key_locations[i], spec_.params->keys[i],
           fmt::format("unknown key \"{}\" for an operator of type {}; allowed keys: {}",
                       spec_.params->keys[i], spec_.type, names));
    }
  }
}

int64_t OperatorParams::DurationMs(const std::string& key, std::optional<int64_t> fallback,
                                   bool allow_negative) const {
  const ParamNode* node = Get(key);
  if (node == nullptr) {
    if (!fallback) {
      Fail(spec_.params ? spec_.params->location : spec_.location, key, "missing required key");
    }
    return *fallback;
  }
  std::string reason;
  std::optional<int64_t> ms;
  if (node->kind == ParamNode::Kind::kScalar) {
    ms = ParseDurationMs(node->scalar, &reason);
  }
  if (!ms) {
    Fail(node->location, key,
         fmt::format("expected a duration like \"5s\", got \"{}\"{}", node->scalar,
                     reason.empty() ? "" : " (" + reason + ")"));
  }
  if (!allow_negative && *ms < 0) {
    Fail(node->location, key, fmt::format("must not be negative, got \"{}\"", node->scalar));
  }
  return *ms;
}

std::string OperatorParams::String(const std::string& key,
                                   std::optional<std::string> fallback) const {
  const ParamNode* node = Get(key);
  if (node == nullptr) {
    if (!fallback) {
      Fail(spec_.params ? spec_.params->location : spec_.location, key, "missing required key");
    }
    return *fallback;
  }
  if (node->kind != ParamNode::Kind::kScalar || node->scalar.empty()) {
    Fail(node->location, key, "expected a non-empty string");
  }
  return node->scalar;
}

bool OperatorParams::Bool(const std::string& key, bool fallback) const {
  const ParamNode* node = Get(key);
  if (node == nullptr) {
    return fallback;
  }
  if (node->kind == ParamNode::Kind::kScalar && !node->quoted &&
      (node->scalar == "true" || node->scalar == "false")) {
    return node->scalar == "true";
  }
  Fail(node->location, key, fmt::format("expected true or false, got \"{}\"", node->scalar));
}

std::string OperatorParams::Enum(const std::string& key,
                                 std::initializer_list<std::string_view> allowed,
                                 std::optional<std::string> fallback) const {
  std::string value = String(key, std::move(fallback));
  std::string names;
  for (std::string_view a : allowed) {
    if (a == value) {
      return value;
    }
    names += (names.empty() ? "" : " | ") + std::string(a);
  }
  const ParamNode* node = Get(key);
  Fail(node != nullptr ? node->location : spec_.location, key,
       fmt::format("unknown value \"{}\"; allowed: {}", value, names));
}

std::vector<int> OperatorParams::FieldList(const std::string& key, const Schema& schema) const {
  const ParamNode* node = Get(key);
  if (node == nullptr) {
    Fail(spec_.params ? spec_.params->location : spec_.location, key, "missing required key");
  }
  std::vector<const ParamNode*> items;
  if (node->kind == ParamNode::Kind::kScalar) {
    items.push_back(node);
  } else if (node->kind == ParamNode::Kind::kSequence) {
    for (const ParamNode& n : node->items) {
      items.push_back(&n);
    }
  }
  if (items.empty()) {
    Fail(node->location, key, "expected a field name or a list of field names");
  }
  std::vector<int> slots;
  for (const ParamNode* n : items) {
    const int slot = n->kind == ParamNode::Kind::kScalar ? schema.IndexOf(n->scalar) : -1;
    if (slot < 0) {
      Fail(n->location, key,
           fmt::format("the input has no field '{}' (fields: {})", n->scalar, FieldNames(schema)));
    }
    slots.push_back(slot);
  }
  return slots;
}

Expression OperatorParams::CompileExpression(const ParamNode& node, const std::string& path,
                                             const Schema& schema) const {
  if (node.kind != ParamNode::Kind::kScalar) {
    Fail(node.location, path, "expected an expression like \"amount * 2\"");
  }
  ExpressionSpec e;
  e.text = node.scalar;
  e.location = node.location;
  if (node.quoted) {
    e.location.column += 1;
  }
  return CompileExpressionSpec(e, prefix_ + "." + path, schema);
}

void OperatorParams::CompileColumns(const ParamNode& root, const std::string& path,
                                    const Schema& schema, std::vector<std::string>* names,
                                    std::vector<Expression>* columns) const {
  std::vector<std::pair<std::string, const ParamNode*>> items;  // name -> expression node
  if (root.kind == ParamNode::Kind::kMap) {
    for (size_t i = 0; i < root.keys.size(); ++i) {
      items.emplace_back(root.keys[i], &root.items[i]);
    }
  } else if (root.kind == ParamNode::Kind::kSequence) {
    for (const ParamNode& item : root.items) {
      if (item.kind == ParamNode::Kind::kScalar) {
        items.emplace_back(item.scalar, &item);
      } else if (item.kind == ParamNode::Kind::kMap && item.keys.size() == 1) {
        items.emplace_back(item.keys[0], &item.items[0]);
      } else {
        Fail(item.location, path, "expected a field name or `name: expression`");
      }
    }
  }
  if (items.empty()) {
    Fail(root.location, path, "expected a list of columns like [user, {cents: \"amount * 100\"}]");
  }
  for (const auto& [name, node] : items) {
    if (std::find(names->begin(), names->end(), name) != names->end()) {
      Fail(node->location, path.empty() ? name : fmt::format("{}.{}", path, name),
           fmt::format("column '{}' is listed twice", name));
    }
    names->push_back(name);
    columns->push_back(
        CompileExpression(*node, path.empty() ? name : fmt::format("{}.{}", path, name), schema));
  }
}

}  // namespace tidemark
