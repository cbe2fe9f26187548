-- Flink SQL (2.x) for the tidemark job 'interval-join' (jobs/interval_join.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/interval_join.yaml:14:5): replay source.
-- DROPPED (jobs/interval_join.yaml:17:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `side` STRING,
  `id` BIGINT,
  `ts` BIGINT,
  `amount` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen'
);

CREATE TEMPORARY VIEW `orders` AS
SELECT `side`, `id`, `ts`, `amount`, `rowtime`
FROM `source`
WHERE (`side` = 'order');

CREATE TEMPORARY VIEW `payments` AS
SELECT `side`, `id`, `ts`, `amount`, `rowtime`
FROM `source`
WHERE (`side` = 'pay');

-- interval join: l.ts + 0ms <= r.ts <= l.ts + 1s (Flink's IntervalJoin, as tidemark's).
CREATE TEMPORARY VIEW `joined` AS
SELECT l.`side` AS `side`, l.`id` AS `id`, l.`ts` AS `ts`, l.`amount` AS `amount`, r.`side` AS `right_side`, r.`id` AS `right_id`, r.`ts` AS `right_ts`, r.`amount` AS `right_amount`
FROM `orders` AS l
JOIN `payments` AS r
  ON l.`id` = r.`id`
  AND r.`rowtime` >= l.`rowtime` AND r.`rowtime` <= l.`rowtime` + INTERVAL '1' SECOND;

CREATE TABLE `out` (
  `side` STRING,
  `id` BIGINT,
  `ts` BIGINT,
  `amount` BIGINT,
  `right_side` STRING,
  `right_id` BIGINT,
  `right_ts` BIGINT,
  `right_amount` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `side`, `id`, `ts`, `amount`, `right_side`, `right_id`, `right_ts`, `right_amount`
FROM `joined`;
END;
