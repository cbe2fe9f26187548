-- Flink SQL (2.x) for the tidemark job 'day-windows-offset' (jobs/day_windows_offset.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/day_windows_offset.yaml:14:5): sequence source.
-- DROPPED (jobs/day_windows_offset.yaml:17:13): source type sequence (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `city` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12'
);

-- tumbling windows of 1d, offset -8h.
CREATE TEMPORARY VIEW `days` AS
SELECT `city`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       MIN(`ts`) AS `first_ts`,
       MAX(`ts`) AS `last_ts`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' DAY, INTERVAL '-8' HOUR))
GROUP BY `window_start`, `window_end`, `window_time`, `city`;

CREATE TABLE `out` (
  `city` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `first_ts` BIGINT,
  `last_ts` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `city`, `window_start`, `window_end`, `count`, `first_ts`, `last_ts`
FROM `days`;
END;
