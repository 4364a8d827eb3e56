-- Every request a query never asked before: no cache can answer it, and no
-- search in flight can be joined. Each wrk thread has its own Lua state;
-- setup gives each its own id (a global: thread:set sets globals), so two
-- threads never ask the same query.
local counter = 0
local threads = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function request()
  counter = counter + 1
  return wrk.format("GET", "/search?format=json&q=load+t" .. id .. "+n" .. counter)
end
