#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/rocksdb_spec.h"
#include "config/source_location.h"

namespace tidemark {

// Plain, validated description of a job, produced from YAML by `LoadJobSpecFile` /
// `LoadJobSpecString` (config/job_loader.h). No yaml-cpp types leak out of config/. All durations
// are milliseconds (`_ms`). The YAML schema is documented key by key in docs/job-reference.md.
//
// What the loader guarantees (so later stages need not re-check): every enumerated string holds
// one of its documented values; operator ids are unique; every input names an existing, non-sink
// operator (and an existing side output); the graph has no cycles; sources have no inputs and all
// other operators at least one; the optional block matching `type` is present (`source` for a
// source, `watermarks` for assign-timestamps-and-watermarks, `window` for a window, `sink` for a
// sink); report sinks exist. Each `location` is the 1-based position of the YAML node it came
// from, for `FormatDiagnostic` (config/diagnostic.h). Plain value types; copy freely.

/// Where each key of one YAML mapping was written: key → position of its value (of the key
/// itself when the value is empty). Only keys that were written appear. Later stages that must
/// point at one setting (the Flink SQL export naming `allowed-lateness` at its line) use `Of`.
struct KeyLocations {
  std::map<std::string, SourceLocation> values;
  /// The position of `key`'s value, or `fallback` when the key was not written.
  const SourceLocation& Of(const std::string& key, const SourceLocation& fallback) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
};

/// A scalar constant from YAML (sequence-source constant fields, literals).
using ConfigValue = std::variant<int64_t, double, bool, std::string>;

/// An expression written in YAML (`filter: "amount > 100"`, `map: {set: {cents: "amount * 100"}}`),
/// compiled by the job compiler (operators/expression.h). `location` is the position of the
/// expression's first character (after an opening quote), so an error at byte offset `k` of
/// `text` is at column `location.column + k` when the text is on one line.
struct ExpressionSpec {
  std::string text;
  SourceLocation location;
};

/// A free-form YAML value kept for the job compiler: the `params:` mapping of an operator type
/// that config/ does not know (user operators, built-ins registered with the operator registry),
/// or the block named like such a type (`dedup: {within: 1h}`). Scalars keep their text; every
/// node keeps its position, so the compiler can report file:line:column.
struct ParamNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;   ///< kScalar: the text as written (without quotes)
  bool quoted = false;  ///< kScalar: written in quotes (so "5" is a string, not a number)
  /// kSequence: the items; kMap: the values, parallel to `keys`.
  std::vector<ParamNode> items;
  std::vector<std::string> keys;              ///< kMap: the keys, in YAML order
  std::vector<SourceLocation> key_locations;  ///< kMap: where each key was written
  /// kMap: the kind of each key, parallel to `keys` (a key written as a list or a mapping, or
  /// `~`, has kind other than kScalar and text ""); may be empty when every key is plain.
  std::vector<Kind> key_kinds;
  SourceLocation location;  ///< of the value (for a quoted scalar: its quote)
  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsMap() const { return kind == Kind::kMap; }
  /// kSequence / kMap: the number of items (entries).
  size_t size() const { return items.size(); }
  /// kMap: whether key `i` was written as a plain scalar.
  bool KeyIsPlain(size_t i) const { return i >= key_kinds.size() || key_kinds[i] == Kind::kScalar; }
  /// kMap: the value of `key`, or nullptr.
  const ParamNode* Find(const std::string& key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) {
        return &items[i];
      }
    }
    return nullptr;
  }
};

