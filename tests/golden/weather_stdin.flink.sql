-- Flink SQL (2.x) for the tidemark job 'weather-stdin' (jobs/weather_stdin.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/weather_stdin.yaml:20:5): stdin source.
-- DROPPED (jobs/weather_stdin.yaml:23:13): source type stdin (Flink has no standard-input connector); nearest: 'connector' = 'filesystem' over the file piped in (datagen rows here)
-- timestamp-format "dd.MM.yyyy HH:mm:ss": the rowtime is TO_TIMESTAMP(observed, pattern). A value that does not match
-- is NULL there, and Flink fails the job on a NULL rowtime; tidemark counts it as bad input.
-- bounded out-of-orderness 10min: tidemark's watermark is max(ts) - 10min - 1ms.
CREATE TABLE `source` (
  `station` STRING,
  `temp_c` DOUBLE,
  `observed` STRING,
  `rowtime` AS CAST(TO_TIMESTAMP(`observed`, 'dd.MM.yyyy HH:mm:ss') AS TIMESTAMP_LTZ(3)),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0:10:00.001' HOUR TO SECOND
) WITH (
  'connector' = 'datagen'
);

-- tumbling windows of 1h.
CREATE TEMPORARY VIEW `hourly` AS
SELECT `station`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       MIN(`temp_c`) AS `min_c`,
       MAX(`temp_c`) AS `max_c`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' HOUR))
GROUP BY `window_start`, `window_end`, `window_time`, `station`;

CREATE TABLE `out` (
  `station` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `min_c` DOUBLE,
  `max_c` DOUBLE
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `station`, `window_start`, `window_end`, `count`, `min_c`, `max_c`
FROM `hourly`;
END;
