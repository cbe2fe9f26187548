-- Flink SQL (2.x) for the tidemark job 'lateness-grows-fixed' (jobs/lateness_grows_fixed.yaml), written by `tidemark export --flink-sql`.
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
-- report 'strategy=fixed' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'source' (jobs/lateness_grows_fixed.yaml:20:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- pacing (processing time per record) has no Flink equivalent; the files are read at full speed.
-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator mode, one
-- watermark per subtask over all the files it reads, not one per file (split) as in tidemark's
-- split mode. Records of one file that is far behind another can be late here.
-- bounded out-of-orderness 450ms: tidemark's watermark is max(ts) - 450ms - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `key` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.451' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/lateness_grows.jsonl',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

-- DROPPED (jobs/lateness_grows_fixed.yaml:36:60): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- tumbling windows of 100ms.
CREATE TEMPORARY VIEW `windows` AS
SELECT `key`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '0.1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`, `key`;

-- sink type collect (kept by tidemark for reports and tests) becomes blackhole.
CREATE TABLE `fired` (
  `key` BIGINT,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'blackhole'
);

-- Sink 'late' is left out: its input was dropped.

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `fired`
SELECT `key`, `window_start`, `window_end`, `count`
FROM `windows`;
END;
