-- Flink SQL (2.x) for the tidemark job 'failover-watermarks-flink' (jobs/failover_watermarks_flink.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 3 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '600ms';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1';
SET 'restart-strategy.fixed-delay.delay' = '200ms';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.
-- report 'mode=operator, failover flink' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'source' (jobs/failover_watermarks_flink.yaml:21:5): sequence source.
-- DROPPED (jobs/failover_watermarks_flink.yaml:24:13): source type sequence (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- Operator mode: the assign-timestamps-and-watermarks 'assign' (jobs/failover_watermarks_flink.yaml:30:5) after this source is its WATERMARK FOR.
-- bounded out-of-orderness 1s: tidemark's watermark is max(ts) - 1s - 1ms.
CREATE TABLE `source` (
  `ts` BIGINT,
  `split` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '1.001' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '400'
);

-- DROPPED (jobs/failover_watermarks_flink.yaml:43:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- DROPPED (jobs/failover_watermarks_flink.yaml:44:23): the watermark column (the watermark that fired the window); nearest: window_time, which is window_end - 1 ms, the first watermark that fires the window
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
INSERT INTO `fired`
SELECT `window_start`, `window_end`, `count`
FROM `windows`;
END;