/// `watermarks:` block — a WatermarkStrategy (Flink's WatermarkStrategy).
struct WatermarkStrategySpec {
  /// "bounded-out-of-orderness" | "adaptive-out-of-orderness" | "sql-interval" | "monotonous" |
  /// "punctuated" | "none"
  std::string strategy = "bounded-out-of-orderness";
  int64_t max_out_of_orderness_ms = 0;  ///< bounded-out-of-orderness: B; sql-interval: the INTERVAL
  /// `adaptive-out-of-orderness` (runtime/eventtime/adaptive_out_of_orderness_watermarks.h): the
  /// bound follows `percentile` of the lateness seen in the last `window` of event time, clamped
  /// to [min, max]; `initial` until a whole window was seen. Validated by the loader: percentile
  /// in (0, 100], window > 0, 0 <= min <= initial <= max.
  struct Adaptive {
    double percentile = 99.0;
    int64_t window_ms = 60000;
    int64_t min_ms = 0;
    int64_t max_ms = 0;      ///< required
    int64_t initial_ms = 0;  ///< default: max_ms
  };
  std::optional<Adaptive> adaptive;  ///< set iff strategy is adaptive-out-of-orderness
  /// Field holding the event time. Empty: keep the record's existing timestamp.
  std::string timestamp_field;
  /// Unit of a numeric timestamp field: "ms" | "s" | "us" | "ns"; or "iso8601" for strings.
  std::string timestamp_unit = "ms";
  /// `timestamp-format`: a Java DateTimeFormatter pattern (`yyyy-MM-dd HH:mm:ss`, as Flink's
  /// TO_TIMESTAMP) for a string timestamp field, UTC unless the pattern has a zone; "" : none.
  /// Checked by the loader (a known pattern, with timestamp-field, without timestamp-unit).
  std::string timestamp_format;
  /// Punctuated: the field whose (int64) value is emitted as a watermark when present / non-null.
  std::string watermark_field;
  std::optional<int64_t> idleness_ms;  ///< `idleness: 2s`
  /// `idle-advance: 30s` (a source's, beyond Flink): once no split has had a record for this
  /// long, event time moves on with processing time (SourceOperator). Loader-checked: > 0, on a
  /// source, with a strategy that has a bound (not punctuated / none).
  std::optional<int64_t> idle_advance_ms;
  struct Alignment {
    std::string group;
    int64_t max_drift_ms = 0;
    int64_t update_interval_ms = 1000;
  };
  std::optional<Alignment> alignment;
  SourceLocation location;
  KeyLocations key_locations;  ///< of the `watermarks:` block
};

/// One split of a `sequence` source.
struct SequenceSplitSpec {
  std::string id;
  int64_t first_timestamp_ms = 0;  ///< `start: 10s`
  int64_t step_ms = 0;             ///< `step: 50ms`
  int64_t count = 0;
  /// Constant fields added to every record of the split, in YAML order.
  std::vector<std::pair<std::string, ConfigValue>> fields;
  SourceLocation location;
};

/// One declared field of a `file` / `replay` source (`schema:` entry `name: type`).
struct SchemaFieldSpec {
  std::string name;
  std::string type;  ///< "int64" | "double" | "bool" | "string" | "timestamp" (int64 ms)
  SourceLocation location;
};

/// `file` source keys (see docs/job-reference.md): JSON Lines or CSV, one split per file.
struct FileSourceSpec {
  /// A file, a directory (every regular file in it, by name) or a glob in the last path
  /// component (`data/*.csv`). A relative path is resolved against the job file's directory.
  std::string path;
  std::string format = "jsonl";         ///< "jsonl" | "csv"
  std::vector<SchemaFieldSpec> schema;  ///< the record fields, in YAML order
  /// csv: the first line of each file names the columns. It is checked against the schema when
  /// the job is compiled (by-position: the same names in the same order; by-name: every schema
  /// field among them) and skipped when reading.
  bool csv_header = false;
  /// `columns` (csv): "by-position" (default): the i-th field is the i-th schema field;
  /// "by-name" (needs csv_header): each schema field is read from the column its header names,
  /// in any order; other columns are ignored.
  std::string columns = "by-position";
  std::string csv_delimiter = ",";   ///< csv: one character
  int64_t max_line_bytes = 1048576;  ///< longer lines go to side output `errors`
  /// A file larger than this many bytes is read as byte-range splits of about this size, cut
  /// at line starts (Flink's FileSource block splits); 0: one split per file.
  int64_t split_bytes = 0;
};

/// A processing-time period during which one split of a `datagen` source produces nothing.
struct IdlePeriodSpec {
  int64_t split = 0;     ///< split index, 0-based, < `splits`
  int64_t start_ms = 0;  ///< processing time since the source started
  int64_t end_ms = 0;    ///< > start_ms
  SourceLocation location;
};

