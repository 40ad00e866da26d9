-- wrk script of benches/html_view/run.sh: each connection sends the queries of a file in
-- turn (one path and query a line), each with a `format` parameter appended, so that the
-- same queries are timed as JSON (`format=json`) and as the HTML view (`format=api`).
-- Usage: wrk ... -s requests.lua URL -- QUERIES_FILE FORMAT
local paths = {}
local next_path = 0

function init(args)
  for line in io.lines(args[1]) do
    local sep = line:find("?", 1, true) and "&" or "?"
    paths[#paths + 1] = line .. sep .. "format=" .. args[2]
  end
  -- Each thread starts at its own place in the list.
  next_path = math.random(#paths)
end

function request()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path])
end
