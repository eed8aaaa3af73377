-- wrk script for ops/bench's read row: every request is the first read of a distinct notification
-- by its own device. The data file has one line per notification, "<path> <device credential>";
-- wrk's threads take every n-th line, so no two requests read the same notification unless the
-- file runs out (then reads start over: `done` reports how many requests were repeats).
-- Usage: wrk -t T -c C -d D -s read.lua URL -- DATA_FILE T
local thread_count = 0
local threads = {}

function setup(thread)
    thread:set("thread_index", thread_count)
    thread_count = thread_count + 1
    table.insert(threads, thread)
end

local entries = {}
issued = 0
entry_count = 0

function init(args)
    local file, stride = args[1], tonumber(args[2])
    local line_number = 0
    for line in io.lines(file) do
        if line_number % stride == thread_index then
            local path, credential = line:match("^(%S+) (%S+)$")
            table.insert(entries, { path = path, headers = { ["Authorization"] = "Bearer " .. credential } })
        end
        line_number = line_number + 1
    end
    entry_count = #entries
end

function request()
    local entry = entries[issued % entry_count + 1]
    issued = issued + 1
    return wrk.format("GET", entry.path, entry.headers)
end

function done(summary, latency, requests)
    local repeated = 0
    for _, thread in ipairs(threads) do
        repeated = repeated + math.max(0, thread:get("issued") - thread:get("entry_count"))
    end
    io.write(string.format(
        "read requests=%d seconds=%.3f requests_per_s=%.0f p50_ms=%.2f p99_ms=%.2f non_2xx=%d socket_errors=%d repeated_reads=%d\n",
        summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, repeated))
end
