-- Flink SQL (2.x) for the tidemark job 'window-join' (jobs/window_join.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/window_join.yaml:13:5): replay source.
-- DROPPED (jobs/window_join.yaml:16:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
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

CREATE TEMPORARY VIEW `orders-only` AS
SELECT `side`, `id`, `ts`, `amount`, `rowtime`
FROM `source`
WHERE (`side` = 'order');

CREATE TEMPORARY VIEW `payments-only` AS
SELECT `side`, `id`, `ts`, `amount`, `rowtime`
FROM `source`
WHERE (`side` = 'pay');

CREATE TEMPORARY VIEW `orders` AS
SELECT `id`, `ts` AS `order_ts`, `amount`, `rowtime`
FROM `orders-only`;

CREATE TEMPORARY VIEW `payments` AS
SELECT `id`, `ts` AS `pay_ts`, `amount` AS `paid`, `rowtime`
FROM `payments-only`;

-- window join in tumbling windows of 5s.
CREATE TEMPORARY VIEW `joined` AS
SELECT l.`id` AS `id`, l.`order_ts` AS `order_ts`, l.`amount` AS `amount`, r.`id` AS `right_id`, r.`pay_ts` AS `pay_ts`, r.`paid` AS `paid`, l.`window_start` AS `window_start`, l.`window_end` AS `window_end`
FROM (SELECT * FROM TABLE(TUMBLE(TABLE `orders`, DESCRIPTOR(`rowtime`), INTERVAL '5' SECOND))) AS l
JOIN (SELECT * FROM TABLE(TUMBLE(TABLE `payments`, DESCRIPTOR(`rowtime`), INTERVAL '5' SECOND))) AS r
  ON l.`id` = r.`id` AND l.`window_start` = r.`window_start` AND l.`window_end` = r.`window_end`;

CREATE TABLE `out` (
  `id` BIGINT,
  `order_ts` BIGINT,
  `amount` BIGINT,
  `right_id` BIGINT,
  `pay_ts` BIGINT,
  `paid` BIGINT,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3)
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `id`, `order_ts`, `amount`, `right_id`, `pay_ts`, `paid`, `window_start`, `window_end`
FROM `joined`;
END;
