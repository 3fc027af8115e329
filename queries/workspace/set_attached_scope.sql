-- Which partitions of the attachments the views read (workspace/attached_macros.sql):
-- hours lo..hi ('YYYY-MM-DDTHH', inclusive) and the replicas (NULL: all).
-- params: lo, hi, replicas
set variable rp_scope = {'lo': $lo::varchar, 'hi': $hi::varchar, 'replicas': $replicas::varchar[]}
