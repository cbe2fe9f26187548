-- Flink SQL (2.x) for the tidemark job 'files-split-mode-p4' (jobs/files_split_mode_p4.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 3 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '4';
-- Per-operator parallelism (windows (1), fired (1), late (1), errors (1)) has no SQL form: 'parallelism.default' applies to every operator.
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.
-- report 'mode=split readers=4 files=8' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'source' (jobs/files_split_mode_p4.yaml:22:5): file source.
-- The path is the job's, resolved against the job file's folder as given to export; on a cluster use a shared file system (s3://, hdfs://).
-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- DROPPED (jobs/files_split_mode_p4.yaml:28:19): csv-header (Flink's csv format has no header option; with 'csv.ignore-parse-errors' the header line becomes a row whose unparsable fields are NULL, and a NULL event time fails the job); nearest: the files without their header line
-- pacing (processing time per record) has no Flink equivalent; the files are read at full speed.
-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator mode, one
-- watermark per subtask over all the files it reads, not one per file (split) as in tidemark's
-- split mode. Records of one file that is far behind another can be late here.
-- bounded out-of-orderness 1s: tidemark's watermark is max(ts) - 1s - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `user` STRING,
  `amount` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '1.001' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'jobs/data/events',
  'source.path.regex-pattern' = '.*/part-[^/]*\.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

-- DROPPED (jobs/files_split_mode_p4.yaml:42:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`;

-- DROPPED (jobs/files_split_mode_p4.yaml:57:14): the side output 'errors' of a source (bad lines with file, line and reason); nearest: 'csv.ignore-parse-errors' / 'json.ignore-parse-errors', which skip bad lines without a trace
-- Sink 'errors' is left out: its input was dropped.

-- format: fire (>>> FIRE lines) has no Flink equivalent; the print connector prints the rows.
CREATE TABLE `fired` (
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'print'
);

-- Sink 'late' is left out: its input was dropped.

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `fired`
SELECT `window_start`, `window_end`, `count`
FROM `windows`;
END;
