-- Flink SQL (2.x) for the tidemark job 'exactly-once-file-sink' (jobs/exactly_once_file_sink.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';

-- Source 'source' (jobs/exactly_once_file_sink.yaml:20:5): datagen source.
-- DROPPED (jobs/exactly_once_file_sink.yaml:23:13): source type datagen (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `split` BIGINT,
  `key` BIGINT,
  `seq` BIGINT,
  `value` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '2000000'
);

-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `key`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`, `key`;

-- Flink's filesystem sink writes a directory of part files at `path`.
-- delivery-guarantee: exactly-once is what Flink's filesystem sink always gives with checkpointing; part-prefix/part-suffix have no SQL option.
CREATE TABLE `sink` (
  `key` BIGINT,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/exactly_once_file_sink',
  'format' = 'json',
  'sink.rolling-policy.file-size' = '32768b',
  'sink.rolling-policy.rollover-interval' = '1000 ms',
  'sink.rolling-policy.inactivity-interval' = '1000 ms',
  'sink.rolling-policy.check-interval' = '100 ms'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `sink`
SELECT `key`, `window_start`, `window_end`, `count`
FROM `windows`;
END;
