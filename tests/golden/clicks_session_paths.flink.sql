-- Flink SQL (2.x) for the tidemark job 'clicks-session-paths' (jobs/clicks_session_paths.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/clicks_session_paths.yaml:12:5): file source.
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

-- DROPPED (jobs/clicks_session_paths.yaml:29:11): first-value of page in a session window; nearest: none: Flink's FIRST_VALUE / LAST_VALUE cannot merge sessions (a tumbling or sliding window can use them)
-- DROPPED (jobs/clicks_session_paths.yaml:30:11): last-value of page in a session window; nearest: none: Flink's FIRST_VALUE / LAST_VALUE cannot merge sessions (a tumbling or sliding window can use them)
-- session windows, gap 30s per key.
CREATE TEMPORARY VIEW `sessions` AS
SELECT `user`,
       SESSION_START(`rowtime`, INTERVAL '30' SECOND) AS `window_start`,
       SESSION_END(`rowtime`, INTERVAL '30' SECOND) AS `window_end`,
       COUNT(*) AS `count`,
       CAST(NULL AS STRING) AS `landing_page`,
       CAST(NULL AS STRING) AS `exit_page`,
       COUNT(DISTINCT `page`) AS `pages`,
       LISTAGG(`page`, ' > ') AS `path`,
       SESSION_ROWTIME(`rowtime`, INTERVAL '30' SECOND) AS `rowtime`
FROM `source`
GROUP BY SESSION(`rowtime`, INTERVAL '30' SECOND), `user`;

CREATE TABLE `out` (
  `user` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `landing_page` STRING,
  `exit_page` STRING,
  `pages` BIGINT,
  `path` STRING
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `user`, `window_start`, `window_end`, `count`, `landing_page`, `exit_page`, `pages`, `path`
FROM `sessions`;
END;