/// `datagen` source keys (see docs/job-reference.md): seeded, paced, bounded.
struct DatagenSourceSpec {
  int64_t split_count = 1;              ///< `splits:`
  int64_t count = 0;                    ///< records per split
  int64_t rate = 1000;                  ///< records per second of processing time, per split
  int64_t key_count = 1;                ///< `keys:` keys are 0 .. key_count - 1
  int64_t first_timestamp_ms = 0;       ///< `start:` event time at processing time 0
  std::string disorder = "none";        ///< `disorder:` none | uniform | exponential
  int64_t max_out_of_orderness_ms = 0;  ///< upper bound of the event-time delay of a record
  int64_t skew_ms = 0;                  ///< split i's event times are shifted by i * skew
  std::vector<IdlePeriodSpec> idle_periods;
  int64_t seed = 0;
};

/// `replay` source keys (docs/job-reference.md): recorded arrivals, replayed in processing time.
struct ReplaySourceSpec {
  std::string path;                     ///< one JSON Lines file, resolved like FileSourceSpec::path
  std::vector<SchemaFieldSpec> schema;  ///< fields of each line's `record`
  int64_t max_line_bytes = 1048576;
  /// `until`: ms of processing time since the reader started at which the input ends (the
  /// source stays open, unbounded, until then); nullopt: it ends with the recording's last line.
  std::optional<int64_t> until_ms;
  SourceLocation until_location;
};

/// `kafka` source keys (see docs/job-reference.md): Flink's KafkaSource (FLIP-27), each
/// topic-partition a split. Validated by the loader: exactly one of `topics` / `topic-pattern`;
/// exactly one of `bootstrap-servers` / `mock-cluster`; the starting / bounded keys that go with
/// the chosen mode and no others; `schema` iff `format: json`.
struct KafkaSourceSpec {
  std::string bootstrap_servers;    ///< `bootstrap-servers`: Kafka's bootstrap.servers
  std::vector<std::string> topics;  ///< `topics: [a, b]`
  std::string topic_pattern;        ///< `topic-pattern`: ECMAScript regex, whole topic name
  std::string group_id;             ///< `group-id`: Kafka's group.id (offset commits)
  /// `properties`: Kafka client properties passed through to librdkafka as written.
  std::map<std::string, std::string> properties;
  /// `starting-offsets`: "earliest" | "latest" | "committed" | "timestamp" | "specific"
  std::string starting_offsets = "earliest";
  /// `starting-offsets-reset` (committed / specific: where a partition without an offset
  /// starts; Flink's OffsetResetStrategy): "earliest" | "latest" | "none" (fails the job)
  std::string offset_reset = "earliest";
  int64_t starting_timestamp_ms = 0;  ///< `starting-timestamp` (timestamp mode), ms since epoch
  /// `starting-specific-offsets`: split id ("topic-partition") → offset of the first record.
  std::map<std::string, int64_t> starting_specific;
  /// `bounded`: "" (unbounded) | "latest" (the latest offsets seen at start) | "specific"
  std::string bounded;
  /// `bounded-specific-offsets`: split id → offset to stop before (a partition not listed reads
  /// nothing, as Flink's specific stopping offsets with the EARLIEST fallback).
  std::map<std::string, int64_t> bounded_specific;
  /// `partition-discovery-interval` (Flink's partition.discovery.interval.ms, default 5 min);
  /// 0: discover once at start. Always once when bounded.
  int64_t discovery_interval_ms = 300000;
  std::string format = "json";          ///< `format`: "json" | "raw" (one string field `value`)
  std::vector<SchemaFieldSpec> schema;  ///< `schema` (json): the value's fields
  std::string key_field;                ///< `key-field`: a string field holding the record key
  /// `mock-cluster` (trying a job without a broker, and the tests): the source starts an
  /// in-process librdkafka mock cluster, creates the topic with `partitions` partitions and loads
  /// a JSON Lines file into it, as `tidemark kafka-mock` does.
  struct Mock {
    int64_t partitions = 1;
    std::string load;             ///< JSON Lines file, resolved against the job file's directory
    std::string partition_field;  ///< field of each line giving its partition ("" : round-robin)
    std::string timestamp_field;  ///< field of each line giving its CreateTime in ms ("" : now)
    SourceLocation location;
  };
  std::optional<Mock> mock;
};

