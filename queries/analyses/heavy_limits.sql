-- Per-request limits sized from the distribution (the `heavy_requests` analysis): for the
-- prompt size (`prompt_tokens`) and the requested `max_tokens` of the attempts (attached ones
-- excluded: they repeat a request already counted) sent in [$t_from, $t_to], per model (tier; null model: its own tier)
-- and over all (all_tiers = true): n, the top $k values (min and max of them), and the limit
-- that cuts the top $k while keeping 99 % of the rest: the rest's nearest-rank p99 (its
-- ceil(0.99 * n_rest)-th smallest value, an observed one); with it how many of the top $k and
-- of the rest lie above it.
-- Measures with no value in a tier give no row; a tier of $k values or fewer has no rest
-- (limit null).
-- params: t_from, t_to, k
with a as (
    select model, prompt_tokens, max_tokens
    from attempts
    where not attached and t_sent >= $t_from and t_sent <= $t_to
),
long as (
    select measure, model as tier, false as all_tiers, v
    from (unpivot a on prompt_tokens, max_tokens into name measure value v)
    union all
    select measure, null as tier, true as all_tiers, v
    from (unpivot a on prompt_tokens, max_tokens into name measure value v)
),
ranked as (
    select *, row_number() over (p order by v desc) as rk, count(*) over p as n_all
    from long where v is not null
    window p as (partition by measure, all_tiers, tier)
),
stats as (
    select measure, all_tiers, tier, count(*) as n,
           min(v) filter (where rk <= $k) as top_min,
           max(v) filter (where rk <= $k) as top_max,
           max(v) filter (where rk > $k and rk = n_all - ceil(0.99 * (n_all - $k)) + 1)
               as rest_p99,
           max(v) filter (where rk > $k) as rest_max
    from ranked group by all
)
select s.measure, s.all_tiers, s.tier, s.n, s.top_min, s.top_max, s.rest_max,
       s.rest_p99 as limit_value,
       count(*) filter (where r.rk <= $k and r.v > s.rest_p99) as cuts_top,
       count(*) filter (where r.rk > $k and r.v > s.rest_p99) as cuts_rest,
       least(count(*), $k) as top_n
from stats s join ranked r
  on r.measure = s.measure and r.all_tiers = s.all_tiers and r.tier is not distinct from s.tier
group by all
order by s.measure, s.all_tiers, s.tier nulls last
