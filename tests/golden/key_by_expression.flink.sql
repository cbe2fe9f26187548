-- Flink SQL (2.x) for the tidemark job 'key-by-expression' (jobs/key_by_expression.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/key_by_expression.yaml:11:5): sequence source.
-- DROPPED (jobs/key_by_expression.yaml:14:13): source type sequence (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 500ms: tidemark's watermark is max(ts) - 500ms - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `user` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.501' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '80'
);

-- The key-by expression of 'windows' as a column (as tidemark's inserted map).
CREATE TEMPORARY VIEW `windows.key-by` AS
SELECT `ts`, `user`, MOD(`user`, 2) AS `key`, `rowtime`
FROM `source`;

-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `key`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       MAX(`user`) AS `max_user`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `windows.key-by`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`, `key`;

CREATE TABLE `out` (
  `key` BIGINT,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `max_user` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `key`, `window_start`, `window_end`, `count`, `max_user`
FROM `windows`;
END;
