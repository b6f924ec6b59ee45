#!/usr/bin/env bash
# Scenario 11 in rounds of fresh processes (issue 61), of a 1 GiB file from nginx on 127.0.0.1:
# a bare URLSession download task; the same with a delegate that hears its progress (as any
# client that reports progress must); a bare data task whose delegate writes each chunk as it
# comes; and the scheduler's download at .low with 20 .high GETs beside it. ROUNDS times (6 by
# default), each in another order. Prints each round: MB/s of each, the scheduler's ratio to
# each, each process's peak resident memory (VmHWM), and the GETs' median/slowest. Files (the
# served one, the saved ones, the download task's temporary one) live on tmpfs when there is
# one.
#
#     bash Benchmarks/scripts/download-pairs.sh [ROUNDS] [BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-6}
bytes=${2:-1073741824}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed: apt-get install nginx"; exit 1; }

swift build -c release --product DownloadProbe >/dev/null
probe=$(swift build -c release --product DownloadProbe --show-bin-path)/DownloadProbe

# On tmpfs where there is one: the disk's writeback of one run's gigabyte would slow the next
# run, whichever client it is, and the figures would say more of the disk than of the client.
root=/tmp; [ -d /dev/shm ] && root=/dev/shm
work=$(mktemp -d -p "$root")
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/files" "$work/tmp"
head -c "$bytes" /dev/urandom > "$work/files/served.bin"
# Written back now, not during the first download.
sync
echo '[{"id":2,"name":"Grace"},{"id":3,"name":"Alan"}]' > "$work/files/friends.json"
chmod 644 "$work/files/"*
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $work/nginx.pid;
error_log stderr error;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    server {
        listen 127.0.0.1:$port;
        location /files/ { root $work; default_type application/octet-stream; }
    }
}
CONF
"$nginx" -p "$work" -c "$work/nginx.conf"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/files/friends.json" >/dev/null && break; sleep 0.1; done

run() { TMPDIR="$work/tmp" "$probe" "$1" "http://127.0.0.1:$port" files/served.bin files/friends.json "$work/saved.bin" "$bytes"; }
echo "round | MB/s: download task, with progress, data task, scheduler | scheduler ÷ each | peak MB: same order | GETs median / slowest ms"
clients=(raw progress datatask scheduler)
for round in $(seq "$pairs"); do
    declare -A line=()
    for i in 0 1 2 3; do
        client=${clients[$(( (i + round) % 4 ))]}
        line[$client]=$(run "$client")
    done
    read -r _ raw_rate raw_peak <<<"${line[raw]}"
    read -r _ progress_rate progress_peak <<<"${line[progress]}"
    read -r _ data_rate data_peak <<<"${line[datatask]}"
    read -r _ sched_rate sched_peak get_median get_slowest <<<"${line[scheduler]}"
    ratios=$(python3 -c "print(', '.join(f'{$sched_rate / r:.2f}x' for r in ($raw_rate, $progress_rate, $data_rate)))")
    echo "$round | $raw_rate, $progress_rate, $data_rate, $sched_rate | $ratios | $raw_peak, $progress_peak, $data_peak, $sched_peak | $get_median / $get_slowest"
done
