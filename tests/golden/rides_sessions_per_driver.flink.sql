-- Flink SQL (2.x) for the tidemark job 'rides-sessions-per-driver' (jobs/rides_sessions_per_driver.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/rides_sessions_per_driver.yaml:9:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator mode, one
-- watermark per subtask over all the files it reads, not one per file (split) as in tidemark's
-- split mode. Records of one file that is far behind another can be late here.
-- bounded out-of-orderness 5s: tidemark's watermark is max(ts) - 5s - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `driver` STRING,
  `zone` STRING,
  `fare_cents` BIGINT,
  `distance_m` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '5.001' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/rides.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

-- session windows, gap 2min per key.
CREATE TEMPORARY VIEW `shifts` AS
SELECT `driver`,
       SESSION_START(`rowtime`, INTERVAL '2' MINUTE) AS `window_start`,
       SESSION_END(`rowtime`, INTERVAL '2' MINUTE) AS `window_end`,
       COUNT(*) AS `count`,
       MIN(`ts`) AS `first_ts`,
       MAX(`ts`) AS `last_ts`,
       SUM(`distance_m`) AS `distance_m`,
       SESSION_ROWTIME(`rowtime`, INTERVAL '2' MINUTE) AS `rowtime`
FROM `source`
GROUP BY SESSION(`rowtime`, INTERVAL '2' MINUTE), `driver`;

CREATE TABLE `out` (
  `driver` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `first_ts` BIGINT,
  `last_ts` BIGINT,
  `distance_m` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `driver`, `window_start`, `window_end`, `count`, `first_ts`, `last_ts`, `distance_m`
FROM `shifts`;
END;
