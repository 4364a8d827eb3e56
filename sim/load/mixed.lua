-- A mixed load: queries drawn from a few hundred, so some repeat (cache
-- hits, coalescing) and some are new; all formats a client uses.
local formats = {"json", "json", "json", "html", "csv", "rss"}
math.randomseed(os.time())

function request()
  local q = "soak+query+" .. math.random(1, 400)
  local f = formats[math.random(1, #formats)]
  return wrk.format("GET", "/search?format=" .. f .. "&q=" .. q)
end