/// `source:` block of a `type: source` operator.
struct SourceSpec {
  std::string type;  ///< "sequence" | "generator" (more later: file, datagen, replay)
  // sequence
  std::vector<SequenceSplitSpec> splits;
  std::string interleave = "round-robin";
  int64_t pacing_ms = 0;  ///< processing time per record; 0 = as fast as possible
  /// `errors` (file, replay, kafka): what bad input does. "side-output" (default): each bad record
  /// is counted and becomes a row of side output `errors`, and the job goes on (Flink's
  /// `ignore-parse-errors: true`, but not silent); "fail": the first one fails the job, its cause
  /// naming where it was read and why (Flink's default, `ignore-parse-errors: false`).
  std::string errors = "side-output";
  std::string timestamp_field_name = "ts";  ///< name of the generated event-time field
  // generator (in-memory benchmark records {key int64, value double, ts timestamp}; see
  // sources/generator_source.h)
  int64_t count = 0;            ///< records over all subtasks
  int64_t keys = 1000;          ///< distinct keys (`key` is in [0, keys))
  int64_t step_ms = 1;          ///< event-time distance between consecutive records (`step`)
  int64_t rate = 0;             ///< records per second per subtask; 0 = as fast as possible
  int64_t watermark_every = 0;  ///< > 0: add an int64 `wm` field set on every n-th record
  int64_t latency_every = 0;    ///< > 0: add an int64 `emit_ns` field set on every n-th record
  // file, datagen, replay (nested: their keys are documented per type in docs/job-reference.md)
  FileSourceSpec file;
  DatagenSourceSpec datagen;
  ReplaySourceSpec replay;
  KafkaSourceSpec kafka;  ///< `type: kafka`
  SourceLocation location;
  KeyLocations key_locations;  ///< of the `source:` block (also the file / datagen / replay keys)
};

/// Edge partitioning (Flink's StreamPartitioner choices).
enum class Partitioning { kDefault, kForward, kRebalance, kHash, kBroadcast };

/// One input of an operator: the upstream operator, optionally one of its side outputs.
struct InputSpec {
  std::string from;
  std::string side_output;  ///< empty: main output
  Partitioning partitioning = Partitioning::kDefault;
  SourceLocation location;
};

/// `aggregate:` item of a window.
struct AggregateSpec {
  /// count | sum | min | max | avg | first | last | count-distinct | approx-count-distinct |
  /// percentile | approx-percentile | first-value | last-value | listagg
  std::string function;
  std::string field;  ///< empty for count
  /// percentile / approx-percentile: the `percentage` in [0, 1] (Flink's PERCENTILE(x, p)).
  double percentage = 0;
  /// listagg: the separator (Flink's LISTAGG(x, sep); default ",").
  std::string separator = ",";
  /// Output column, always filled in: `as:` if given, else `count` for a count without field,
  /// else `<function>_<field>` with `-` as `_` (`sum_amount`, `count_distinct_user`). Unique
  /// within a window.
  std::string as;
  SourceLocation location;        ///< the aggregate's list item
  SourceLocation field_location;  ///< the `field:` value; line 0 when none was written
};

/// `window:` block of a `type: window` operator.
struct WindowSpec {
  std::string assigner;        ///< tumbling | sliding | session | global
  std::string time = "event";  ///< event | processing
  int64_t size_ms = 0;
  int64_t slide_ms = 0;
  int64_t gap_ms = 0;
  int64_t offset_ms = 0;
  int64_t allowed_lateness_ms = 0;
  std::string trigger;              ///< empty: the assigner's default
  SourceLocation trigger_location;  ///< of the `trigger:` value
  std::string late_output;          ///< side output tag for late records; empty: drop and count
  bool emit_watermark = false;  ///< add a `watermark` column: the watermark that fired the window
  /// `emit-firing: true`: add a `firing` column (0 for a window's first firing, 1, 2, ... for
  /// update firings). Always added when `allowed_lateness_ms > 0`.
  bool emit_firing = false;
  /// Never empty: a window without `aggregate:` gets one `count` (as "count").
  std::vector<AggregateSpec> aggregates;
  SourceLocation location;
  KeyLocations key_locations;  ///< of the `window:` block
};

/// `map:` block of a `type: map` operator: either `field = field * multiply + add` on a numeric
/// field, or `set:` columns computed by expressions (replacing a field of that name, else
/// appended), in YAML order.
struct MapSpec {
  std::string field;
  double multiply = 1.0;
  double add = 0.0;
  std::vector<std::pair<std::string, ExpressionSpec>> set;  ///< non-empty: the expression form
  SourceLocation location;
};

