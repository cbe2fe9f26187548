-- Flink SQL (2.x) for the tidemark job 'replay-alignment-ahead' (jobs/replay_alignment_ahead.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 4 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.
-- report 'replay-alignment-ahead' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'source' (jobs/replay_alignment_ahead.yaml:20:5): replay source.
-- DROPPED (jobs/replay_alignment_ahead.yaml:23:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
-- DROPPED (jobs/replay_alignment_ahead.yaml:30:18): watermark alignment (group g, max drift 1s) on a source without watermark push-down; nearest: 'scan.watermark.alignment.group' / '.max-drift' / '.update-interval', which only sources with watermark push-down (kafka) honour
CREATE TABLE `source` (
  `ts` BIGINT,
  `split` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen'
);

-- sink type collect (kept by tidemark for reports and tests) becomes blackhole.
CREATE TABLE `records` (
  `ts` BIGINT,
  `split` STRING
) WITH (
  'connector' = 'blackhole'
);

-- DROPPED (jobs/replay_alignment_ahead.yaml:41:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- DROPPED (jobs/replay_alignment_ahead.yaml:42:23): the watermark column (the watermark that fired the window); nearest: window_time, which is window_end - 1 ms, the first watermark that fires the window
-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`;

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
INSERT INTO `records`
SELECT `ts`, `split`
FROM `source`;
INSERT INTO `fired`
SELECT `window_start`, `window_end`, `count`
FROM `windows`;
END;
