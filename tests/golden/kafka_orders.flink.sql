-- Flink SQL (2.x) for the tidemark job 'kafka-orders' (jobs/kafka_orders.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '10000ms';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';

-- Source 'orders' (jobs/kafka_orders.yaml:13:5): kafka source.
-- Bad values are skipped ('ignore-parse-errors'), as tidemark counts and drops them.
-- The event time is the Kafka record's timestamp (metadata 'timestamp').
-- bounded out-of-orderness 5s: tidemark's watermark is max(ts) - 5s - 1ms.
-- idleness 30s: a split without records for 30s is idle.
CREATE TABLE `orders` (
  `user` STRING,
  `amount` BIGINT,
  `order_id` STRING,
  `rowtime` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '5.001' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'kafka-1:9092,kafka-2:9092',
  'properties.group.id' = 'order-totals',
  'scan.startup.mode' = 'group-offsets',
  'properties.auto.offset.reset' = 'earliest',
  'scan.topic-partition-discovery.interval' = '300000ms',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true',
  'key.format' = 'raw',
  'key.fields' = 'order_id',
  'value.fields-include' = 'EXCEPT_KEY',
  'properties.fetch.wait.max.ms' = '100',
  'scan.watermark.idle-timeout' = '30000ms'
);

-- tumbling windows of 1min.
CREATE TEMPORARY VIEW `totals` AS
SELECT `user`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       SUM(`amount`) AS `amount`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `orders`, DESCRIPTOR(`rowtime`), INTERVAL '1' MINUTE))
GROUP BY `window_start`, `window_end`, `window_time`, `user`;

-- commit-log: Flink resumes transactions itself and needs none.
CREATE TABLE `out` (
  `user` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `amount` BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'order-totals',
  'properties.bootstrap.servers' = 'kafka-1:9092,kafka-2:9092',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'order-totals',
  'key.format' = 'raw',
  'key.fields' = 'user'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `user`, `window_start`, `window_end`, `count`, `amount`
FROM `totals`;
END;