/// `filter:` block of a `type: filter` operator: keeps records with `field <op> value`.
/// `filter: "<condition>"` (a scalar) is the expression form, held in `condition`.
struct FilterSpec {
  std::optional<ExpressionSpec> condition;  ///< set: the expression form (field/op/value unused)
  std::string field;
  std::string op = "gt";  ///< gt | ge | lt | le | eq | ne
  double value = 0.0;
  SourceLocation location;
};

/// `sink:` block of a `type: sink` operator.
struct SinkSpec {
  std::string type;  ///< print | file | collect | checksum | kafka
  std::string path;  ///< file: JSON Lines output path
  /// json | fire (one `>>> FIRE window=[..) count=N watermark=..` line per record)
  std::string format = "json";
  SourceLocation location;
  /// file: create missing directories of `path` (mode 0700). Last, so that positional
  /// initialisers `SinkSpec{type, path, format, location}` keep their meaning.
  bool create_dirs = false;
  /// file: `delivery-guarantee` (Flink's `DeliveryGuarantee`): "none" (default: one JSON Lines
  /// file at `path`, as always) or "exactly-once" (Flink's two-phase-commit `FileSink`: `path` is a
  /// directory of part files, in-progress -> pending at a checkpoint -> finished when it completes;
  /// operators/file_sink/file_sink_operator.h).
  std::string delivery_guarantee = "none";
  /// file with delivery-guarantee none: `write-mode` (Flink's `FileSystem.WriteMode`) decides a
  /// fresh start (no restored state) over an existing file: "overwrite" (default: truncate it) or
  /// "no-overwrite" (the job fails at open). A restore never truncates below the length its
  /// checkpoint recorded: it truncates back to that length and appends.
  std::string write_mode = "overwrite";
  /// exactly-once: Flink's `OutputFileConfig` — finished part files are named
  /// `<part_prefix>-<subtask>-<counter><part_suffix>`.
  std::string part_prefix = "part";
  std::string part_suffix;
  /// exactly-once: Flink's `DefaultRollingPolicy` (`rolling-policy:` block), same defaults.
  struct RollingPolicySpec {
    int64_t part_size_bytes = int64_t{128} * 1024 * 1024;  ///< roll once a part file is larger
    int64_t rollover_interval_ms = 60000;    ///< roll a part file open at least this long
    int64_t inactivity_interval_ms = 60000;  ///< roll a part file not written for this long
    int64_t check_interval_ms = 60000;       ///< Flink's bucket check interval (processing time)
    /// Roll at every checkpoint (Flink's `OnCheckpointRollingPolicy`, what bulk formats use);
    /// false (Flink's row-format default): a checkpoint rolls only a part file over `part_size`.
    bool roll_on_checkpoint = false;
  } rolling_policy;

  // --- type: kafka (Flink's `KafkaSink`; operators/kafka_sink/kafka_sink_operator.h) ---
  // `delivery_guarantee` above applies too: none (Flink's default) | at-least-once | exactly-once.
  std::string bootstrap_servers;  ///< `bootstrap-servers`: "host:port,..." (required)
  std::string topic;              ///< `topic` (required)
  /// `properties`: Kafka producer properties passed through to librdkafka as given (strings).
  std::map<std::string, std::string> kafka_properties;
  std::string key_field;        ///< `key-field`: the record key is this field's value as text
  std::string partition_field;  ///< `partition-field`: an int64 field naming the partition
  /// `transactional-id-prefix` (required for exactly-once): transactional ids are
  /// `<prefix>-<subtask>-<transaction number>`.
  std::string transactional_id_prefix;
  /// `commit-log` (required for exactly-once): JSON Lines file where each committed transaction
  /// is recorded (fsynced), so a restore re-sends only transactions that did not commit.
  std::string commit_log;
  /// `timeout`: bound on every blocking producer call on the task thread (flush, init, commit).
  int64_t kafka_timeout_ms = 30000;
  SourceLocation key_field_location;
  SourceLocation partition_field_location;
  std::map<std::string, SourceLocation> kafka_property_locations;  ///< of each property's value
};

