-- The prefill the engine trace did, per window [a, b) and replica (the `counters` analysis, shown
-- beside the prompt-token counter's rise): prompt tokens of the step records whose t_done
-- lies in the window (the whole run is closed at its end), computed plus served from the
-- prefix cache, as vllm:prompt_tokens_total counts both. Recomputation after a preemption
-- counts again, as it cost the GPU again.
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
)
select w.win_name, s.replica, grouping(s.replica) as all_replicas,
       coalesce(sum(s.prompt_computed + s.prompt_cached), 0) as computed_tokens
from steps s join win w
  on s.t_done >= w.a and (s.t_done < w.b or (w.closed and s.t_done = w.b))
group by grouping sets ((w.win_name), (w.win_name, s.replica))
