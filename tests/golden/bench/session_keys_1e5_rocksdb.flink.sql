-- Flink SQL (2.x) for the tidemark job 'session_keys_1e5_rocksdb' (jobs/bench/session_keys_1e5_rocksdb.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'state.backend.type' = 'rocksdb';
SET 'state.backend.rocksdb.memory.managed' = 'true';
SET 'state.backend.rocksdb.memory.fixed-per-slot' = '16777216b';

-- Source 'source' (jobs/bench/session_keys_1e5_rocksdb.yaml:12:5): generator source.
-- DROPPED (jobs/bench/session_keys_1e5_rocksdb.yaml:14:20): source type generator (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10000000'
);

-- session windows, gap 1000s per key.
CREATE TEMPORARY VIEW `windows` AS
SELECT `key`,
       SESSION_START(`rowtime`, INTERVAL '0:16:40' HOUR TO SECOND) AS `window_start`,
       SESSION_END(`rowtime`, INTERVAL '0:16:40' HOUR TO SECOND) AS `window_end`,
       COUNT(*) AS `count`,
       SESSION_ROWTIME(`rowtime`, INTERVAL '0:16:40' HOUR TO SECOND) AS `rowtime`
FROM `source`
GROUP BY SESSION(`rowtime`, INTERVAL '0:16:40' HOUR TO SECOND), `key`;

-- sink type checksum (kept by tidemark for reports and tests) becomes blackhole.
CREATE TABLE `sink` (
  `key` BIGINT,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'blackhole'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `sink`
SELECT `key`, `window_start`, `window_end`, `count`
FROM `windows`;
END;