/// One node of the job graph, as written under `operators:`.
struct OperatorSpec {
  std::string id;
  /// source | assign-timestamps-and-watermarks | window | map | filter | sink (more with later
  /// issues)
  std::string type;
  std::vector<InputSpec> inputs;
  int parallelism = 0;  ///< 0: pipeline.parallelism
  std::vector<std::string> key_by;
  std::vector<SourceLocation> key_by_locations;  ///< parallel to `key_by`
  std::optional<SourceSpec> source;
  std::optional<WatermarkStrategySpec> watermarks;
  std::optional<WindowSpec> window;
  std::optional<SinkSpec> sink;
  std::optional<MapSpec> map;
  std::optional<FilterSpec> filter;
  /// For operator types config/ does not know: `params:` (or the block named like the type),
  /// validated by that type's compiler. Empty for the types config/ knows.
  std::optional<ParamNode> params;
  /// `broadcast-watermarks:` of a two-input operator type with a broadcast input:
  /// "exclude" (default, design.md: the broadcast input does not hold event time back) or
  /// "include" (Flink: the minimum over both inputs).
  std::string broadcast_watermarks = "exclude";
  SourceLocation location;
  SourceLocation type_location;  ///< of the `type:` value (for "unknown operator type" errors)
  KeyLocations key_locations;    ///< of the operator mapping (`parallelism`, `key-by`, ...)
};

/// Largest `parallelism` (pipeline or operator): every subtask is a thread of this one process.
inline constexpr int kMaxParallelism = 1024;
/// Largest `pipeline.max-parallelism` (Flink's `UPPER_BOUND_MAX_PARALLELISM`, 2^15).
inline constexpr int kUpperBoundMaxParallelism = 1 << 15;
/// Largest `pipeline.channel-capacity`: every channel allocates its capacity up front.
inline constexpr int64_t kMaxChannelCapacity = int64_t{1} << 20;

/// Largest `window.size / window.slide` of a sliding window: the windows one record belongs to.
inline constexpr int64_t kMaxWindowsPerRecord = 100000;

/// `pipeline:` block.
struct PipelineSpec {
  int parallelism = 1;
  std::string clock = "system";  ///< system | virtual
  int64_t auto_watermark_interval_ms = 200;
  /// Elements per channel (`channel-capacity`). 64 by measurement (issue 10): a producer ahead of
  /// its consumer keeps the channel full, so every batch of a full channel is live and recycled in
  /// turn; 64 batches of 256 rows (~1.6 MiB) stay in cache, 1024 (~26 MiB) did not, and
  /// chain1/chain2_unchained_p1 ran at ~0.3x raw_channel with 1024, ~0.55x / ~0.4x with 64
  /// (16: 0.4-0.7x / 0.3-0.4x, 32 and 128 between).
  int64_t channel_capacity = 64;
  /// `finished-input`: "exclude" (design.md: a finished input leaves the minimum) or "max"
  /// (Flink: it counts as MAX, and so wins over idle inputs).
  std::string finished_input = "exclude";
  /// `max-parallelism`: the number of key groups (runtime/state/key_groups.h). 0 when the job
  /// does not set it: the job graph then uses Flink's default (128, or more for parallelism > 85).
  int max_parallelism = 0;
  SourceLocation max_parallelism_location;  ///< of the `max-parallelism` value, when set
  /// `state-backend` (Flink's `state.backend.type`): "heap" (Flink's `hashmap`) or "rocksdb".
  std::string state_backend = "heap";
  /// `cpu-affinity` (no Flink key): "none" (the kernel places task threads) or "auto" (tidemark
  /// pins each task thread, runtime/task/cpu_affinity.h's rule).
  std::string cpu_affinity = "none";
  RocksDbSpec rocksdb;         ///< `rocksdb:`; only with `state-backend: rocksdb`
  SourceLocation location;     ///< of the `pipeline:` block; line 0 when the block is absent
  KeyLocations key_locations;  ///< of the `pipeline:` block
};

/// `report:` block: a summary line printed by `tidemark run` from what sinks received.
struct ReportSpec {
  std::string label;            ///< e.g. "mode=split"
  std::string windows_sink;     ///< sink id receiving window results (must have a `count` column)
  std::string late_sink;        ///< sink id receiving late records
  std::string breakdown_field;  ///< late records are also counted where this field ...
  std::string breakdown_value;  ///< ... equals this value
  SourceLocation location;
};

