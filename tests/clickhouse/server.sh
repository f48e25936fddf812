#!/usr/bin/env bash
# Start a private clickhouse-server for the tests and benches:
#   . tests/clickhouse/server.sh; ch_start DIR   -> sets CH_URL, CH_PID
#   ch_stop                                       (also from a trap)
# Its own config.xml/users.xml in DIR, data/tmp/log paths inside DIR,
# listening on 127.0.0.1 only, on free ports. Never a system service.

ch_free_port() {
	python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# ch_post URL [BODY]: POST BODY (GET without), answer on stdout; fails on a
# status other than 200 (curl when installed, else python3).
ch_post() {
	if command -v curl >/dev/null; then
		if [ $# -gt 1 ]; then
			curl -fsS "$1" --data-binary "$2"
		else
			curl -fsS "$1"
		fi
		return
	fi
	python3 - "$@" <<'PY'
import sys, urllib.request
data = sys.argv[2].encode() if len(sys.argv) > 2 else None
try:
    with urllib.request.urlopen(sys.argv[1], data=data, timeout=600) as r:
        sys.stdout.buffer.write(r.read())
except Exception as e:
    sys.stderr.write("%s: %s\n" % (sys.argv[1], e))
    sys.exit(22)
PY
}

ch_start() {
	local dir=$1 http tcp i
	mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" \
		"$dir/format_schemas"
	http=$(ch_free_port)
	tcp=$(ch_free_port)
	while [ "$tcp" = "$http" ]; do tcp=$(ch_free_port); done
	cat > "$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/server.log</log>
        <errorlog>$dir/log/error.log</errorlog>
        <size>10M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <max_connections>64</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>16</max_concurrent_queries>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>0</builtin_dictionaries_reload_interval>
</yandex>
XML
	cat > "$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <max_threads>2</max_threads>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default></default></quotas>
</yandex>
XML
	clickhouse-server --config-file="$dir/config.xml" \
		>"$dir/log/stdout.log" 2>&1 &
	CH_PID=$!
	CH_URL="http://127.0.0.1:$http"
	CH_DIR=$dir
	for i in $(seq 1 600); do
		if ch_post "$CH_URL/ping" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$CH_PID" 2>/dev/null; then
			echo "clickhouse-server exited; log:" >&2
			tail -n 30 "$dir/log/stdout.log" "$dir/log/error.log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "clickhouse-server did not answer /ping within 60 s" >&2
	return 1
}

ch_stop() {
	if [ -n "${CH_PID:-}" ] && kill -0 "$CH_PID" 2>/dev/null; then
		kill "$CH_PID" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$CH_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$CH_PID" 2>/dev/null
		wait "$CH_PID" 2>/dev/null
	fi
	CH_PID=
}
