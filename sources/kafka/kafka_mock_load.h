#pragma once

#include <cstdint>
#include <string>

namespace tidemark {

/// What to load into a topic (`tidemark kafka-mock`, a kafka source's `mock-cluster`).
struct KafkaLoadOptions {
  std::string topic;
  std::string path;             ///< JSON Lines file; each non-blank line is one record's value
  int partitions = 1;           ///< the topic's partitions (records go to [0, partitions))
  std::string partition_field;  ///< int field giving the partition; "": line k → k mod partitions
  std::string timestamp_field;  ///< int field giving the CreateTime in ms; "": the produce time
  std::string key_field;        ///< field whose value (as text) is the record key; "": no key
};

/// Produces every line of `options.path` as it is (the value) into `options.topic` at
/// `bootstrap_servers`, in file order (so a partition holds its lines in file order), and waits
/// until all are acknowledged. Returns the number of records produced.
/// Errors: InvalidArgument naming path:line for a line that is not a JSON object or whose
/// partition / timestamp field is missing, not an integer or out of range; IoError when the file
/// cannot be read or a record is not acknowledged within 30 s. Any thread; blocks.
int64_t LoadJsonLinesIntoTopic(const std::string& bootstrap_servers,
                               const KafkaLoadOptions& options);

}  // namespace tidemark
