-- Flink SQL (2.x) for the tidemark job 'idle-advance' (jobs/idle_advance.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 3 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.
-- report 'idle-advance' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'source' (jobs/idle_advance.yaml:21:5): replay source.
-- DROPPED (jobs/idle_advance.yaml:24:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 500ms: tidemark's watermark is max(ts) - 500ms - 1ms.
-- idle-advance 2s: no Flink equivalent (beyond Flink): tidemark moves this source's watermark on with processing time once it has had no record for 2s; Flink's watermark waits for the next record, so windows close later (or only at end of input).
CREATE TABLE `source` (
  `ts` BIGINT,
  `split` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.501' SECOND
) WITH (
  'connector' = 'datagen'
);

-- DROPPED (jobs/idle_advance.yaml:38:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- DROPPED (jobs/idle_advance.yaml:39:23): the watermark column (the watermark that fired the window); nearest: window_time, which is window_end - 1 ms, the first watermark that fires the window
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
