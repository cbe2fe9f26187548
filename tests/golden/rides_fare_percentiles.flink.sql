-- Flink SQL (2.x) for the tidemark job 'rides-fare-percentiles' (jobs/rides_fare_percentiles.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/rides_fare_percentiles.yaml:17:5): file source.
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

-- `first_driver` takes the value of the earliest event time; FIRST_VALUE the first row to arrive: the same for rows in event-time order.
-- `last_driver` takes the value of the latest event time; LAST_VALUE the last row to arrive: the same for rows in event-time order.
-- tumbling windows of 5min.
CREATE TEMPORARY VIEW `per-zone` AS
SELECT `zone`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       PERCENTILE(`fare_cents`, 0.5) AS `median_fare`,
       PERCENTILE(`fare_cents`, 0.9) AS `p90_fare`,
       COUNT(DISTINCT `driver`) AS `drivers`,
       FIRST_VALUE(`driver`) AS `first_driver`,
       LAST_VALUE(`driver`) AS `last_driver`,
       LISTAGG(`driver`, ' ') AS `driver_list`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '5' MINUTE))
GROUP BY `window_start`, `window_end`, `window_time`, `zone`;

CREATE TABLE `out` (
  `zone` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `median_fare` DOUBLE,
  `p90_fare` DOUBLE,
  `drivers` BIGINT,
  `first_driver` STRING,
  `last_driver` STRING,
  `driver_list` STRING
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `zone`, `window_start`, `window_end`, `count`, `median_fare`, `p90_fare`, `drivers`, `first_driver`, `last_driver`, `driver_list`
FROM `per-zone`;
END;
