-- Every request a query never asked before: no cache can answer it.
local counter = 0
local id = 0
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function request()
  counter = counter + 1
  return wrk.format("GET", "/search?format=json&q=load+t" .. id .. "+n" .. counter)
end
