-- Samples of vllm:num_requests_waiting and vllm:num_requests_running (the engine's backlog,
-- waiting + running; the `drain` figure and the one-series check, docs/analyses.md).
-- One family per quantity: a name scraped from /metrics (or a Prometheus export) takes its
-- samples from there only; vLLM's stats log line (sources.format = 'vllm_log') is used for a
-- name only when no scrape holds it, so the two are never added together.
-- `family` is `stats line` or `metrics`; `series` the labels as text.
-- Columns: t, name, series, value, family.
-- params:
with tagged as (
    select m.t, m.name, m.labels::varchar as series, m.value,
           case when s.format = 'vllm_log' then 'stats line' else 'metrics' end as family
    from metric_samples m join sources s using (source_id)
    where m.name in ('vllm:num_requests_waiting', 'vllm:num_requests_running')
),
scraped as (select distinct name from tagged where family = 'metrics')
select t, name, series, value, family from tagged
where family = 'metrics' or name not in (select name from scraped)
order by t, name, series
