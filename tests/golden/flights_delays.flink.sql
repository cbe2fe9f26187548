-- Flink SQL (2.x) for the tidemark job 'flights-delays' (jobs/flights_delays.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/flights_delays.yaml:17:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator mode, one
-- watermark per subtask over all the files it reads, not one per file (split) as in tidemark's
-- split mode. Records of one file that is far behind another can be late here.
-- bounded out-of-orderness 1min: tidemark's watermark is max(ts) - 1min - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `flight` STRING,
  `origin` STRING,
  `dest` STRING,
  `delay_min` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '60.001' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/flights.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

CREATE TEMPORARY VIEW `delays` AS
SELECT `flight`, CONCAT(LOWER(`origin`), '-', LOWER(`dest`)) AS `route`, DATE_FORMAT(CAST(TO_TIMESTAMP_LTZ(`ts`, 3) AS TIMESTAMP(3)), 'yyyy-MM-dd HH:mm') AS `departure`, CASE WHEN (`delay_min` IS NULL) THEN 'cancelled' WHEN (`delay_min` >= 60) THEN 'severe' WHEN (`delay_min` >= 15) THEN 'late' ELSE 'on-time' END AS `delay_class`, COALESCE(CAST(`delay_min` AS STRING), 'n/a') AS `delay_text`, HOUR(CAST(TO_TIMESTAMP_LTZ(`ts`, 3) AS TIMESTAMP(3))) AS `hour`, `rowtime`
FROM `source`;

CREATE TABLE `out` (
  `flight` STRING,
  `route` STRING,
  `departure` STRING,
  `delay_class` STRING,
  `delay_text` STRING,
  `hour` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `flight`, `route`, `departure`, `delay_class`, `delay_text`, `hour`
FROM `delays`;
END;
