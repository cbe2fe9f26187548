-- Flink SQL (2.x) for the tidemark job 'sliding_10' (jobs/bench/sliding_10.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';

-- Source 'source' (jobs/bench/sliding_10.yaml:7:5): generator source.
-- DROPPED (jobs/bench/sliding_10.yaml:9:20): source type generator (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10000'
);

-- sliding windows of 10s every 1s (HOP takes the slide first).
CREATE TEMPORARY VIEW `windows` AS
SELECT `key`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(HOP(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND, INTERVAL '10' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`, `key`;

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
