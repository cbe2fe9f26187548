-- Flink SQL (2.x) for the tidemark job 'flights-airports-inner' (jobs/flights_airports_inner.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/flights_airports_inner.yaml:13:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
CREATE TABLE `source` (
  `ts` BIGINT,
  `flight` STRING,
  `origin` STRING,
  `dest` STRING,
  `delay_min` BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/flights.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

-- Lookup join 'enriched' (jobs/flights_airports_inner.yaml:20:5): Flink's filesystem connector has no lookup support, so the table is a bounded
-- filesystem table and the join a regular join on the keys (the same rows for an inner join).
-- The table is all or nothing, as tidemark's (a bad line fails the job).
CREATE TABLE `enriched_table` (
  `code` STRING,
  `name` STRING,
  `city` STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/airports.csv',
  'format' = 'csv'
);

CREATE TEMPORARY VIEW `enriched` AS
SELECT l.`ts` AS `ts`, l.`flight` AS `flight`, l.`origin` AS `origin`, l.`dest` AS `dest`, l.`delay_min` AS `delay_min`, t.`code` AS `code`, t.`name` AS `name`, t.`city` AS `city`
FROM `source` AS l
JOIN `enriched_table` AS t
  ON l.`origin` = t.`code`;

CREATE TEMPORARY VIEW `named` AS
SELECT `flight`, `origin`, `name` AS `origin_name`, `city` AS `origin_city`, `delay_min`
FROM `enriched`;

CREATE TABLE `out` (
  `flight` STRING,
  `origin` STRING,
  `origin_name` STRING,
  `origin_city` STRING,
  `delay_min` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `flight`, `origin`, `origin_name`, `origin_city`, `delay_min`
FROM `named`;
END;
