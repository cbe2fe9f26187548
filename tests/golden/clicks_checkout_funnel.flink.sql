-- Flink SQL (2.x) for the tidemark job 'clicks-checkout-funnel' (jobs/clicks_checkout_funnel.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/clicks_checkout_funnel.yaml:9:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator mode, one
-- watermark per subtask over all the files it reads, not one per file (split) as in tidemark's
-- split mode. Records of one file that is far behind another can be late here.
-- bounded out-of-orderness 2s: tidemark's watermark is max(ts) - 2s - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `user` STRING,
  `page` STRING,
  `dwell_ms` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '2.001' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/clicks.jsonl',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TEMPORARY VIEW `checkout` AS
SELECT `ts`, `user`, `page`, `dwell_ms`, `rowtime`
FROM `source`
WHERE (((`page` = '/cart') OR (`page` = '/checkout')) AND (`user` <> 'ben'));

CREATE TEMPORARY VIEW `tenths` AS
SELECT `ts`, `user`, `page`, `dwell_ms`, (`dwell_ms` * 10) AS `dwell_ds`, `rowtime`
FROM `checkout`;

-- tumbling windows of 3min.
CREATE TEMPORARY VIEW `per-user` AS
SELECT `user`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       SUM(`dwell_ds`) AS `dwell_ds`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `tenths`, DESCRIPTOR(`rowtime`), INTERVAL '3' MINUTE))
GROUP BY `window_start`, `window_end`, `window_time`, `user`;

CREATE TABLE `out` (
  `user` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `dwell_ds` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `user`, `window_start`, `window_end`, `count`, `dwell_ds`
FROM `per-user`;
END;
