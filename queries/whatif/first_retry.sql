-- When the first retry the attempts table holds was sent (relplan whatif fit: until then every
-- prompt token vLLM served from its prefix cache is a prefix the calls share; after it a retry
-- also finds its own earlier prompt cached). Column: t (epoch s; NULL without a retry).
-- params:
select min(t_sent) as t from attempts where attempt > 0
