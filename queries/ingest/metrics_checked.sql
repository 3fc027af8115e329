-- The staged metric samples with the reason each is refused (NULL when it is fine): the
-- parser's own reason, else a missing or non-finite time. NaN values are kept (Prometheus
-- writes NaN for some gauges and summaries); a sample needs a finite time.
-- params:
create or replace temp view metrics_checked as
select
    *,
    coalesce(perr, case
        when t is null then 'sample has no time; expected a timestamp or a preceding # SCRAPE line'
        when not isfinite(t) then 'sample time is not finite'
    end) as reason
from stage_metrics
