-- What the vLLM metrics say over [$a, $b] (the `metrics_figures` figures): per metric name,
-- finished_reason and histogram bound `le`, the rise of the counter (sum over sample pairs
-- inside the window of the increase; a drop counts the new value, a reset), the largest
-- sample, the plain mean of the samples (for a gauge) and the sample count.
-- All series of one (name, finished_reason, le) are summed (replicas added up), within one
-- family per name: a name the scrapes hold is read from them only, and vLLM's stats log line
-- (sources.format = 'vllm_log') only for names no scrape holds (never the two added).
-- `instants`: the distinct sample times of the name in the window (a rise needs two: one
-- scrape says nothing of what finished).
-- Columns: name, finished_reason, le, rise, max_value, mean_value, samples, instants.
-- params: a, b
with tagged as (
    select m.name, m.labels, m.t, m.value, s.format = 'vllm_log' as from_log
    from metric_samples m join sources s using (source_id)
    where m.t >= $a and m.t <= $b and m.name like 'vllm:%'
),
scraped as (select distinct name from tagged where not from_log),
s as (
    select name, labels::varchar as series, labels['finished_reason'] as finished_reason,
           labels['le'] as le, t, value
    from tagged where not from_log or name not in (select name from scraped)
),
pairs as (
    select name, series, finished_reason, le, value,
           case when lead(value) over w >= value then lead(value) over w - value
                else lead(value) over w end as inc
    from s
    window w as (partition by name, series order by t)
),
per_series as (
    select name, series, finished_reason, le, coalesce(sum(inc), 0) as rise,
           max(value) as max_value, avg(value) as mean_value, count(*) as samples
    from pairs group by all
)
select p.name, finished_reason, le, sum(rise) as rise, sum(max_value) as max_value,
       sum(mean_value) as mean_value, sum(samples) as samples, any_value(i.instants) as instants
from per_series p join (select name, count(distinct t) as instants from s group by name) i
    on i.name = p.name
group by p.name, finished_reason, le order by p.name, finished_reason, le
