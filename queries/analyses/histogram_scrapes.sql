-- Which of vLLM's latency histograms the workspace holds (any of its _bucket, _count or
-- _sum series), and at how many distinct scrape times they were sampled (a rise needs two;
-- relplan/analyses/histograms.py).
-- Columns: name (the histogram's base name), scrapes.
-- params: bases
select regexp_replace(name, '_(bucket|count|sum)$', '') as name, count(distinct t) as scrapes
from metric_samples
where regexp_matches(name, '_(bucket|count|sum)$')
  and regexp_replace(name, '_(bucket|count|sum)$', '') in (select unnest($bases))
group by 1
