-- Flink SQL (2.x) for the tidemark job 'latency_3tasks' (jobs/bench/latency_3tasks.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.cpu-affinity auto is not exported: Flink has no key to pin task threads.

-- Source 'source' (jobs/bench/latency_3tasks.yaml:11:5): generator source.
-- DROPPED (jobs/bench/latency_3tasks.yaml:13:20): source type generator (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
CREATE TABLE `source` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT,
  `emit_ns` BIGINT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '5000000'
);

CREATE TEMPORARY VIEW `op1` AS
SELECT `key`, `value` * 0.999 + 0.001 AS `value`, `ts`, `emit_ns`
FROM `source`;

CREATE TEMPORARY VIEW `op2` AS
SELECT `key`, `value`, `ts`, `emit_ns`
FROM `op1`
WHERE `value` > 0.05;

-- sink type checksum (kept by tidemark for reports and tests) becomes blackhole.
CREATE TABLE `sink` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT,
  `emit_ns` BIGINT
) WITH (
  'connector' = 'blackhole'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `sink`
SELECT `key`, `value`, `ts`, `emit_ns`
FROM `op2`;
END;
