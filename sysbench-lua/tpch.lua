#!/usr/bin/env sysbench
-- TPC-H queries under sysbench 1.0.20: each event runs one of the 22 queries (round robin over
-- --queries, or only --query=N) as a text-protocol query and reads its whole result; at the end
-- a per-query latency table (count, mean, p95, max in ms) is printed.
--
-- The data must already be loaded (`orcinus tpch --sf N`, or dbgen/tpchgen-cli output for a
-- peer) into the database given by --mysql-db. The queries are the MySQL-dialect files
-- qNN.sql in --query-dir (default: the repository's sql/tests/tpch/mysql beside this script).
--
-- Usage (Orcinus on 3306, SF 0.01 loaded into `tpch`):
--   sysbench sysbench-lua/tpch.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306 \
--     --mysql-user=root --mysql-db=tpch --threads=1 --events=44 --time=0 run
--
-- Invariants: a query error aborts the run (sysbench's default for fatal SQL errors), so a
-- latency table is only printed for answers that came back; every latency is measured around
-- the query and the full fetch of its rows, with CLOCK_MONOTONIC. Threads keep their own
-- samples (sysbench gives each its own Lua state) and hand them to the report through one file
-- per thread under --stats-dir, which the report reads and removes.

local ffi = require("ffi")

sysbench.cmdline.options = {
   query_dir = {"Directory holding q01.sql .. q22.sql (default: <repo>/sql/tests/tpch/mysql)", ""},
   query = {"Run only query N (1-22); 0 = round robin over --queries", 0},
   queries = {"Comma-separated query numbers for the round robin", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22"},
   stats_dir = {"Directory for the per-thread latency files merged by the report", "/tmp"},
}

pcall(ffi.cdef, [[
typedef struct { long tv_sec; long tv_nsec; } tpch_timespec;
int clock_gettime(int clk_id, tpch_timespec *tp);
]])
local CLOCK_MONOTONIC = 1
local ts = ffi.new("tpch_timespec")

local function now_ms()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
   return tonumber(ts.tv_sec) * 1000.0 + tonumber(ts.tv_nsec) / 1e6
end

local function script_dir()
   local src = debug.getinfo(1, "S").source
   local path = src:sub(1, 1) == "@" and src:sub(2) or src
   return path:match("^(.*)/[^/]*$") or "."
end

local function query_dir()
   if sysbench.opt.query_dir ~= "" then
      return sysbench.opt.query_dir
   end
   return script_dir() .. "/../sql/tests/tpch/mysql"
end

-- The query text without `--` comment lines and the trailing semicolon.
local function read_query(n)
   local path = string.format("%s/q%02d.sql", query_dir(), n)
   local f, err = io.open(path, "r")
   if not f then
      error("cannot read TPC-H query " .. n .. ": " .. tostring(err))
   end
   local lines = {}
   for line in f:lines() do
      if not line:match("^%s*%-%-") then
         lines[#lines + 1] = line
      end
   end
   f:close()
   local text = table.concat(lines, "\n"):gsub("%s*;%s*$", "")
   if text:match("^%s*$") then
      error("query file " .. path .. " is empty")
   end
   return text
end

local function selected_queries()
   if sysbench.opt.query ~= 0 then
      local n = sysbench.opt.query
      if n < 1 or n > 22 then
         error("--query must be between 1 and 22, got " .. n)
      end
      return {n}
   end
   local list = {}
   for item in string.gmatch(sysbench.opt.queries, "[^,%s]+") do
      local n = tonumber(item)
      if not n or n < 1 or n > 22 or n ~= math.floor(n) then
         error("--queries: not a query number 1-22: " .. item)
      end
      list[#list + 1] = n
   end
   if #list == 0 then
      error("--queries is empty")
   end
   return list
end

local function stats_path(tid)
   return string.format("%s/sysbench-tpch.%d.stats", sysbench.opt.stats_dir, tid)
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   order = selected_queries()
   texts = {}
   for _, n in ipairs(order) do
      texts[n] = read_query(n)
   end
   samples = {}
   -- Threads start at different positions so concurrent runs mix the queries.
   next_index = sysbench.tid % #order
end

function event()
   local n = order[next_index + 1]
   next_index = (next_index + 1) % #order
   local started = now_ms()
   local rs = con:query(texts[n])
   if rs ~= nil and rs.nrows ~= nil then
      for _ = 1, rs.nrows do
         rs:fetch_row()
      end
      rs:free()
   end
   local list = samples[n]
   if list == nil then
      list = {}
      samples[n] = list
   end
   list[#list + 1] = now_ms() - started
end

function thread_done()
   local f = assert(io.open(stats_path(sysbench.tid), "w"))
   for n, list in pairs(samples) do
      for _, ms in ipairs(list) do
         f:write(string.format("%d %.3f\n", n, ms))
      end
   end
   f:close()
   con:disconnect()
end

-- Merges the per-thread files and prints the table (count, mean, p95, max per query).
local function print_latencies()
   local all = {}
   for tid = 0, sysbench.opt.threads - 1 do
      local path = stats_path(tid)
      local f = io.open(path, "r")
      if f then
         for line in f:lines() do
            local n, ms = line:match("^(%d+) ([%d.]+)$")
            if n then
               n = tonumber(n)
               all[n] = all[n] or {}
               table.insert(all[n], tonumber(ms))
            end
         end
         f:close()
         os.remove(path)
      end
   end
   print("TPC-H query latency (ms):")
   print(string.format("%6s %7s %11s %11s %11s", "query", "count", "mean", "p95", "max"))
   local total_count, total_ms = 0, 0
   for n = 1, 22 do
      local list = all[n]
      if list and #list > 0 then
         table.sort(list)
         local sum = 0
         for _, ms in ipairs(list) do
            sum = sum + ms
         end
         local p95 = list[math.max(1, math.ceil(0.95 * #list))]
         print(string.format("%6s %7d %11.2f %11.2f %11.2f", string.format("Q%02d", n), #list,
            sum / #list, p95, list[#list]))
         total_count = total_count + #list
         total_ms = total_ms + sum
      end
   end
   print(string.format("%6s %7d %11.2f", "all", total_count,
      total_count > 0 and total_ms / total_count or 0))
   print()
end

function sysbench.hooks.report_cumulative(stat)
   print_latencies()
   sysbench.report_default(stat)
end
