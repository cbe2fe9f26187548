-- Flink SQL (2.x) for the tidemark job 'rides-top-drivers' (jobs/rides_top_drivers.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/rides_top_drivers.yaml:13:5): file source.
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

-- tumbling windows of 5min.
CREATE TEMPORARY VIEW `per-driver` AS
SELECT `zone`,
       `driver`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       SUM(`fare_cents`) AS `fare_cents`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '5' MINUTE))
GROUP BY `window_start`, `window_end`, `window_time`, `zone`, `driver`;

-- window Top-N: the 2 first rows by `fare_cents` DESC NULLS LAST per window and partition.
CREATE TEMPORARY VIEW `top-drivers` AS
SELECT `zone`, `driver`, `window_start`, `window_end`, `count`, `fare_cents`, `rownum`, `rowtime`
FROM (
  SELECT `zone`, `driver`, `window_start`, `window_end`, `count`, `fare_cents`, `rowtime`,
         ROW_NUMBER() OVER (PARTITION BY `window_start`, `window_end`, `zone` ORDER BY `fare_cents` DESC NULLS LAST) AS `rownum`
  FROM `per-driver`)
WHERE `rownum` <= 2;

CREATE TABLE `out` (
  `zone` STRING,
  `driver` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `fare_cents` BIGINT,
  `rownum` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `zone`, `driver`, `window_start`, `window_end`, `count`, `fare_cents`, `rownum`
FROM `top-drivers`;
END;
