-- Flink SQL (2.x) for the tidemark job 'clicks-approx-per-page' (jobs/clicks_approx_per_page.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 2 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/clicks_approx_per_page.yaml:14:5): file source.
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

-- DROPPED (jobs/clicks_approx_per_page.yaml:32:11): approx-count-distinct of user (a HyperLogLog estimate); nearest: COUNT(DISTINCT x), exact, written instead (APPROX_COUNT_DISTINCT runs only in batch mode)
-- DROPPED (jobs/clicks_approx_per_page.yaml:34:11): approx-percentile of dwell_ms (a t-digest estimate); nearest: PERCENTILE(x, p), exact, written instead (Flink SQL has no approximate percentile)
-- tumbling windows of 5min.
CREATE TEMPORARY VIEW `per-page` AS
SELECT `page`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       COUNT(DISTINCT `user`) AS `users`,
       COUNT(DISTINCT `user`) AS `users_approx`,
       PERCENTILE(`dwell_ms`, 0.75) AS `p75_dwell_ms`,
       PERCENTILE(`dwell_ms`, 0.75) AS `p75_dwell_ms_approx`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '5' MINUTE))
GROUP BY `window_start`, `window_end`, `window_time`, `page`;

CREATE TABLE `out` (
  `page` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `users` BIGINT,
  `users_approx` BIGINT,
  `p75_dwell_ms` DOUBLE,
  `p75_dwell_ms_approx` DOUBLE
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `page`, `window_start`, `window_end`, `count`, `users`, `users_approx`, `p75_dwell_ms`, `p75_dwell_ms_approx`
FROM `per-page`;
END;
