-- Which of vLLM's latency histograms the workspace holds, and at how many distinct scrape
-- times their buckets were sampled (a rise needs two; relplan/analyses/histograms.py).
-- Columns: name (the histogram's base name), scrapes.
-- params: bases
select regexp_replace(name, '_bucket$', '') as name, count(distinct t) as scrapes
from metric_samples
where name like '%\_bucket' escape '\'
  and regexp_replace(name, '_bucket$', '') in (select unnest($bases))
group by 1
