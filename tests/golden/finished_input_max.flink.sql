-- Flink SQL (2.x) for the tidemark job 'finished-input-max' (jobs/finished_input_max.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 4 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.finished-input max is Flink's own rule: a finished input counts as MAX in the watermark minimum.
SET 'table.exec.source.idle-timeout' = '500ms';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.
-- report 'finished-input=max' (tidemark's summary line) has no Flink equivalent; read the sinks instead.

-- Source 'early' (jobs/finished_input_max.yaml:18:5): replay source.
-- DROPPED (jobs/finished_input_max.yaml:21:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 100ms: tidemark's watermark is max(ts) - 100ms - 1ms.
CREATE TABLE `early` (
  `ts` BIGINT,
  `src` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.101' SECOND
) WITH (
  'connector' = 'datagen'
);

-- Source 'late' (jobs/finished_input_max.yaml:28:5): replay source.
-- DROPPED (jobs/finished_input_max.yaml:31:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 100ms: tidemark's watermark is max(ts) - 100ms - 1ms.
-- idleness 500ms: 'table.exec.source.idle-timeout' (set above) marks a source subtask idle after 500ms without records.
CREATE TABLE `late` (
  `ts` BIGINT,
  `src` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.101' SECOND
) WITH (
  'connector' = 'datagen'
);

-- union: the watermark is the minimum over the inputs, in Flink as in tidemark.
CREATE TEMPORARY VIEW `both` AS
SELECT `ts`, `src`, `rowtime` FROM `early`
UNION ALL
SELECT `ts`, `src`, `rowtime` FROM `late`;

-- DROPPED (jobs/finished_input_max.yaml:48:20): the late side output 'late-records'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- DROPPED (jobs/finished_input_max.yaml:49:23): the watermark column (the watermark that fired the window); nearest: window_time, which is window_end - 1 ms, the first watermark that fires the window
-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `both`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`;

-- format: fire (>>> FIRE lines) has no Flink equivalent; the print connector prints the rows.
CREATE TABLE `fired` (
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'print'
);

-- Sink 'late-records' is left out: its input was dropped.

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `fired`
SELECT `window_start`, `window_end`, `count`
FROM `windows`;
END;