/// `checkpointing:` block (Flink's `execution.checkpointing.*` options, same leaf names and
/// defaults). Absent: the job takes no checkpoints and runs exactly as before. Durations in ms.
struct CheckpointingSpec {
  int64_t interval_ms = 0;            ///< required, >= 10 ms (Flink's minimal checkpoint time)
  std::string mode = "exactly-once";  ///< exactly-once (aligned barriers) | at-least-once
  int64_t timeout_ms = 600000;        ///< a checkpoint not complete after this is aborted (10 min)
  int64_t min_pause_ms = 0;           ///< from the end of one checkpoint to the next trigger
  int max_concurrent_checkpoints = 1;
  int tolerable_failed_checkpoints = 0;  ///< consecutive failures before the job fails
  int num_retained = 1;                  ///< completed checkpoints kept on disk
  /// Where checkpoints are written (Flink's `execution.checkpointing.dir`), as written; the runner
  /// resolves a relative path. Empty: the runner chooses (e.g. under the daemon's state dir).
  std::string dir;
  /// A tidemark option (Flink has none; seed 000 §7). false (Flink): after a restore every
  /// watermark generator, the assigners' outputs and every operator's event-time clock start
  /// again at Long.MIN, so records read before the first new watermark are not late, and the same
  /// input can give another late count after a failover. true: watermarks are state too — each
  /// watermark generator's state and the last watermark an assigner emitted are checkpointed and
  /// restored, that watermark is emitted again before the first record, and the window and
  /// keyed process operators keep their checkpointed event time, so a restored run gives the
  /// failure-free run's output.
  bool restore_watermarks = false;
  /// `incremental` (Flink 2.x's `execution.checkpointing.incremental`, default false): with
  /// `pipeline.state-backend: rocksdb`, checkpoints are native RocksDB checkpoints that upload
  /// only new SST files (shared between checkpoints, reference-counted). Savepoints stay
  /// canonical. No effect on the heap backend.
  bool incremental = false;
  SourceLocation location;
  KeyLocations key_locations;
};

/// `restart-strategy:` block (Flink's `restart-strategy.*` options, same leaf names and
/// defaults). Absent: `exponential-delay` with its defaults when the job checkpoints, else `none`
/// (Flink's default since 1.19). Durations in ms. See runtime/checkpoint/restart_strategy.h.
struct RestartStrategySpec {
  std::string type = "none";  ///< none | fixed-delay | exponential-delay | failure-rate
  // fixed-delay
  int64_t attempts = 1;
  int64_t delay_ms = 1000;  ///< fixed-delay and failure-rate
  // exponential-delay
  int64_t initial_backoff_ms = 1000;
  int64_t max_backoff_ms = 60000;
  double backoff_multiplier = 1.5;
  int64_t reset_backoff_threshold_ms = 3600000;
  double jitter_factor = 0.1;
  // failure-rate
  int64_t max_failures_per_interval = 1;
  int64_t failure_rate_interval_ms = 60000;
  SourceLocation location;
  KeyLocations key_locations;
};

/// One entry of the `faults:` block: fault injection for testing recovery (a tidemark feature;
/// Flink's tests do the same with failing test operators). Operator `operator_id` throws, as a
/// failing user function would, in phase `phase`: `process` (its record number
/// `after_records` + 1 in one subtask of one attempt), `snapshot` (its first snapshot after
/// `after_records` records), `restore` (a restored start), `close`. At most `times` times in the
/// job's life (restarts included), counted over all subtasks.
struct FaultSpec {
  std::string operator_id;
  int64_t after_records = 0;
  std::string action = "throw";  ///< throw (the only action)
  int64_t times = 1;
  std::string phase = "process";  ///< `in:`: process | snapshot | restore | close
  SourceLocation location;
};

/// The restart strategy a job runs under: its `restart-strategy:` block, else Flink's default
/// (exponential-delay when it checkpoints, none otherwise).
struct JobSpec;
RestartStrategySpec EffectiveRestartStrategy(const JobSpec& job);

struct JobSpec {
  std::string name;
  std::string file;  ///< the YAML path it came from ("<string>" when loaded from memory)
  PipelineSpec pipeline;
  std::vector<OperatorSpec> operators;
  std::optional<ReportSpec> report;
  std::optional<CheckpointingSpec> checkpointing;
  std::optional<RestartStrategySpec> restart_strategy;
  std::vector<FaultSpec> faults;  ///< `faults:` (empty: none)
};

}  // namespace tidemark
